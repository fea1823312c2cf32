import { request, Agent } from 'node:http';

import { openDatabase } from '../../lib/store/database.js';
import { uniqueDbName, uriForDb } from '../support/env.js';
import { clientCredentials, spawnServer } from '../support/process.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };
const password = 'correct horse battery staple';

/** One request over `agent`: its status, or the error that ended it (a reset connection). */
function send(agent: Agent, port: number, method: string, path: string, token: string, body?: unknown) {
  return new Promise<{ status?: number; error?: string }>((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { authorization: `Bearer ${token}`, ...(payload && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode }));
        res.on('error', (error) => resolve({ error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(payload);
  });
}

describe('stopping a server (SIGTERM)', () => {
  it('answers every request it had taken before it closes, each write committed as answered, and exits 0', async () => {
    const dbName = uniqueDbName('shutdown');
    const server = await spawnServer(dbName, { BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' });
    const database = await openDatabase(uriForDb(dbName));
    try {
      const { body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
      const token = body.access_token!;
      // Twenty connections, open before the stop, so that each write below is taken by the server
      // (a stopping server accepts no new connection).
      const agent = new Agent({ keepAlive: true, maxSockets: 20 });
      const opened = await Promise.all(Array.from({ length: 20 }, () => send(agent, server.port, 'GET', '/api/users', token)));
      expect(opened.map(({ status }) => status)).toEqual(Array(20).fill(200));

      // Twenty user creations, each hashing its password (tens of milliseconds of CPU each, so
      // that all are in flight at once); the stop comes as soon as the first has committed.
      const writes = Array.from({ length: 20 }, (_, i) => send(agent, server.port, 'POST', '/api/users', token, { username: `leaving_${i}`, password }));
      const users = database.db.collection('users');
      const deadline = Date.now() + 30_000;
      while ((await users.countDocuments({ username: /^leaving_/ })) === 0) {
        if (Date.now() > deadline) throw new Error(`no write committed within 30 s:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const exited = server.stop('SIGTERM');
      const answers = await Promise.all(writes);
      agent.destroy();

      // Every request was answered (none reset), and every one answered 200 committed its user.
      expect(answers.filter(({ error }) => error)).toEqual([]);
      expect(answers.map(({ status }) => status)).toEqual(Array(20).fill(200));
      expect(await exited).toBe(0);
      expect(await users.countDocuments({ username: /^leaving_/ })).toBe(20);
      expect(server.output()).toContain('SIGTERM received, closing');
    } finally {
      await server.stop('SIGKILL');
      await database.close();
    }
  });
});

describe('a server started by a parent with an IPC channel', () => {
  it('exits when its parent is killed outright (SIGKILL), as a test run or supervisor that dies must not leave it behind', async () => {
    const { spawn } = await import('node:child_process');
    // A parent that starts the server as the test support does, says its pid, and waits to be killed.
    const parentScript = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ['dist/server.js'], {
        env: { ...process.env, MONGODB_URI: ${JSON.stringify(uriForDb(uniqueDbName('orphan')))}, DATA_DIR: '', PORT: '0' },
        stdio: ['ignore', 'pipe', 'ignore', 'ipc'],
      });
      child.stdout.on('data', (chunk) => { if (String(chunk).includes('oidc-identity listening')) console.log('child ' + child.pid); });
    `;
    const parent = spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((resolve) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /child (\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
    });
    parent.kill('SIGKILL');
    // Gone, or a zombie waiting for whichever process adopted it to reap it (a container's init may not).
    const { readFileSync } = await import('node:fs');
    const alive = () => {
      try {
        return readFileSync(`/proc/${childPid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    };
    while (alive()) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toBe(false);
  });
});
