import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TestBrowser } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';

/**
 * A port free now, so that both lives of the server have the same issuer. Taken below the kernel's
 * ephemeral range (32768 and up), where no other suite's server (port 0) can be given it between the
 * two lives.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
}

/** Polls `check` until it holds (every 50 ms, up to 30 s). */
async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** When the data directory's newest snapshot was written (its header), or undefined before the first. */
/** When the current snapshot's reading began: it holds every write answered before then. */
async function snapshotTakenAt(dir: string): Promise<number | undefined> {
  const text = await readFile(join(dir, 'store.snapshot'), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : Date.parse((JSON.parse(text.slice(0, text.indexOf('\n'))) as { takenAt: string }).takenAt);
}

/**
 * `npm start` without MONGODB_URI keeps the embedded engine's data in DATA_DIR: a stop and a start
 * give everything back (the Management API client printed at first start included); a crash loses at
 * most the snapshot interval; a damaged file falls back to the one before, loudly.
 */
describe('the embedded engine kept in a data directory (DATA_DIR)', () => {
  let dir: string;
  let port: number;
  let server: ServerProcess | undefined;
  const start = (env: Record<string, string> = {}) =>
    spawnServer('unused', {
      MONGODB_URI: undefined,
      DATA_DIR: dir,
      DATA_SNAPSHOT_MS: '300',
      PORT: String(port),
      BASE_URL: `http://localhost:${port}`,
      HOOKS_ALLOWED_HOSTS: '127.0.0.1',
      ...env,
    });
  let credentials: { id: string; secret: string };
  const token = async (on: ServerProcess) => {
    const issued = await clientCredentials(on, credentials.id, credentials.secret, `${on.local}/api`);
    expect(issued.status).toBe(200);
    return issued.body.access_token!;
  };
  const made: { userId?: string; roleId?: string; applicationId?: string; hookId?: string; jwks?: unknown } = {};
  const browser = () => new TestBrowser(`http://localhost:${port}`);
  let signedIn: TestBrowser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oidc-identity-data-'));
    port = await freePort();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('gives back every application, user, role, key, hook, session and undelivered event after SIGTERM, and the first start’s client still works', async () => {
    server = await start();
    expect(server.output()).toContain(`its data kept in ${dir}`);
    // Printed on the terminal right after the line that says the server listens.
    const credentialsIn = (output: string) => /client id\s+(\S+)\n\s+client secret\s+(\S+)\n/.exec(output);
    await waitFor(async () => credentialsIn(server!.output()) !== null, 'the first start’s credentials');
    const printed = credentialsIn(server.output());
    expect(printed).not.toBeNull();
    credentials = { id: printed![1]!, secret: printed![2]! };
    const bearer = await token(server);
    const api = (method: string, path: string, body?: unknown) => callApi(server!, bearer, method, path, body);

    made.hookId = (await api('POST', '/api/hooks', { name: 'down', events: ['User.Created'], config: { url: 'http://127.0.0.1:9/hooks' } })).body.id;
    made.roleId = (await api('POST', '/api/roles', { name: 'Clerk' })).body.id;
    made.userId = (await api('POST', '/api/users', { username: 'ada', password: 'a long passphrase of hers' })).body.id;
    expect((await api('POST', `/api/users/${made.userId}/roles`, { roleIds: [made.roleId] })).status).toBeLessThan(300);
    const application = await api('POST', '/api/applications', {
      name: 'Shop',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['http://localhost:8080/callback'], postLogoutRedirectUris: [] },
    });
    made.applicationId = application.body.id;
    made.jwks = await (await fetch(`${server.local}/oidc/jwks`)).json();
    signedIn = browser();
    const flow = await codeFlow(signedIn, {
      clientId: made.applicationId!,
      redirectUri: 'http://localhost:8080/callback',
      scope: 'openid',
      identifier: 'ada',
      password: 'a long passphrase of hers',
    });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
    // The hook's endpoint refuses connections: its User.Created delivery waits for a retry.
    await waitFor(async () => (await api('GET', `/api/hooks/${made.hookId}/deliveries`)).body.length === 1, 'the delivery');

    expect(await server.stop('SIGTERM')).toBe(0);
    // Keys, the sealing key and password hashes are in there: nobody but the server's user may read them.
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'store.snapshot'))).mode & 0o777).toBe(0o600);
    server = await start();
    expect(server.output()).toContain('restored the data directory');
    expect(server.output()).not.toContain('Created a machine-to-machine application');
    const again = await token(server);
    const read = (path: string) => callApi(server!, again, 'GET', path);
    expect((await read(`/api/users/${made.userId}`)).body).toMatchObject({ username: 'ada' });
    expect((await read(`/api/users/${made.userId}/roles`)).body).toEqual([expect.objectContaining({ id: made.roleId })]);
    expect((await read(`/api/applications/${made.applicationId}`)).status).toBe(200);
    expect((await read(`/api/hooks/${made.hookId}/deliveries`)).body).toEqual([expect.objectContaining({ event: 'User.Created' })]);
    expect(await (await fetch(`${server.local}/oidc/jwks`)).json()).toEqual(made.jwks);
    // The browser's session: prompt=none answers a code without a page.
    const silent = new URL(`${server.local}/oidc/auth`);
    silent.search = new URLSearchParams({
      client_id: made.applicationId!,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://localhost:8080/callback',
      prompt: 'none',
      state: 's',
    }).toString();
    const { url } = await signedIn.follow(silent, 'http://localhost:8080/callback');
    expect(url.searchParams.get('code')).toBeTruthy();
  });

  it('loses at most the snapshot interval to SIGKILL, and takes over the lock the killed process left', async () => {
    const bearer = await token(server!);
    const grace = await callApi(server!, bearer, 'POST', '/api/users', { username: 'grace' });
    expect(grace.status).toBe(200);
    // A snapshot whose reading began after the write was answered (one that ended after it may have begun before).
    const answeredAt = Date.now();
    await waitFor(async () => ((await snapshotTakenAt(dir)) ?? 0) > answeredAt, 'a snapshot after the write');
    expect(await server!.stop('SIGKILL')).toBeNull();
    server = await start();
    const again = await token(server);
    expect((await callApi(server, again, 'GET', `/api/users/${grace.body.id}`)).body).toMatchObject({ username: 'grace' });
  });

  it('refuses a second server on the same directory while the first runs', async () => {
    await expect(start()).rejects.toThrow(/DATA_DIR .* is in use by process \d+/);
  });

  it('falls back to the snapshot before a damaged one, and says so', async () => {
    expect(await server!.stop('SIGTERM')).toBe(0);
    const { size } = await stat(join(dir, 'store.snapshot'));
    await truncate(join(dir, 'store.snapshot'), Math.floor(size / 2));
    server = await start();
    expect(server.output()).toContain('DATA FILE UNUSABLE');
    expect(server.output()).toContain('restored the previous snapshot');
    const bearer = await token(server);
    expect((await callApi(server, bearer, 'GET', `/api/users/${made.userId}`)).body).toMatchObject({ username: 'ada' });
  });

  it('stops at start with a clear message when DATA_DIR cannot be written', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    await expect(start({ DATA_DIR: join(file, 'data') })).rejects.toThrow(/startup failed: DATA_DIR .*a-file\/data cannot be used/);
  });
});
