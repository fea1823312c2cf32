import { Ajv } from 'ajv';

import { hookEvents } from '../../hooks/catalog.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The event schemas (OpenAPI 3.1 `webhooks`): one per event of the catalog, served in the
 * Management API's document; every delivery the suite's receivers get is checked against them
 * (`spec/support/receiver.ts`), and here a test delivery of each event, and a real one, are
 * checked against the schemas as served, and a body that strays from its schema is refused.
 */
describe('webhook event schemas', () => {
  let server: TestServer;
  let receiver: Receiver;
  let webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: object } } } } }>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const schemaOf = (event: string) => webhooks[event]!.post.requestBody.content['application/json'].schema;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('event-schemas', hookTestEnv);
    const document = await server.api('GET', '/api/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe('3.1.0');
    webhooks = document.body.webhooks;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('documents every event of the catalog, and nothing else', () => {
    expect(Object.keys(webhooks).sort()).toEqual([...hookEvents].sort());
    for (const event of hookEvents) expect(() => ajv.compile(schemaOf(event))).not.toThrow();
  });

  it("a test delivery of every event matches the event's schema as served", async () => {
    const hook = await server.create('/api/hooks', { name: 'every event', events: hookEvents, config: { url: receiver.url } });
    receiver.keys.push(hook.signingKey);
    for (let index = 0; index < hookEvents.length; index += 20) {
      const events = hookEvents.slice(index, index + 20);
      const answer = await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events, config: { url: receiver.url } } });
      expect(answer.status).toBe(204);
    }
    const samples = receiver.received.filter(({ body }) => body.sample === true);
    expect(samples.map(({ body }) => body.event).sort()).toEqual([...hookEvents].sort());
    for (const { body } of samples) {
      const validate = ajv.compile(schemaOf(body.event));
      expect({ event: body.event, valid: validate(body), errors: validate.errors ?? null }).toEqual({ event: body.event, valid: true, errors: null });
    }
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('a real delivery matches; the same body with a field it does not declare, or without one it requires, does not', async () => {
    const hook = await server.create('/api/hooks', { name: 'users', events: ['User.Data.Updated'], config: { url: receiver.url } });
    receiver.keys.push(hook.signingKey);
    const user = await server.create('/api/users', { username: 'schema_user' });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Schema User' } });
    await deliveriesSettled(server.database.db);
    const { body } = receiver.received.find(({ body: sent }) => sent.event === 'User.Data.Updated' && sent.data.id === user.id)!;
    const validate = ajv.compile(schemaOf('User.Data.Updated'));
    expect(validate(body)).toBe(true);
    expect(body).toMatchObject({ sequence: expect.any(Number), version: 2, changes: ['name'] });

    expect(validate({ ...body, passwordDigest: 'x' })).toBe(false);
    expect(validate({ ...body, data: { ...body.data, password: 'x' } })).toBe(false);
    const { data: _data, ...withoutData } = body;
    expect(validate(withoutData)).toBe(false);
    const { sequence: _sequence, ...unsequenced } = body;
    expect(validate(unsequenced)).toBe(false);
  });
});
