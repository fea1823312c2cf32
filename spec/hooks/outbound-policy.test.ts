import { createOutboundPolicy } from '../../lib/outbound-addresses.js';
import { nextRetryDelay } from '../../hooks/schedule.js';
import { retryAfterMs } from '../../hooks/send.js';

describe('the outbound address policy', () => {
  const closed = createOutboundPolicy();

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    'ff02::1',
  ])('refuses %s by default', (address) => {
    expect(() => closed.check('receiver.example', address)).toThrow(/private, loopback or reserved/);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (address) => {
    expect(() => closed.check('receiver.example', address)).not.toThrow();
  });

  it('allows listed host names whatever they resolve to, and listed addresses and ranges', () => {
    const open = createOutboundPolicy(['hooks.internal', '10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
    expect(() => open.check('HOOKS.internal.', '192.168.1.1')).not.toThrow();
    expect(() => open.check('other.internal', '10.9.8.7')).not.toThrow();
    expect(() => open.check('other.internal', '127.0.0.1')).not.toThrow();
    expect(() => open.check('other.internal', '127.0.0.2')).toThrow();
    expect(() => open.check('other.internal', 'fd00::5')).not.toThrow();
    expect(() => open.check('other.internal', '192.168.1.1')).toThrow();
  });

  it('refuses a name if any of its addresses is refused', async () => {
    // `localhost` resolves to loopback only; the lookup refuses it before any connection.
    const result = await new Promise<Error | null>((resolve) => {
      closed.lookup('localhost', { all: true }, (error) => resolve(error));
    });
    // The refusal does not tell what the name resolved to.
    expect(result?.message).toBe('localhost resolves to a private, loopback or reserved address');
  });
});

describe('the retry schedule', () => {
  const plan = { schedule: [0, 5, 300], random: () => 0.5 };

  it('waits as the schedule says, spread by at most a fifth either way', () => {
    expect(nextRetryDelay(plan, 1)).toBe(5000);
    expect(nextRetryDelay({ ...plan, random: () => 0 }, 2)).toBe(240_000);
    expect(nextRetryDelay({ ...plan, random: () => 1 }, 2)).toBe(360_000);
    expect(nextRetryDelay(plan, 3)).toBeUndefined();
  });

  it('never retries earlier than Retry-After asked, up to a day', () => {
    expect(nextRetryDelay(plan, 1, 60_000)).toBe(60_000);
    expect(nextRetryDelay(plan, 1, 1000)).toBe(5000);
    expect(nextRetryDelay(plan, 1, 10 * 24 * 3600_000)).toBe(24 * 3600_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('120')).toBe(120_000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT'))).toBe(60_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
  });
});
