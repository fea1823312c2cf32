import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Liveness and readiness: `/api/status` answers while the process does; `/api/status/ready` only
 * while its database answers and its delivery worker (when it delivers) runs. The database's side
 * is in database-outage.test.ts.
 */
describe('health', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const ready = async () => {
    const response = await fetch(`${server!.url}/api/status/ready`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('is ready with its database and its worker, and not ready (503, the reason named) once its worker stops, while still alive', async () => {
    server = await startTestServer('health');
    expect(await ready()).toEqual({ status: 200, body: { database: 'ok', worker: 'ok' } });
    await server.identity.hooks.close();
    expect(await ready()).toEqual({
      status: 503,
      body: { code: 'service.worker_unavailable', message: 'the delivery worker is not running' },
    });
    expect((await fetch(`${server.url}/api/status`)).status).toBe(204);
  });

  it('is ready without a worker in a process that does not deliver', async () => {
    server = await startTestServer('health-no-delivery', { HOOKS_DELIVERY: 'false' });
    expect(await ready()).toEqual({ status: 200, body: { database: 'ok', worker: 'off' } });
  });
});
