import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';

import { uniqueDbName } from '../support/env.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';

const baseUrl = 'http://id.rotation.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'rotation-secret-0123456789' };
const management = `${baseUrl}/api`;

/**
 * Signing-key rotation (Logto's `/api/configs/oidc/:keyType` routes, its integration-tests
 * api/logto-config.test.ts) across two server processes over one database: tokens verify with
 * jose against the published JWKS (RFC 7517) before and after a rotation, and the other process
 * signs with the new key within its refresh interval. A private key is a key set (one key per
 * algorithm), listed in Logto's shape and counts: one current, at most one previous.
 */
describe('signing-key rotation', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let token: string;
  beforeAll(async () => {
    const dbName = uniqueDbName('rotation');
    a = await spawnServer(dbName, { BASE_URL: baseUrl, ...admin });
    b = await spawnServer(dbName, { BASE_URL: baseUrl, ...admin });
    token = (await clientCredentials(a, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, management)).body.access_token!;
  });
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
  });

  const jwksOf = async (server: ServerProcess) => (await (await fetch(`${server.local}/oidc/jwks`)).json()) as { keys: JWK[] };
  const verifies = async (server: ServerProcess, jwt: string) => {
    try {
      await jwtVerify(jwt, createLocalJWKSet(await jwksOf(server)), { issuer: `${baseUrl}/oidc`, audience: management });
      return true;
    } catch {
      return false;
    }
  };
  const issue = async (server: ServerProcess) =>
    (await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, management)).body.access_token!;

  it('lists the keys without their material', async () => {
    const { status, body } = await callApi(a, token, 'GET', '/api/configs/oidc/private-keys');
    expect(status).toBe(200);
    // One set, made for ACCESS_TOKEN_ALG's family (ES256 by default), named by that key; a key of every algorithm in it.
    expect(body).toEqual([
      { id: expect.any(String), createdAt: expect.any(Number), signingKeyAlgorithm: 'EC', alg: 'ES256', keys: expect.any(Array), status: 'current' },
    ]);
    expect(body[0].keys.map(({ alg }: { alg: string }) => alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    expect(body[0].keys[0].id).toBe(body[0].id);
    expect((await jwksOf(a)).keys.map(({ kid }) => kid).sort()).toEqual(body[0].keys.map(({ id }: { id: string }) => id).sort());
    const cookies = await callApi(a, token, 'GET', '/api/configs/oidc/cookie-keys');
    expect(cookies.body).toEqual([{ id: expect.any(String), createdAt: expect.any(Number), status: 'current' }]);
    expect(JSON.stringify([body, cookies.body])).not.toMatch(/"d"|"p"|"q"|"k"/);
  });

  it('rotates: new tokens are signed with the new key, tokens signed before still verify, and the other process follows', async () => {
    const before = await issue(a);
    const oldKid = decodeProtectedHeader(before).kid!;
    const rotated = await callApi(a, token, 'POST', '/api/configs/oidc/private-keys/rotate', { signingKeyAlgorithm: 'EC' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.map(({ alg, status }: { alg: string; status: string }) => [alg, status])).toEqual([
      ['ES256', 'current'],
      ['ES256', 'previous'],
    ]);
    expect(rotated.body[1].id).toBe(oldKid);
    const newKid = rotated.body[0].id as string;

    const after = await issue(a);
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    expect(await verifies(a, before)).toBe(true);
    expect(await verifies(a, after)).toBe(true);
    expect((await callApi(a, after, 'GET', '/api/users')).status).toBe(200);
    expect((await callApi(a, before, 'GET', '/api/users')).status).toBe(200);

    // The other process signs with the new key within its refresh interval (CACHE_REFRESH_MS=100 here).
    const deadline = Date.now() + 60_000;
    let fromB = await issue(b);
    while (decodeProtectedHeader(fromB).kid !== newKid && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      fromB = await issue(b);
    }
    expect(decodeProtectedHeader(fromB).kid).toBe(newKid);
    expect(await verifies(b, before)).toBe(true);
    expect((await callApi(b, after, 'GET', '/api/users')).status).toBe(200);

    // Once the old key is deleted, only tokens signed with the new one verify, in both processes.
    expect((await callApi(a, token, 'DELETE', `/api/configs/oidc/private-keys/${oldKid}`)).status).toBe(204);
    expect(await verifies(a, before)).toBe(false);
    expect(await verifies(a, after)).toBe(true);
    expect((await callApi(a, before, 'GET', '/api/users')).status).toBe(401);
    const gone = Date.now() + 60_000;
    while ((await jwksOf(b)).keys.some(({ kid }) => kid === oldKid) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await verifies(b, before)).toBe(false);
    expect((await callApi(b, before, 'GET', '/api/users')).status).toBe(401);
    token = after;
  });

  it('rotates to the family asked for, as Logto: its algorithm then signs access tokens, every algorithm stays declared for ID tokens, and two sets at most are kept', async () => {
    const before = (await callApi(a, token, 'GET', '/api/configs/oidc/private-keys')).body as Array<{ id: string }>;
    const toRsa = await callApi(a, token, 'POST', '/api/configs/oidc/private-keys/rotate', { signingKeyAlgorithm: 'RSA' });
    expect(toRsa.body.map(({ signingKeyAlgorithm, status }: Record<string, string>) => [signingKeyAlgorithm, status])).toEqual([
      ['RSA', 'current'],
      ['EC', 'previous'],
    ]);
    expect(toRsa.body[1].id).toBe(before[0]!.id);
    const rsaToken = await issue(a);
    expect(decodeProtectedHeader(rsaToken)).toMatchObject({ alg: 'RS256', kid: toRsa.body[0].id });
    expect((await callApi(a, rsaToken, 'GET', '/api/users')).status).toBe(200);
    token = rsaToken;
    // Each set holds a key of every algorithm: discovery still offers them all to clients choosing their ID tokens'.
    const discovery = (await (await fetch(`${a.local}/oidc/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(discovery.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'RS256']));
    // The other process follows.
    const deadline = Date.now() + 60_000;
    while (decodeProtectedHeader(await issue(b)).alg !== 'RS256' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(decodeProtectedHeader(await issue(b)).alg).toBe('RS256');
    // Logto's default family is EC; the set before is the previous one, the one before that is gone.
    const toEc = await callApi(a, token, 'POST', '/api/configs/oidc/private-keys/rotate', {});
    expect(toEc.body.map(({ signingKeyAlgorithm, status }: Record<string, string>) => [signingKeyAlgorithm, status])).toEqual([
      ['EC', 'current'],
      ['RSA', 'previous'],
    ]);
    // The set before the previous one is gone, with the tokens it signed.
    expect(JSON.stringify((await jwksOf(a)).keys)).not.toContain(before[0]!.id);
    token = await issue(a);
    expect(decodeProtectedHeader(token).alg).toBe('ES256');
    // Deleting the previous set by its name leaves one, which cannot be deleted.
    expect((await callApi(a, token, 'DELETE', `/api/configs/oidc/private-keys/${toEc.body[1].id}`)).status).toBe(204);
    const left = (await callApi(a, token, 'GET', '/api/configs/oidc/private-keys')).body as Array<{ id: string; status: string }>;
    expect(left.map(({ id, status }) => [id, status])).toEqual([[toEc.body[0].id, 'current']]);
    expect(await callApi(a, token, 'DELETE', `/api/configs/oidc/private-keys/${left[0]!.id}`)).toMatchObject({
      status: 422,
      body: { code: 'oidc.key_required' },
    });
    token = await issue(a);
  });

  it('refuses to delete a key in use, the last key, or an unknown key', async () => {
    await callApi(a, token, 'POST', '/api/configs/oidc/private-keys/rotate', {});
    const keys = (await callApi(a, token, 'GET', '/api/configs/oidc/private-keys')).body as Array<{ id: string; status: string }>;
    const current = keys.find(({ status }) => status === 'current')!;
    expect(await callApi(a, token, 'DELETE', `/api/configs/oidc/private-keys/${current.id}`)).toMatchObject({
      status: 422,
      body: { code: 'oidc.only_previous_key_can_be_deleted' },
    });
    expect(await callApi(a, token, 'DELETE', '/api/configs/oidc/private-keys/no-such-key')).toMatchObject({
      status: 404,
      body: { code: 'oidc.key_not_found' },
    });
    const [cookie] = (await callApi(a, token, 'GET', '/api/configs/oidc/cookie-keys')).body as Array<{ id: string }>;
    expect(await callApi(a, token, 'DELETE', `/api/configs/oidc/cookie-keys/${cookie!.id}`)).toMatchObject({
      status: 422,
      body: { code: 'oidc.key_required' },
    });
    expect(await callApi(a, token, 'POST', '/api/configs/oidc/cookie-keys/rotate', { signingKeyAlgorithm: 'EC' })).toMatchObject({
      status: 400,
      body: { code: 'guard.invalid_input' },
    });
    expect((await callApi(a, token, 'POST', '/api/configs/oidc/unknown-keys/rotate', {})).status).toBe(400);
  });

  it('rotates cookie keys: the new key signs, the old one still verifies', async () => {
    const rotated = await callApi(a, token, 'POST', '/api/configs/oidc/cookie-keys/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.map(({ status }: { status: string }) => status)).toEqual(['current', 'previous']);
    // Discovery and the sign-in pages keep working with the new cookie key.
    expect((await fetch(`${a.local}/oidc/.well-known/openid-configuration`)).status).toBe(200);
  });

  it('turns a staged set into the current one in both processes at its time, with no write in between', async () => {
    const staged = await callApi(a, token, 'POST', '/api/configs/oidc/private-keys/rotate', { rotationGracePeriod: 5 });
    expect(staged.body.map(({ status }: { status: string }) => status)).toEqual(['next', 'current', 'previous']);
    const [next, current] = staged.body as Array<{ id: string; activatesAt: number }>;
    // Published ahead by both processes, while the current set still signs.
    const published = Date.now() + 60_000;
    while (!(await jwksOf(b)).keys.some(({ kid }) => kid === next!.id) && Date.now() < published) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await jwksOf(b)).keys.map(({ kid }) => kid)).toContain(next!.id);
    const during = await issue(b);
    // Unless this machine took the whole grace period to get here, the current set still signs.
    if (Date.now() < next!.activatesAt - 500) expect(decodeProtectedHeader(during).kid).toBe(current!.id);
    expect([current!.id, next!.id]).toContain(decodeProtectedHeader(during).kid);
    // Both sign with it once its time has come (each process reads the time from the stored document).
    for (const server of [a, b]) {
      const deadline = next!.activatesAt + 60_000;
      while (decodeProtectedHeader(await issue(server)).kid !== next!.id && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(decodeProtectedHeader(await issue(server)).kid).toBe(next!.id);
    }
    expect(Date.now()).toBeGreaterThanOrEqual(next!.activatesAt);
    token = await issue(a);
  });
});
