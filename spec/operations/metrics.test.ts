import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const metricsToken = 'metrics-scraper-token-0123456789';

/** Prometheus metrics: off without METRICS_TOKEN, only for its holder with it, and counting what the service does. */
describe('metrics', () => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('metrics', { ...hookTestEnv, METRICS_TOKEN: metricsToken });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const scrape = (authorization?: string) => fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });

  it('answers only a scraper with the token', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape(`Bearer ${metricsToken}x`)).status).toBe(401);
    expect((await scrape(`Bearer ${await server.adminToken()}`)).status).toBe(401);
    const answered = await scrape(`Bearer ${metricsToken}`);
    expect(answered.status).toBe(200);
    expect(answered.headers.get('content-type')).toContain('text/plain');
  });

  it('counts tokens by grant and outcome, API requests by route and status, deliveries, exchanges, the queue and database commands', async () => {
    const hook = await server.create('/api/hooks', { name: 'measured', events: ['Role.Created'], config: { url: receiver.url } });
    receiver.keys.push(hook.signingKey);
    await server.create('/api/roles', { name: 'measured role' });
    expect((await server.api('GET', '/api/users')).status).toBe(200);
    const app = await server.create('/api/applications', { name: 'console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    // One exchange that is issued (a subject token for a user, for an API resource), one that is refused.
    const resource = await server.create('/api/resources', { name: 'Measured API', indicator: 'https://measured.test' });
    const user = await server.create('/api/users', { username: 'measured_user' });
    const { subjectToken } = await server.create('/api/subject-tokens', { userId: user.id });
    const exchange = (token: string, indicator: string) =>
      fetch(`${server.url}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          client_id: app.id,
          subject_token: token,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          resource: indicator,
        }),
      });
    expect((await exchange(subjectToken, resource.indicator)).status).toBe(200);
    await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: app.id,
        subject_token: 'not-a-subject-token',
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: server.identity.managementApiIndicator,
      }),
    });
    // A grant type made up by the caller is counted as `other`: a label never takes what a request says.
    await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'made-up-grant-4711', client_id: app.id }),
    });
    await deliveriesSettled(server.database.db);
    const text = await (await scrape(`Bearer ${metricsToken}`)).text();
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 'NaN');
    expect(text).not.toContain('made-up-grant-4711');
    expect(value(/^oidc_identity_tokens_total\{grant="other",outcome="unsupported_grant_type"\} (\d+)/m)).toBe(1);
    expect(value(/^oidc_identity_tokens_total\{grant="client_credentials",outcome="issued"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_api_requests_total\{method="GET",route="\/api\/users",status="200"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_api_requests_total\{method="POST",route="\/api\/roles",status="200"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_token_exchanges_total\{outcome="issued"\} (\d+)/m)).toBe(1);
    expect(value(/^oidc_identity_tokens_total\{grant="urn:ietf:params:oauth:grant-type:token-exchange",outcome="issued"\} (\d+)/m)).toBe(1);
    expect(value(/^oidc_identity_token_exchanges_total\{outcome="(?:invalid_request|invalid_target)"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_webhook_deliveries_total\{outcome="succeeded"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_webhook_delivery_latency_seconds_count (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^oidc_identity_webhook_queue_depth\{state="pending"\} (\d+)/m)).toBe(0);
    expect(value(/^oidc_identity_database_command_seconds_count\{command="insert",outcome="ok"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    // Labels are routes, grants and outcomes: never an id or a token.
    expect(text).not.toContain(app.id);
  });

  it('is not there without METRICS_TOKEN', async () => {
    const plain = await startTestServer('no-metrics');
    try {
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
