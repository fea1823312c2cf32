import { changeEvents, recordedChange, recordedChanges, type ChangeKey } from '../../hooks/catalog.js';
import type { Write } from '../../lib/store/unit-of-work.js';
import { staleCaches } from '../../provider/stale-caches.js';

/** The write path's vocabulary: the changes the service records, and the tables keyed by them. */
describe('the change vocabulary', () => {
  it('refuses, when the code is type-checked (`npm test` runs the checker), a recorded change that is not in it', () => {
    const recorded: unknown[] = [];
    const write: Write<ChangeKey> = {
      intend: async () => undefined,
      record: (change) => {
        recorded.push(change);
      },
    };
    write.record({ entity: 'User', action: 'created', id: 'u1', data: {} });
    // @ts-expect-error -- a misspelt action is not a recorded change
    write.record({ entity: 'User', action: 'craeted', id: 'u1', data: {} });
    // @ts-expect-error -- nor is an action of another entity
    write.record({ entity: 'Hook', action: 'roles.updated', id: 'h1', data: {} });
    expect(recorded).toHaveLength(3);
  });

  it('refuses, when the server starts, a relation whose change is not in it', () => {
    expect(recordedChange('User', 'roles.updated')).toEqual({ entity: 'User', action: 'roles.updated' });
    expect(() => recordedChange('User', 'rolez.updated')).toThrow(/`User.rolez.updated` is not a recorded change/);
  });

  it('keys the event and stale-cache tables by recorded changes only', () => {
    for (const key of [...Object.keys(changeEvents), ...Object.keys(staleCaches)]) expect(recordedChanges).toContain(key);
  });
});
