import type { ClientSession } from 'mongodb';

import { createBatch } from '../../lib/store/batch.js';
import { currentSession, withSession } from '../../lib/store/session.js';

/** A run that the test finishes by hand, recording the keys of each command. */
function controlledRun() {
  const commands: string[][] = [];
  const finish: Array<(results: Array<string | Error>) => void> = [];
  const fail: Array<(error: Error) => void> = [];
  const run = (keys: string[]) =>
    new Promise<Array<string | Error>>((resolve, reject) => {
      commands.push(keys);
      finish.push(resolve);
      fail.push(reject);
    });
  return { run, commands, finish, fail };
}

/** A few turns of the event loop: what the batch scheduled after its last command has gone out. */
const turn = async () => {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('group commit (lib/batch.ts)', () => {
  it('sends calls made together as one command and answers each its own result', async () => {
    const { run, commands, finish } = controlledRun();
    const call = createBatch(run);
    const answers = Promise.all(['a', 'b', 'c'].map(call));
    await turn();
    expect(commands).toEqual([['a', 'b', 'c']]);
    finish[0]!(['A', 'B', 'C']);
    expect(await answers).toEqual(['A', 'B', 'C']);
  });

  it('fails only the call whose result is an Error, and every call of a command that fails', async () => {
    const { run, finish, fail } = controlledRun();
    const call = createBatch(run);
    const first = ['a', 'b'].map((key) =>
      call(key).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    await turn();
    finish[0]!(['A', new Error('b refused')]);
    expect(await Promise.all(first)).toEqual([{ value: 'A' }, { error: 'b refused' }]);

    const second = ['c', 'd'].map((key) => call(key).catch((error: Error) => error.message));
    await turn();
    fail[1]!(new Error('connection lost'));
    expect(await Promise.all(second)).toEqual(['connection lost', 'connection lost']);
  });

  it('keeps at most maxInFlight commands on their way; calls made meanwhile wait and go together', async () => {
    const { run, commands, finish } = controlledRun();
    const call = createBatch(run, { maxInFlight: 1 });
    const first = call('a');
    await turn();
    const waiting = ['b', 'c', 'd'].map(call);
    await turn();
    expect(commands).toEqual([['a']]);
    finish[0]!(['A']);
    await first;
    await turn();
    expect(commands).toEqual([['a'], ['b', 'c', 'd']]);
    finish[1]!(['B', 'C', 'D']);
    expect(await Promise.all(waiting)).toEqual(['B', 'C', 'D']);
  });

  it('splits a queue longer than maxBatch', async () => {
    const { run, commands, finish } = controlledRun();
    const call = createBatch(run, { maxInFlight: 1, maxBatch: 2 });
    const answers = Promise.all(['a', 'b', 'c'].map(call));
    await turn();
    finish[0]!(['A', 'B']);
    await turn();
    finish[1]!(['C']);
    expect(await answers).toEqual(['A', 'B', 'C']);
    expect(commands).toEqual([['a', 'b'], ['c']]);
  });

  describe('and the unit of work', () => {
    /** A stand-in for a unit's session: the batch only carries it, never calls it. */
    const session = { id: 'unit' } as unknown as ClientSession;

    it("sends a call made inside a unit alone, with the unit's session, so that it joins the unit's transaction", async () => {
      const commands: Array<{ keys: string[]; session: ClientSession | undefined }> = [];
      const call = createBatch(async (keys: string[]) => {
        commands.push({ keys, session: currentSession() });
        return keys.map((key) => (key === 'bad' ? new Error('refused') : key.toUpperCase()));
      });
      const outside = call('b');
      const inside = withSession(session, () => call('a'));
      expect(await Promise.all([inside, outside])).toEqual(['A', 'B']);
      await expect(withSession(session, () => call('bad'))).rejects.toThrow('refused');
      expect(commands).toEqual([
        { keys: ['a'], session },
        { keys: ['b'], session: undefined },
        { keys: ['bad'], session },
      ]);
    });
  });
});
