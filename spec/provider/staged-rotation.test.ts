import * as oauth from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';

import { createTestClock } from '../support/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Listed {
  id: string;
  status: string;
  activatesAt?: number;
  keys: Array<{ id: string; alg: string }>;
}

/**
 * Staged signing-key rotation, as Logto's (`packages/core/src/libraries/oidc-private-key.ts`, the
 * `rotationGracePeriod` of `POST /api/configs/oidc/private-keys/rotate`): the new key set is
 * published at once as `next`, so that verifiers can fetch it ahead (RFC 7517 key sets), and
 * signs only once its grace period has passed. The test moves the server's clock instead of waiting.
 */
describe('staged signing-key rotation', () => {
  const clock = createTestClock();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('staged-rotation', {}, { clock });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The Management API with a new token each time: a token kept across turns would be signed by a set that is gone. */
  const api = async (method: string, path: string, body?: unknown) => server.api(method, path, { body, token: await freshToken() });
  const listed = async () => (await api('GET', '/api/configs/oidc/private-keys')).body as Listed[];
  const jwks = async () => (await (await fetch(`http://localhost:${server.port}/oidc/jwks`)).json()) as { keys: JWK[] };
  const kidsOf = async () => (await jwks()).keys.map(({ kid }) => kid);
  /** A new access token, by its signing key's id. */
  const freshToken = async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    const { access_token } = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    return access_token;
  };
  const verifies = async (jwt: string) => {
    try {
      await jwtVerify(jwt, createLocalJWKSet(await jwks()));
      return true;
    } catch {
      return false;
    }
  };

  it('publishes a staged set at once and signs with it only when its grace period has passed', async () => {
    const [before] = await listed();
    const asked = clock.now().getTime();
    const staged = await api('POST', '/api/configs/oidc/private-keys/rotate', { signingKeyAlgorithm: 'RSA', rotationGracePeriod: 3600 });
    const answered = clock.now().getTime();
    expect(staged.status).toBe(200);
    const [next, current] = staged.body as Listed[];
    expect(staged.body.map(({ status }: Listed) => status)).toEqual(['next', 'current']);
    expect(current!.id).toBe(before!.id);
    expect(next!.activatesAt).toBeGreaterThanOrEqual(asked + 3_600_000);
    expect(next!.activatesAt).toBeLessThanOrEqual(answered + 3_600_000);
    // Published ahead: every key of both sets is in the JWKS.
    expect(await kidsOf()).toEqual(expect.arrayContaining([...next!.keys, ...current!.keys].map(({ id }) => id)));
    // Still signed by the current set, with its family's algorithm.
    const during = await freshToken();
    expect(decodeProtectedHeader(during)).toMatchObject({ kid: current!.id, alg: 'ES256' });

    clock.advance(3_600_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await listed()).map(({ id, status }) => [id, status])).toEqual([
      [next!.id, 'current'],
      [current!.id, 'previous'],
    ]);
    const after = await freshToken();
    expect(decodeProtectedHeader(after)).toMatchObject({ kid: next!.id, alg: 'RS256' });
    // Tokens signed before the turn still verify, and still open the Management API.
    expect(await verifies(during)).toBe(true);
    expect((await server.api('GET', '/api/users', { token: during })).status).toBe(200);
    expect((await server.api('GET', '/api/users', { token: after })).status).toBe(200);
  });

  it('replaces a staged set that never signed, drops the oldest set at the turn, and keeps Logto’s refusals', async () => {
    const [current, previous] = await listed();
    const first = (await api('POST', '/api/configs/oidc/private-keys/rotate', { rotationGracePeriod: 600 })).body as Listed[];
    expect(first.map(({ status }) => status)).toEqual(['next', 'current', 'previous']);
    expect(await kidsOf()).toHaveLength(9);

    // While a set is staged: no immediate rotation, and the staged set cannot be deleted.
    const immediate = await api('POST', '/api/configs/oidc/private-keys/rotate', {});
    expect(immediate).toMatchObject({ status: 422, body: { code: 'oidc.invalid_request' } });
    const deleted = await api('DELETE', `/api/configs/oidc/private-keys/${first[0]!.id}`);
    expect(deleted).toMatchObject({ status: 422, body: { code: 'oidc.only_previous_key_can_be_deleted' } });

    // A second staged rotation replaces the first's set (it signed nothing) and restarts the wait.
    clock.advance(500_000);
    const second = (await api('POST', '/api/configs/oidc/private-keys/rotate', { rotationGracePeriod: 600 })).body as Listed[];
    expect(second.map(({ id, status }) => [id, status])).toEqual([
      [expect.not.stringMatching(first[0]!.id), 'next'],
      [current!.id, 'current'],
      [previous!.id, 'previous'],
    ]);
    expect(await kidsOf()).not.toEqual(expect.arrayContaining([first[0]!.id]));
    clock.advance(200_000);
    await new Promise((resolve) => setImmediate(resolve));
    // The first one's time has passed, the second's has not.
    expect(decodeProtectedHeader(await freshToken()).kid).toBe(current!.id);

    clock.advance(400_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await listed()).map(({ id, status }) => [id, status])).toEqual([
      [second[0]!.id, 'current'],
      [current!.id, 'previous'],
    ]);
    const kids = await kidsOf();
    expect(kids).toHaveLength(6);
    for (const { id } of previous!.keys) expect(kids).not.toContain(id);
    expect(decodeProtectedHeader(await freshToken()).kid).toBe(second[0]!.id);

    // After the turn the previous set may go, and an immediate rotation is allowed again.
    expect((await api('DELETE', `/api/configs/oidc/private-keys/${current!.id}`)).status).toBe(204);
    expect((await api('POST', '/api/configs/oidc/private-keys/rotate', {})).status).toBe(200);
  });

  it('answers 400 at the field for a grace period that is not whole seconds within 30 days, or for cookie keys', async () => {
    const before = await listed();
    for (const rotationGracePeriod of [-1, 1.5, '60', 30 * 24 * 3600 + 1]) {
      const { status, body } = await api('POST', '/api/configs/oidc/private-keys/rotate', { rotationGracePeriod });
      expect(status).toBe(400);
      expect(JSON.stringify(body)).toContain('rotationGracePeriod');
    }
    const cookies = await api('POST', '/api/configs/oidc/cookie-keys/rotate', { rotationGracePeriod: 60 });
    expect(cookies).toMatchObject({ status: 400, body: { code: 'guard.invalid_input' } });
    expect(JSON.stringify(cookies.body)).toContain('body.rotationGracePeriod');
    expect(await listed()).toEqual(before);
  });
});
