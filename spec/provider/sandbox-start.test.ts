import { Sandbox, SandboxError } from '../../provider/sandbox/index.js';

const script = 'function getCustomJwtClaims({ token }) { return { seen: token.sub }; }';

/**
 * A claims script's time limit is its own: a new worker thread's start-up (slow on a busy machine,
 * where a first exchange after a start was refused as a timeout) is not counted against it.
 */
describe('the claims sandbox', () => {
  it('counts a run’s time from when its worker is ready, not from the call', async () => {
    const sandbox = new Sandbox({ timeoutMs: 1000 });
    try {
      const run = sandbox.run(script, { token: { sub: 'u1' } });
      // The main thread busy past the limit, as on a loaded machine, while the worker starts.
      const until = Date.now() + 1500;
      while (Date.now() < until);
      await expect(run).resolves.toEqual({ seen: 'u1' });
    } finally {
      await sandbox.close();
    }
  });

  it('still ends a script that outlasts its limit, and starts a fresh worker for the next run', async () => {
    const sandbox = new Sandbox({ timeoutMs: 200 });
    try {
      const endless = sandbox.run('async function getCustomJwtClaims() { await new Promise(() => {}); }', {});
      await expect(endless).rejects.toEqual(new SandboxError('timeout', 'the script did not finish within 200 ms'));
      await expect(sandbox.run(script, { token: { sub: 'u2' } })).resolves.toEqual({ seen: 'u2' });
    } finally {
      await sandbox.close();
    }
  });
});
