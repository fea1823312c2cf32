import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createWebhookReceiver, type WebhookEvent } from '../../receiver/index.js';
import { createTestClock } from '../support/clock.js';
import { snapshot } from '../support/db.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
}

/** Whether one of the header's `v1a` signatures verifies the message under the JWK, checked with Node's crypto alone. */
function v1aVerifies({ headers, raw }: Received, jwk: Jwk): boolean {
  const signed = Buffer.from(`${headers['webhook-id'] as string}.${headers['webhook-timestamp'] as string}.${raw}`);
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  return (headers['webhook-signature'] as string)
    .split(' ')
    .filter((part) => part.startsWith('v1a,'))
    .some((part) => verify(null, signed, key, Buffer.from(part.slice(4), 'base64')));
}

const schemesOf = (received: Received) => (received.headers['webhook-signature'] as string).split(' ').map((part) => part.split(',')[0]);

/**
 * Asymmetric signatures (Standard Webhooks `v1a`, Ed25519) beside the HMAC `v1`: a hook that asks for
 * them signs with a key pair whose public half is published without a token, rotated with an
 * overlap as the secret is; the secret half is never shown.
 */
describe('webhook signatures: v1a (Ed25519) beside v1', () => {
  let server: TestServer;
  let receiver: Receiver;
  const clock = createTestClock();
  const settled = () => deliveriesSettled(server.database.db, undefined, clock);

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('hook-signatures', { ...hookTestEnv, HOOKS_KEY_OVERLAP: '60' }, { clock });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const jwksOf = (hookId: string) => fetch(`${server.url}/api/hooks/${hookId}/jwks`);

  it('signs with v1 and v1a; the public key is published as a JWKS without a token, and verifies the delivery', async () => {
    const hook = await server.create('/api/hooks', { name: 'both', events: ['Role.Created'], config: { url: receiver.url, signatures: ['v1', 'v1a'] } });
    receiver.keys.push(hook.signingKey);
    expect(hook.publicKeys).toEqual([expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/)]);
    expect(JSON.stringify(hook)).not.toMatch(/whsk_|secretKey/);

    const published = await jwksOf(hook.id);
    expect(published.status).toBe(200);
    const { keys } = (await published.json()) as { keys: Jwk[] };
    expect(keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: expect.any(String), use: 'sig', alg: 'EdDSA' }]);
    expect(Buffer.from(keys[0]!.x, 'base64url').toString('base64')).toBe(hook.publicKeys[0].slice('whpk_'.length));

    const role = await server.create('/api/roles', { name: 'signed twice' });
    await settled();
    const delivered = receiver.received.find(({ body }) => body.data?.id === role.id)!;
    // The `standardwebhooks` library verified its v1 (a v1-only receiver is unaffected); Ed25519 verifies the v1a.
    expect(schemesOf(delivered)).toEqual(['v1', 'v1a']);
    expect(v1aVerifies(delivered, keys[0]!)).toBe(true);
    expect(delivered.headers['logto-signature-sha-256']).toEqual(expect.any(String));
    // A changed body does not verify.
    expect(v1aVerifies({ ...delivered, raw: delivered.raw.replace('signed twice', 'signed thrice') }, keys[0]!)).toBe(false);
  });

  it('a v1a-only hook sends no HMAC signature; a v1-only hook publishes no key (404), nor does an unknown one', async () => {
    // A receiver that keeps what it is sent and answers 204: the verification is the test's.
    const captured: Received[] = [];
    const capture = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        captured.push({ id: String(req.headers['webhook-id']), headers: req.headers, raw, body: JSON.parse(raw) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
    let hook: { id: string } | undefined;
    try {
      const url = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/hook`;
      hook = await server.create('/api/hooks', { name: 'v1a only', events: ['Role.Created'], config: { url, signatures: ['v1a'] } });
      const role = await server.create('/api/roles', { name: 'asymmetric only' });
      await settled();
      const delivered = captured.find(({ body }) => body.data?.id === role.id)!;
      expect(schemesOf(delivered)).toEqual(['v1a']);
      expect(delivered.headers['logto-signature-sha-256']).toBeUndefined();
      const { keys } = (await (await jwksOf(hook!.id)).json()) as { keys: Jwk[] };
      expect(v1aVerifies(delivered, keys[0]!)).toBe(true);
    } finally {
      // The hook goes with its receiver: left, every later Role.Created would be retried against a
      // closed port until the schedule ran out, and the later tests' settled() would wait on it.
      if (hook) expect((await server.api('DELETE', `/api/hooks/${hook.id}`)).status).toBe(204);
      await new Promise<void>((resolve) => capture.close(() => resolve()));
    }

    const plain = await server.create('/api/hooks', { name: 'v1 only', events: ['Role.Created'], config: { url: receiver.url } });
    expect(plain.publicKeys).toBeUndefined();
    for (const id of [plain.id, 'no-such-hook']) {
      const answer = await jwksOf(id);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ code: 'entity.not_exists_with_id' });
    }
    // Its receiver does not know its secret (401): left, it would be retried after every later Role.Created.
    expect((await server.api('DELETE', `/api/hooks/${plain.id}`)).status).toBe(204);
  });

  it('rotates the key pair with an overlap; a receiver reading the JWKS follows the rotation on its own', async () => {
    const hook = await server.create('/api/hooks', { name: 'rotating', events: ['Role.Created'], config: { url: receiver.url, signatures: ['v1', 'v1a'] } });
    receiver.keys.push(hook.signingKey);
    const handled: WebhookEvent[] = [];
    const kit = createWebhookReceiver({
      jwksUri: `${server.url}/api/hooks/${hook.id}/jwks`,
      jwksMinIntervalMs: 0,
      async handle(event) {
        handled.push(event);
      },
    });
    const deliveredFor = (id: string) => receiver.received.find(({ body }) => body.hookId === hook.id && body.data?.id === id)!;
    const kitReceives = (received: Received) => kit.receive(received.headers, received.raw);

    const before = await server.create('/api/roles', { name: 'before rotation' });
    await settled();
    expect(await kitReceives(deliveredFor(before.id))).toMatchObject({ status: 200, outcome: 'processed' });

    const rotated = await server.api('PATCH', `/api/hooks/${hook.id}/signing-key-pair`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.publicKeys).toHaveLength(2);
    expect(rotated.body.publicKeys[1]).toBe(hook.publicKeys[0]);
    const during = await server.create('/api/roles', { name: 'during the overlap' });
    await settled();
    expect(schemesOf(deliveredFor(during.id))).toEqual(['v1', 'v1a', 'v1a']);

    // Past the overlap only the new pair signs; the kit has not seen it, reads the JWKS again, and verifies.
    clock.advance(61_000);
    const after = await server.create('/api/roles', { name: 'after the overlap' });
    await settled();
    expect(schemesOf(deliveredFor(after.id))).toEqual(['v1', 'v1a']);
    const { keys } = (await (await jwksOf(hook.id)).json()) as { keys: Jwk[] };
    expect(keys).toHaveLength(1);
    expect(v1aVerifies(deliveredFor(after.id), keys[0]!)).toBe(true);
    expect(await kitReceives(deliveredFor(after.id))).toMatchObject({ status: 200, outcome: 'processed' });
    expect(handled.map(({ data }) => (data as { name: string }).name)).toEqual(['before rotation', 'after the overlap']);
  });

  it('refuses a key-pair rotation for a hook without v1a, and bad signature or rate settings, writing nothing', async () => {
    const plain = await server.create('/api/hooks', { name: 'plain', events: ['Role.Created'], config: { url: receiver.url } });
    const before = await snapshot(server.database.db);
    const refused = await server.api('PATCH', `/api/hooks/${plain.id}/signing-key-pair`);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'hook.v1a_not_enabled' });
    for (const config of [{ signatures: [] }, { signatures: ['v2'] }, { signatures: ['v1', 'v1'] }, { maxPerSecond: 0 }, { maxPerSecond: 1.5 }]) {
      const answer = await server.api('PATCH', `/api/hooks/${plain.id}`, { body: { config: { url: receiver.url, ...config } } });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'guard.invalid_input' });
    }
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('makes a key pair when an existing hook asks for v1a', async () => {
    const plain = await server.create('/api/hooks', { name: 'later', events: ['Role.Created'], config: { url: receiver.url } });
    const patched = await server.api('PATCH', `/api/hooks/${plain.id}`, { body: { config: { url: receiver.url, signatures: ['v1', 'v1a'] } } });
    expect(patched.status).toBe(200);
    expect(patched.body.publicKeys).toHaveLength(1);
    expect((await jwksOf(plain.id)).status).toBe(200);
  });
});
