import * as oauth from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { startTestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/** The sample customizer: the impersonation context for token exchange, nothing for other grants. */
const sample = `
const getCustomJwtClaims = async ({ token, context, environmentVariables }) => {
  if (context.grant?.type === 'urn:ietf:params:oauth:grant-type:token-exchange') {
    const { ticketId, reason, actor } = context.grant.subjectTokenContext ?? {};
    return { impersonation_context: { ticketId, reason, actor, user: context.user?.username, app: context.application?.id, env: environmentVariables.REGION } };
  }
  return {};
};`;

async function setUp(label: string, env: Record<string, string> = {}) {
  const server = await startTestServer(label, env);
  const post = async (path: string, body: unknown) => (await server.api('POST', path, { body })).body;
  const resource = await post('/api/resources', { name: 'API', indicator: 'https://api.claims.test' });
  const user = await post('/api/users', { username: 'impersonated' });
  const app = await post('/api/applications', { name: 'console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
  const config = await server.discover(app.id);
  const exchangeToken = async () => {
    const { body } = await server.api('POST', '/api/subject-tokens', {
      body: { userId: user.id, context: { ticketId: 'T-7', reason: 'refund', actor: 'agent@support' } },
    });
    const response = await oauth.genericGrantRequest(config, grantType, {
      subject_token: body.subjectToken,
      subject_token_type: accessTokenType,
      resource: resource.indicator,
    });
    const { payload } = await jwtVerify(response.access_token, createRemoteJWKSet(new URL(`http://localhost:${server.port}/oidc/jwks`)), {
      issuer: server.issuer,
      audience: resource.indicator,
    });
    return payload;
  };
  const setScript = (script: string, environmentVariables: Record<string, string> = {}) =>
    server.api('PUT', '/api/configs/jwt-customizer/access-token', { body: { script, environmentVariables } });
  return { server, user, app, resource, exchangeToken, setScript };
}

describe('custom JWT claims', () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp('claims');
  });
  afterAll(async () => {
    await t.server.close();
  });

  // Logto's routes (packages/core/src/routes/logto-config/jwt-customizer.ts): PUT is 201 when it creates, 200 when it replaces.
  it('stores, reads and deletes the customizer', async () => {
    expect((await t.server.api('GET', '/api/configs/jwt-customizer/access-token')).status).toBe(404);
    const put = await t.setScript(sample, { REGION: 'eu' });
    expect(put.status).toBe(201);
    expect((await t.setScript(sample, { REGION: 'eu' })).status).toBe(200);
    expect((await t.server.api('GET', '/api/configs/jwt-customizer/access-token')).body).toEqual({ script: sample, environmentVariables: { REGION: 'eu' } });
    expect((await t.server.api('DELETE', '/api/configs/jwt-customizer/access-token')).status).toBe(204);
    expect((await t.server.api('DELETE', '/api/configs/jwt-customizer/access-token')).status).toBe(404);
    const broken = await t.setScript('function getCustomJwtClaims( {');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/^body.script does not compile: /);
  });

  it('stores a customizer with an empty script, as Logto allows (its integration-tests api/logto-config/jwt-customizer.test.ts): it adds no claim, and never refuses a token', async () => {
    const empty = await t.server.api('PUT', '/api/configs/jwt-customizer/access-token', { body: { script: '', blockIssuanceOnError: true } });
    expect(empty.status).toBe(201);
    const payload = await t.exchangeToken();
    expect(payload.sub).toBe(t.user.id);
    expect(payload).not.toHaveProperty('impersonation_context');
    expect((await t.server.api('DELETE', '/api/configs/jwt-customizer/access-token')).status).toBe(204);
    // A dry run still needs a script to run.
    expect((await t.server.api('POST', '/api/configs/jwt-customizer/test', { body: { script: '' } })).status).toBe(400);
  });

  it("runs the sample on token exchange: the subject token's context reaches the token", async () => {
    await t.setScript(sample, { REGION: 'eu' });
    const payload = await t.exchangeToken();
    expect(payload.impersonation_context).toEqual({
      ticketId: 'T-7',
      reason: 'refund',
      actor: 'agent@support',
      user: 'impersonated',
      app: t.app.id,
      env: 'eu',
    });
    expect(payload.sub).toBe(t.user.id);
  });

  it('cannot override reserved claims', async () => {
    await t.setScript(
      'function getCustomJwtClaims() { return { sub: "admin", aud: "x", scope: "all", act: { sub: "x" }, impersonation_id: "forged", client_id: "y", iss: "z", jti: "j", exp: 1, iat: 1, tier: "gold",' +
        ' azp: "other-client", acr: "urn:high", amr: ["hwk"], auth_time: 1, sid: "s", typ: "id_token" } }',
    );
    const payload = await t.exchangeToken();
    expect(payload).toMatchObject({ sub: t.user.id, aud: t.resource.indicator, client_id: t.app.id, iss: t.server.issuer, tier: 'gold' });
    for (const claim of ['act', 'azp', 'acr', 'amr', 'auth_time', 'sid', 'typ']) expect(payload).not.toHaveProperty(claim);
    // The impersonation's own id, not the script's; the policy's 15 minutes, not the resource's hour.
    expect(payload.impersonation_id).toEqual(expect.any(String));
    expect(payload.impersonation_id).not.toBe('forged');
    expect(payload.exp! - payload.iat!).toBe(900);
  });

  it("leaves the Management API's own tokens alone", async () => {
    await t.setScript('function getCustomJwtClaims() { throw new Error("must not run") }');
    const config = await t.server.discover(t.server.admin.clientId, t.server.admin.clientSecret);
    await expect(oauth.clientCredentialsGrant(config, { scope: 'all', resource: t.server.identity.managementApiIndicator })).resolves.toMatchObject({
      scope: 'all',
    });
  });

  it.each([
    [
      'reads process',
      'function getCustomJwtClaims() { return { leaked: typeof process + typeof require + typeof globalThis.process } }',
      { leaked: 'undefinedundefinedundefined' },
    ],
  ])('contains a script that %s', async (_name, script, expected) => {
    await t.setScript(script);
    expect(await t.exchangeToken()).toMatchObject(expected);
  });

  it('runs each token in a fresh context: nothing a run leaves behind reaches the next', async () => {
    await t.setScript(
      'var runs = 0; globalThis.seen = (globalThis.seen ?? 0) + 1; Array.prototype.mark = (Array.prototype.mark ?? 0) + 1;' +
        ' function getCustomJwtClaims() { runs += 1; return { runs, seen: globalThis.seen, mark: [].mark } }',
    );
    for (let i = 0; i < 3; i += 1) expect(await t.exchangeToken()).toMatchObject({ runs: 1, seen: 1, mark: 1 });
  });

  it.each([
    ['calls require', 'function getCustomJwtClaims() { return { fs: require("fs").readdirSync("/") } }'],
    ['escapes through the constructor chain', 'function getCustomJwtClaims() { return { p: this.constructor.constructor("return process")().env } }'],
    ['loops forever', 'function getCustomJwtClaims() { for (;;) {} }'],
    ['awaits forever', 'async function getCustomJwtClaims() { await new Promise(() => {}) }'],
    ['returns a huge result', 'function getCustomJwtClaims() { return { blob: "x".repeat(1e6) } }'],
    ['throws', 'function getCustomJwtClaims() { throw new Error("boom") }'],
  ])('issues the token without custom claims when the script %s (CUSTOM_CLAIMS_ON_ERROR=omit)', async (_name, script) => {
    await t.setScript(script);
    const payload = await t.exchangeToken();
    expect(payload.sub).toBe(t.user.id);
    expect(Object.keys(payload).sort()).toEqual(['aud', 'client_id', 'exp', 'iat', 'impersonation_id', 'iss', 'jti', 'sub']);
  });

  it('dry-runs a script against a sample token and context', async () => {
    const ok = await t.server.api('POST', '/api/configs/jwt-customizer/test', {
      body: {
        tokenType: 'access-token',
        script: sample,
        environmentVariables: { REGION: 'us' },
        token: { sub: 'u1' },
        context: { grant: { type: grantType, subjectTokenContext: { ticketId: 'T-1' } }, user: { username: 'u' } },
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ impersonation_context: { ticketId: 'T-1', user: 'u', env: 'us' } });
    const failing = await t.server.api('POST', '/api/configs/jwt-customizer/test', { body: { script: 'function getCustomJwtClaims() { for (;;) {} }' } });
    expect(failing.status).toBe(422);
    const message = 'the script failed (timeout): the script did not finish within 1000 ms';
    expect(failing.body).toEqual({ code: 'jwt_customizer.general', message, data: { message } });
  });
});

