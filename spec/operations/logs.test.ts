import { uniqueDbName } from '../support/env.js';
import { hookTestEnv } from '../support/hooks.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const baseUrl = 'http://id.logs.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'logs-test-secret-0123456789' };

/**
 * The standalone server's structured logs: JSON lines, one access line per request (never its
 * query string, a token or a secret), and a request id carried from the request through its write
 * to the webhook delivery it announced.
 */
describe('structured logs', () => {
  let server: ServerProcess;
  let receiver: Receiver;
  afterAll(async () => {
    await server?.stop('SIGTERM');
    await receiver?.close();
  });

  it('writes an access line per request and follows one request id to its webhook delivery', async () => {
    receiver = await startReceiver();
    server = await spawnServer(uniqueDbName('logs'), { BASE_URL: baseUrl, ...admin, ...hookTestEnv, LOG_LEVEL: 'debug' });
    const { body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const token = body.access_token!;
    const hook = await callApi(server, token, 'POST', '/api/hooks', { name: 'logged', events: ['Role.Created'], config: { url: receiver.url } });
    receiver.keys.push(hook.body.signingKey);

    const response = await fetch(`${server.local}/api/roles?note=secret-in-query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'req-abc-123' },
      body: JSON.stringify({ name: 'logged role' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-abc-123');
    // An id that is not a plain token is replaced.
    const odd = await fetch(`${server.local}/api/status`, { headers: { 'x-request-id': 'two words' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[a-z0-9]{21}$/);
    await receiver.waitFor((got) => got.some(({ body: sent }) => sent.data?.name === 'logged role'));

    const lines = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const deadline = Date.now() + 60_000;
    while (!lines().some((line) => line.msg === 'webhook delivered' && line.requestId === 'req-abc-123') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const all = lines();
    expect(all.find((line) => line.msg === 'request' && line.path === '/api/roles' && line.method === 'POST')).toMatchObject({
      level: 30,
      route: '/api/roles',
      status: 200,
      durationMs: expect.any(Number),
      clientId: admin.BOOTSTRAP_CLIENT_ID,
      requestId: 'req-abc-123',
    });
    expect(all.find((line) => line.msg === 'request' && line.path === '/oidc/token')).toMatchObject({
      route: 'oidc:token',
      status: 200,
      clientId: admin.BOOTSTRAP_CLIENT_ID,
    });
    expect(all.find((line) => line.msg === 'webhook delivered' && line.requestId === 'req-abc-123')).toMatchObject({
      event: 'Role.Created',
      status: 204,
      attempt: 1,
    });
    // The change record the request wrote names it too.
    const changes = await callApi(server, token, 'GET', '/api/changes?entity=Role');
    expect(changes.body.find(({ data }: { data: { name?: string } }) => data.name === 'logged role')).toMatchObject({ origin: { requestId: 'req-abc-123' } });
    const text = server.output();
    expect(text).not.toContain(token);
    expect(text).not.toContain(admin.BOOTSTRAP_CLIENT_SECRET);
    expect(text).not.toContain('secret-in-query');
  });
});
