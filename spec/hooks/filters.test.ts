import * as oauth from 'openid-client';

import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Echo suppression and source filters (ours): a hook may leave out the events its own backend
 * caused (`config.excludeClientIds`) and take only some sources (`config.sources`: management,
 * experience, account), at fan-out, at each attempt, and in a replay.
 */
describe('webhook filters: echo suppression and sources', () => {
  let server: TestServer;
  let echoReceiver: Receiver;
  let experienceReceiver: Receiver;
  let backendToken: string;
  let backendId: string;

  beforeAll(async () => {
    echoReceiver = await startReceiver();
    experienceReceiver = await startReceiver();
    server = await startTestServer('hook-filters', hookTestEnv);
    // An integrator's backend with its own Management API application: the writes it makes are its echo.
    const backend = await server.create('/api/applications', { name: 'Integrator backend', type: 'MachineToMachine' });
    await server.create(`/api/applications/${backend.id}/roles`, { roleIds: ['management-api-access'] });
    backendId = backend.id;
    const config = await server.discover(backend.id, backend.secret);
    backendToken = (await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator })).access_token;
  });
  afterAll(async () => {
    await server.close();
    await echoReceiver.close();
    await experienceReceiver.close();
  });

  const hook = async (receiver: Receiver, events: string[], config: Record<string, unknown>) => {
    const made = await server.create('/api/hooks', { name: 'filtered', events, config: { url: receiver.url, ...config } });
    receiver.keys.push(made.signingKey);
    return made as { id: string; config: Record<string, unknown> };
  };

  it('leaves out the events an excluded application caused, and sends the others', async () => {
    const made = await hook(echoReceiver, ['Role.Created'], { excludeClientIds: [backendId] });
    expect(made.config).toMatchObject({ excludeClientIds: [backendId] });
    const own = await server.api('POST', '/api/roles', { token: backendToken, body: { name: 'made by the backend' } });
    expect(own.status).toBe(200);
    await server.create('/api/roles', { name: 'made by the admin' });
    await deliveriesSettled(server.database.db);
    expect(echoReceiver.received.map(({ body }) => (body.data as { name: string }).name)).toEqual(['made by the admin']);

    // A replay of the range honours the filter too.
    const replay = await server.api('POST', `/api/hooks/${made.id}/replay`, { body: { since: 0 } });
    expect(replay.status).toBe(202);
    await deliveriesSettled(server.database.db);
    expect(echoReceiver.received.map(({ body }) => (body.data as { name: string }).name)).toEqual(['made by the admin', 'made by the admin']);
  });

  it('takes only the sources it names: a sign-in’s events, not the Management API’s', async () => {
    await hook(experienceReceiver, ['User.Created', 'PostRegister'], { sources: ['experience'] });
    const user = await server.create('/api/users', { username: 'from_management' });
    await server.identity.reportInteractionEvent({ event: 'PostRegister', userId: user.id });
    await deliveriesSettled(server.database.db);
    expect(experienceReceiver.received.map(({ body }) => body.event)).toEqual(['PostRegister']);
  });

  it('refuses a malformed filter with 400 naming it, writing nothing', async () => {
    for (const config of [{ sources: [] }, { sources: ['elsewhere'] }, { excludeClientIds: 'one' }, { excludeClientIds: [''] }]) {
      const answer = await server.api('POST', '/api/hooks', { body: { name: 'bad', events: ['Role.Created'], config: { url: echoReceiver.url, ...config } } });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'guard.invalid_input' });
      expect(answer.body.message).toMatch(/config\.(sources|excludeClientIds)/);
    }
  });
});