describe("custom JWT claims: the sandbox's bounds", () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp('claimsbounds');
  });
  afterAll(async () => {
    await t.server.close();
  });
  const dryRun = (script: string) => t.server.api('POST', '/api/configs/jwt-customizer/test', { body: { script } });

  it.each([
    ['an ArrayBuffer', 'new ArrayBuffer(512 * 1024 * 1024)', 'ArrayBuffer is not defined'],
    ['a typed array', 'new Uint8Array(512 * 1024 * 1024)', 'Uint8Array is not defined'],
    ['a SharedArrayBuffer', 'new SharedArrayBuffer(512 * 1024 * 1024)', 'SharedArrayBuffer is not defined'],
    ['WebAssembly memory', 'new WebAssembly.Memory({ initial: 8192 })', 'WebAssembly is not defined'],
    ['a DataView', 'new DataView(null)', 'DataView is not defined'],
  ])('gives a script no way to allocate memory outside the heap limit: %s', async (_name, allocation, message) => {
    const answer = await dryRun(`function getCustomJwtClaims() { const held = ${allocation}; return { held: String(held) } }`);
    expect(answer).toMatchObject({ status: 422, body: { code: 'jwt_customizer.general', message: `the script failed (script_error): ${message}` } });
  });

  it('bounds heap memory: a script that fills the heap fails, and the next run works', async () => {
    const answer = await dryRun('function getCustomJwtClaims() { const all = []; for (;;) all.push("x".repeat(1024) + all.length) }');
    expect(answer.status).toBe(422);
    expect((await dryRun('function getCustomJwtClaims() { return { ok: true } }')).body).toEqual({ ok: true });
  });

  it('a dry run that leaves work running after it answers cannot delay the next token', async () => {
    await t.setScript('function getCustomJwtClaims() { return { tier: "gold" } }');
    const spinning = dryRun('function getCustomJwtClaims() { Promise.resolve().then(() => { for (;;) {} }); return { done: true } }');
    for (let i = 0; i < 3; i += 1) expect(await t.exchangeToken()).toMatchObject({ tier: 'gold' });
    // The script answered, but kept its thread busy: it is reported as not finishing.
    expect((await spinning).body).toMatchObject({
      code: 'jwt_customizer.general',
      message: 'the script failed (timeout): the script did not finish within 1000 ms',
    });
  });
});

