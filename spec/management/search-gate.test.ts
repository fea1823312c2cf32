import { ApiError } from '../../lib/errors.js';
import { createSearchGate, parseSearch } from '../../lib/http/search.js';

const search = (query: string) => parseSearch(new URLSearchParams(query), ['name']);

/**
 * The outside attack's tenth finding: a burst of slow pattern searches left the users collection
 * answering 503 for minutes. Searches by a pattern the caller writes run a few at a time per
 * process; one more is refused at once (429) rather than queued behind them.
 */
describe('searches by a written pattern, a few at a time (lib/http/search.ts)', () => {
  it('refuses a third written-pattern search while two run (429, Retry-After 1), and takes one again once one is done', async () => {
    const searching = createSearchGate(2);
    const releases: Array<() => void> = [];
    const held = () => new Promise<string>((resolve) => releases.push(() => resolve('done')));
    const posix = search('search.name=^a&mode=posix');
    const first = searching(posix, held);
    const second = searching(posix, held);
    const third = searching(posix, held).catch((error: unknown) => error);
    const refused = (await third) as ApiError;
    expect(refused).toBeInstanceOf(ApiError);
    expect({ status: refused.status, code: refused.code, data: refused.data }).toEqual({
      status: 429,
      code: 'request.too_many_requests',
      data: { retryAfter: 1 },
    });
    // Searches without a written pattern are not held back by them.
    expect(await searching(search('search.name=a%25'), async () => 'like')).toBe('like');
    expect(await searching(undefined, async () => 'no search')).toBe('no search');
    releases[0]!();
    expect(await first).toBe('done');
    const fourth = searching(posix, held);
    releases[1]!();
    releases[2]!();
    expect(await Promise.all([second, fourth])).toEqual(['done', 'done']);
  });

  it('gives each query the time limit a real MongoDB keeps (maxTimeMS)', async () => {
    const searching = createSearchGate();
    expect(await searching(search('search.name=^a&mode=posix'), async (limits) => limits)).toEqual({ maxTimeMS: 2000 });
  });
});
