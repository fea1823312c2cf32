import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';
import { uniqueDbName } from '../support/env.js';

const baseUrl = 'http://id.test.local';
const managementApi = `${baseUrl}/api`;
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };

async function adminToken(server: ServerProcess) {
  const { status, body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, managementApi);
  expect(status).toBe(200);
  return body.access_token!;
}

async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('several server processes on one database', () => {
  const started: ServerProcess[] = [];
  const start = async (dbName: string, env: Record<string, string> = {}) => {
    const server = await spawnServer(dbName, { BASE_URL: baseUrl, ...env });
    started.push(server);
    return server;
  };
  afterAll(async () => {
    await Promise.all(started.map((server) => server.stop('SIGKILL')));
  });

  it('agree on signing keys and create one bootstrap application when started together on an empty database', async () => {
    const dbName = uniqueDbName('race');
    const [a, b] = await Promise.all([start(dbName), start(dbName)]);
    const [jwksA, jwksB] = await Promise.all([a, b].map(async (server) => (await fetch(`${server.local}/oidc/jwks`)).json()));
    expect(jwksA).toEqual(jwksB);
    const printed = [a, b].filter((server) => server.output().includes('client secret'));
    expect(printed).toHaveLength(1);
  });

  it("accept each other's tokens, and see each other's applications", async () => {
    const dbName = uniqueDbName('shared');
    const a = await start(dbName, admin);
    const b = await start(dbName, admin);
    const tokenFromA = await adminToken(a);
    const tokenFromB = await adminToken(b);
    expect((await callApi(b, tokenFromA, 'GET', '/api/applications')).status).toBe(200);
    expect((await callApi(a, tokenFromB, 'GET', '/api/applications')).status).toBe(200);

    const { body: app } = await callApi(a, tokenFromA, 'POST', '/api/applications', { name: 'shared', type: 'MachineToMachine' });
    expect((await clientCredentials(b, app.id, app.secret, managementApi)).status).toBe(200);

    // B has the client cached now; deleting it on A reaches B within its refresh interval.
    expect((await callApi(a, tokenFromA, 'DELETE', `/api/applications/${app.id}`)).status).toBe(204);
    const afterDelete = await eventually(
      () => clientCredentials(b, app.id, app.secret, managementApi),
      ({ status }) => status === 401,
    );
    expect(afterDelete.status).toBe(401);
  });

  it('keep keys and clients across a restart, and close cleanly on SIGTERM', async () => {
    const dbName = uniqueDbName('restart');
    const first = await start(dbName, admin);
    const token = await adminToken(first);
    const { body: app } = await callApi(first, token, 'POST', '/api/applications', { name: 'survivor', type: 'MachineToMachine' });
    const jwksBefore = await (await fetch(`${first.local}/oidc/jwks`)).json();
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('SIGTERM received, closing');

    const second = await start(dbName, admin);
    expect(await (await fetch(`${second.local}/oidc/jwks`)).json()).toEqual(jwksBefore);
    expect((await callApi(second, token, 'GET', `/api/applications/${app.id}`)).body.name).toBe('survivor');
    expect((await clientCredentials(second, app.id, app.secret, managementApi)).status).toBe(200);
  });
});