describe('custom JWT claims with CUSTOM_CLAIMS_ON_ERROR=refuse', () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp('claimsrefuse', { CUSTOM_CLAIMS_ON_ERROR: 'refuse', CUSTOM_CLAIMS_TIMEOUT_MS: '200' });
  });
  afterAll(async () => {
    await t.server.close();
  });

  it.each([
    ['throws', 'function getCustomJwtClaims() { throw new Error("boom") }'],
    ['times out', 'function getCustomJwtClaims() { for (;;) {} }'],
  ])('refuses the token with a clear error when the script %s', async (_name, script) => {
    await t.setScript(script);
    await expect(t.exchangeToken()).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: 'the access token could not be issued: its custom JWT claims failed',
    });
  });

  it("issues the token all the same when the customizer says blockIssuanceOnError: false (Logto's field, over the setting)", async () => {
    await t.server.api('PUT', '/api/configs/jwt-customizer/access-token', {
      body: { script: 'function getCustomJwtClaims() { throw new Error("boom") }', blockIssuanceOnError: false },
    });
    expect((await t.exchangeToken()).sub).toBe(t.user.id);
  });
});

/**
 * Logto's customizer contract (packages/core/src/routes/logto-config/jwt-customizer.ts and its
 * `jwtCustomizerGuard`): two customizers, `access-token` for user tokens and `client-credentials` for a
 * machine's own, each with `tokenSample`, `contextSample` and `blockIssuanceOnError`; a list of both,
 * and a partial update.
 */
