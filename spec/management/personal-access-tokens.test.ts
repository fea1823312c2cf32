import * as oauth from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { sha256 } from '../../lib/ids.js';
import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const patType = 'urn:logto:token-type:personal_access_token';
const reports = 'https://reports.test';

/**
 * Personal access tokens, as Logto's (core routes/admin-user/personal-access-token.ts; its
 * integration-tests api/admin-user.personal-access-token.test.ts and api/oidc/token-exchange/
 * personal-access-token.test.ts): made, renamed and removed by name per user; exchanged by a
 * confidential application for the user's token to an API resource. Kept as a hash, shown once.
 */
describe('personal access tokens', () => {
  let server: TestServer;
  let script: { id: string; secret: string };
  let spa: { id: string };
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer('personal-access-tokens');
    const api = await server.create('/api/resources', { name: 'Reports', indicator: reports, accessTokenTtl: 600 });
    const read = await server.create(`/api/resources/${api.id}/scopes`, { name: 'read:reports' });
    const role = await server.create('/api/roles', { name: 'Analyst', scopeIds: [read.id] });
    userId = (await server.create('/api/users', { username: 'grace' })).id;
    await server.create(`/api/users/${userId}/roles`, { roleIds: [role.id] });
    script = await server.create('/api/applications', { name: 'Nightly report', type: 'Traditional', customClientMetadata: { allowTokenExchange: true } });
    spa = await server.create('/api/applications', { name: 'Browser', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
  });
  afterAll(async () => {
    await server.close();
  });

  const path = (user = userId) => `/api/users/${user}/personal-access-tokens`;
  const create = (body: unknown, user = userId) => server.api('POST', path(user), { body });
  const exchange = async (subjectToken: string, parameters: Record<string, string> = {}, config?: oauth.Configuration) =>
    oauth.genericGrantRequest(config ?? (await server.discover(script.id, script.secret)), grantType, {
      subject_token: subjectToken,
      subject_token_type: patType,
      resource: reports,
      scope: 'read:reports',
      ...parameters,
    });
  const refused = { error: 'invalid_request', error_description: expect.any(String) };

  it('makes one, shown once with its value and kept only as its hash; lists, renames and removes by name', async () => {
    const made = await create({ name: 'laptop', expiresAt: Date.now() + 3_600_000 });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      userId,
      name: 'laptop',
      value: expect.stringMatching(/^pat_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });
    const stored = await server.database.db.collection('personal_access_tokens').findOne({ userId, name: 'laptop' });
    expect(stored).toMatchObject({ hash: sha256(made.body.value) });
    expect(JSON.stringify(stored)).not.toContain(made.body.value);
    await create({ name: 'ci' });
    const { value: _value, ...listed } = made.body;
    expect((await server.api('GET', path())).body).toEqual([listed, expect.objectContaining({ name: 'ci', expiresAt: null })]);

    // Logto's two renames: by the body, and by the path.
    expect((await server.api('PATCH', path(), { body: { currentName: 'laptop', name: 'desktop' } })).body).toMatchObject({ userId, name: 'desktop' });
    expect((await server.api('PATCH', `${path()}/desktop`, { body: { name: 'tower' } })).body).toMatchObject({ name: 'tower' });
    // The token keeps working under its new name.
    expect((await exchange(made.body.value)).access_token).toEqual(expect.any(String));
    // Logto's two deletions: by the body, and by the path.
    expect((await server.api('POST', `${path()}/delete`, { body: { name: 'tower' } })).status).toBe(204);
    expect((await server.api('DELETE', `${path()}/ci`)).status).toBe(204);
    expect((await server.api('GET', path())).body).toEqual([]);
    await expect(exchange(made.body.value)).rejects.toMatchObject(refused);

    const changes = (await server.api('GET', `/api/changes?entity=User&entityId=${userId}`)).body as Array<{ action: string; data: unknown }>;
    expect(changes.filter(({ action }) => action === 'personalAccessTokens.updated')).toHaveLength(6);
    expect(JSON.stringify(changes)).not.toContain(made.body.value);
  });

  it("refuses, writing nothing, what Logto refuses: a taken name (422), an unknown user (404), an empty name or a past expiry (400), an unknown token's rename or removal (404)", async () => {
    await create({ name: 'taken' });
    const before = await snapshot(server.database.db);
    expect(await create({ name: 'taken' })).toMatchObject({ status: 422, body: { code: 'user.personal_access_token_name_exists' } });
    expect((await create({ name: 'x' }, 'no-such-user')).status).toBe(404);
    expect(await create({ name: '' })).toMatchObject({ status: 400, body: { code: 'guard.invalid_input' } });
    expect(await create({ name: 'late', expiresAt: Date.now() - 1000 })).toMatchObject({ status: 400, body: { code: 'request.invalid_input' } });
    expect((await server.api('PATCH', `${path()}/nothing`, { body: { name: 'y' } })).status).toBe(404);
    expect((await server.api('DELETE', `${path()}/nothing`)).status).toBe(404);
    expect(await snapshot(server.database.db)).toBe(before);
    await create({ name: 'other' });
    const afterOther = await snapshot(server.database.db);
    expect(await server.api('PATCH', path(), { body: { currentName: 'other', name: 'taken' } })).toMatchObject({
      status: 422,
      body: { code: 'user.personal_access_token_name_exists' },
    });
    expect(await snapshot(server.database.db)).toBe(afterOther);
    await server.api('DELETE', `${path()}/taken`);
    await server.api('DELETE', `${path()}/other`);
  });

  it('gives one name to one token however many requests race for it', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => create({ name: 'raced' })));
    expect(answers.map(({ status }) => status).sort()).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    expect((await server.api('GET', path())).body.filter(({ name }: { name: string }) => name === 'raced')).toHaveLength(1);
    await server.api('DELETE', `${path()}/raced`);
  });

  it("is exchanged, any number of times, for the user's token to a resource, with what the user's roles give (Logto personal-access-token.test.ts)", async () => {
    const { value } = (await create({ name: 'exchange' })).body;
    for (let round = 0; round < 2; round += 1) {
      const issued = await exchange(value, { scope: 'read:reports write:reports' });
      expect(issued).toMatchObject({ token_type: 'bearer', scope: 'read:reports' });
      const { payload } = await jwtVerify(issued.access_token, createRemoteJWKSet(new URL(`${server.url}/oidc/jwks`)), {
        issuer: server.issuer,
        audience: reports,
      });
      expect(payload).toMatchObject({ sub: userId, client_id: script.id, scope: 'read:reports' });
      expect(payload).not.toHaveProperty('act');
    }
    await server.api('DELETE', `${path()}/exchange`);
  });

  it('is refused to a public client, when unknown or expired, and when its user is suspended or deleted', async () => {
    const { value } = (await create({ name: 'refusals' })).body;
    await expect(exchange(value, {}, await server.discover(spa.id))).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: 'a personal access token is exchanged by a confidential client only',
    });
    await expect(exchange('pat_unknown')).rejects.toMatchObject(refused);
    // Expired: made with a future expiry, then moved into the past in the store (no sleep racing a busy machine).
    const soon = (await create({ name: 'soon', expiresAt: Date.now() + 3_600_000 })).body.value;
    await server.database.db.collection('personal_access_tokens').updateOne({ userId, name: 'soon' }, { $set: { expiresAt: Date.now() - 1000 } });
    await expect(exchange(soon)).rejects.toMatchObject(refused);

    await server.api('PATCH', `/api/users/${userId}/is-suspended`, { body: { isSuspended: true } });
    await expect(exchange(value)).rejects.toMatchObject(refused);
    await server.api('PATCH', `/api/users/${userId}/is-suspended`, { body: { isSuspended: false } });
    expect((await exchange(value)).access_token).toEqual(expect.any(String));

    const doomed = (await server.create('/api/users', { username: 'doomed' })).id;
    const doomedToken = (await create({ name: 'gone' }, doomed)).body.value;
    expect((await server.api('DELETE', `/api/users/${doomed}`)).status).toBe(204);
    expect(await server.database.db.collection('personal_access_tokens').countDocuments({ userId: doomed })).toBe(0);
    await expect(exchange(doomedToken)).rejects.toMatchObject(refused);
  });
});