describe("custom JWT claims: Logto's two customizers and their fields", () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  let machine: { id: string; secret: string };
  beforeAll(async () => {
    t = await setUp('claimslogto');
    machine = await t.server.create('/api/applications', { name: 'robot', type: 'MachineToMachine' });
  });
  afterAll(async () => {
    await t.server.close();
  });
  const put = (type: string, body: unknown) => t.server.api('PUT', `/api/configs/jwt-customizer/${type}`, { body });
  const machineToken = async () => {
    const config = await t.server.discover(machine.id, machine.secret);
    const { access_token } = await oauth.clientCredentialsGrant(config, { resource: t.resource.indicator });
    const { payload } = await jwtVerify(access_token, createRemoteJWKSet(new URL(`http://localhost:${t.server.port}/oidc/jwks`)), {
      audience: t.resource.indicator,
    });
    return payload;
  };

  it('keeps the samples and the failure flag, lists both customizers under Logto keys, and updates one in part', async () => {
    const body = {
      script: 'function getCustomJwtClaims() { return { who: "user" } }',
      tokenSample: { sub: 'u1', scope: 'read' },
      contextSample: { user: { username: 'sample' } },
      blockIssuanceOnError: true,
    };
    expect(await put('access-token', body)).toMatchObject({ status: 201, body: { ...body, environmentVariables: {} } });
    expect((await put('client-credentials', { script: 'function getCustomJwtClaims() { return { who: "machine" } }' })).status).toBe(201);

    const listed = await t.server.api('GET', '/api/configs/jwt-customizer');
    expect(listed.body).toEqual([
      { key: 'jwt.accessToken', value: { ...body, environmentVariables: {} } },
      { key: 'jwt.clientCredentials', value: { script: expect.stringContaining('machine'), environmentVariables: {} } },
    ]);

    const patched = await t.server.api('PATCH', '/api/configs/jwt-customizer/access-token', { body: { blockIssuanceOnError: false } });
    expect(patched).toMatchObject({ status: 200, body: { ...body, blockIssuanceOnError: false } });
    expect((await t.server.api('PATCH', '/api/configs/jwt-customizer/access-token', { body: {} })).body.code).toBe('entity.invalid_input');
    await t.server.api('DELETE', '/api/configs/jwt-customizer/client-credentials');
    expect((await t.server.api('PATCH', '/api/configs/jwt-customizer/client-credentials', { body: { blockIssuanceOnError: true } })).status).toBe(404);
    expect((await t.server.api('PUT', '/api/configs/jwt-customizer/id-token', { body })).status).toBe(400);
  });

  it('runs the client-credentials customizer on a machine token and the access-token one on a user token, each on its own', async () => {
    await put('access-token', { script: 'function getCustomJwtClaims() { return { who: "user" } }' });
    await put('client-credentials', { script: 'function getCustomJwtClaims({ context }) { return { who: "machine", app: context.application?.id } }' });
    expect(await machineToken()).toMatchObject({ who: 'machine', app: machine.id });
    expect(await t.exchangeToken()).toMatchObject({ who: 'user' });

    await t.server.api('DELETE', '/api/configs/jwt-customizer/client-credentials');
    expect(await machineToken()).not.toHaveProperty('who');
  });

  it('blockIssuanceOnError decides per customizer, over CUSTOM_CLAIMS_ON_ERROR (omit here)', async () => {
    const failing = 'function getCustomJwtClaims() { throw new Error("boom") }';
    await put('access-token', { script: failing, blockIssuanceOnError: true });
    await expect(t.exchangeToken()).rejects.toMatchObject({ error: 'invalid_request' });
    await put('access-token', { script: failing, blockIssuanceOnError: false });
    expect((await t.exchangeToken()).sub).toBe(t.user.id);
    // Unset, the setting decides: omit.
    await put('access-token', { script: failing });
    expect((await t.exchangeToken()).sub).toBe(t.user.id);
  });
});
