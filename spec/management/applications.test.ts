import * as oauth from 'openid-client';

import { startTestServer, type TestServer } from '../support/server.js';
import { createTestClock } from '../support/clock.js';

describe('/api/applications', () => {
  // Moved past a secret's expiry instead of waiting for it (it also drives the webhook worker, which this suite does not use).
  const clock = createTestClock();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('apps', {}, { clock });
  });
  afterAll(async () => {
    await server.close();
  });

  const count = () => server.database.db.collection('applications').countDocuments();
  const tokenFor = async (clientId: string, secret: string) => {
    const config = await server.discover(clientId, secret);
    return oauth.clientCredentialsGrant(config, { resource: server.identity.managementApiIndicator });
  };

  it('creates a traditional web application with a secret shown once, and keeps only its hash', async () => {
    const { status, body } = await server.api('POST', '/api/applications', {
      body: { name: 'Web', type: 'Traditional', oidcClientMetadata: { redirectUris: ['https://app.example.com/callback'] } },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      name: 'Web',
      type: 'Traditional',
      description: null,
      isThirdParty: false,
      customData: {},
      oidcClientMetadata: { redirectUris: ['https://app.example.com/callback'], postLogoutRedirectUris: [] },
    });
    // What was set and nothing more, as Logto answers it (packages/core/src/routes/applications/application.ts).
    expect(body.customClientMetadata).toEqual({});
    expect(body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const stored = await server.database.db.collection('application_secrets').find({ applicationId: body.id }).toArray();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(body.secret);

    const fetched = await server.api('GET', `/api/applications/${body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).not.toHaveProperty('secret');
    const { secret: _shownOnce, ...withoutSecret } = body;
    expect(fetched.body).toEqual(withoutSecret);
  });

  // Logto's GET /api/applications/:id/secrets (packages/core/src/routes/applications/application-secret.ts)
  // lists a public application's secrets as an empty list.
  it('creates public SPA and native applications without secrets (their list is empty, as Logto)', async () => {
    for (const type of ['SPA', 'Native']) {
      const { status, body } = await server.api('POST', '/api/applications', { body: { name: type, type } });
      expect(status).toBe(200);
      expect(body).not.toHaveProperty('secret');
      expect(await server.api('GET', `/api/applications/${body.id}/secrets`)).toMatchObject({ status: 200, body: [] });
      expect((await server.api('POST', `/api/applications/${body.id}/secrets`, { body: { name: 'no' } })).status).toBe(400);
    }
  });

  it('lists applications newest first, with a Total-Number header, a page size and a type filter', async () => {
    await server.api('POST', '/api/applications', { body: { name: 'M2M one', type: 'MachineToMachine' } });
    const all = await server.api('GET', '/api/applications?page_size=100');
    expect(all.status).toBe(200);
    const total = Number(all.headers.get('total-number'));
    expect(total).toBe(all.body.length);
    const createdAts = all.body.map((application: { createdAt: number }) => application.createdAt);
    expect([...createdAts].sort((a, b) => b - a)).toEqual(createdAts);

    const page = await server.api('GET', '/api/applications?page=2&page_size=1');
    expect(page.body).toHaveLength(1);
    expect(page.body[0].id).toBe(all.body[1].id);

    const m2m = await server.api('GET', '/api/applications?types=MachineToMachine');
    expect(m2m.body.every((application: { type: string }) => application.type === 'MachineToMachine')).toBe(true);
    expect((await server.api('GET', '/api/applications?page_size=101')).status).toBe(400);
  });

  it('updates an application, merging metadata field by field', async () => {
    const { body: created } = await server.api('POST', '/api/applications', {
      body: { name: 'Before', type: 'SPA', oidcClientMetadata: { redirectUris: ['https://spa.example.com/cb'] } },
    });
    const { status, body } = await server.api('PATCH', `/api/applications/${created.id}`, {
      body: {
        name: 'After',
        oidcClientMetadata: { postLogoutRedirectUris: ['https://spa.example.com/bye'] },
        customClientMetadata: { allowTokenExchange: true },
      },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      name: 'After',
      oidcClientMetadata: { redirectUris: ['https://spa.example.com/cb'], postLogoutRedirectUris: ['https://spa.example.com/bye'] },
      customClientMetadata: { allowTokenExchange: true },
    });
  });

  it('loses no update when PATCHes of one application run at once: each merges into what the others wrote', async () => {
    const { body: created } = await server.api('POST', '/api/applications', {
      body: { name: 'Raced', type: 'Traditional', oidcClientMetadata: { redirectUris: ['https://raced.example.com/cb'] } },
    });
    const patches = [
      { customClientMetadata: { idTokenTtl: 600 } },
      { customClientMetadata: { refreshTokenTtlInDays: 30 } },
      { customClientMetadata: { alwaysIssueRefreshToken: true } },
      { customClientMetadata: { rotateRefreshToken: false } },
      { customClientMetadata: { corsAllowedOrigins: ['https://raced.example.com'] } },
      { oidcClientMetadata: { postLogoutRedirectUris: ['https://raced.example.com/bye'] } },
      { name: 'Raced and renamed' },
      { description: 'changed by one of eight requests' },
    ];
    // Each PATCH is overtaken at most once by each of the other seven (each of them writes once),
    // so within its ten tries every one of them lands.
    const answers = await Promise.all(patches.map((body) => server.api('PATCH', `/api/applications/${created.id}`, { body })));
    expect(answers.map(({ status }) => status)).toEqual(patches.map(() => 200));
    const { body: after } = await server.api('GET', `/api/applications/${created.id}`);
    expect(after).toMatchObject({
      name: 'Raced and renamed',
      description: 'changed by one of eight requests',
      oidcClientMetadata: { redirectUris: ['https://raced.example.com/cb'], postLogoutRedirectUris: ['https://raced.example.com/bye'] },
      customClientMetadata: {
        idTokenTtl: 600,
        refreshTokenTtlInDays: 30,
        alwaysIssueRefreshToken: true,
        rotateRefreshToken: false,
        corsAllowedOrigins: ['https://raced.example.com'],
      },
    });
  });

  it('deletes an application with its secrets; its credentials stop working at once', async () => {
    const { body: created } = await server.api('POST', '/api/applications', { body: { name: 'Doomed', type: 'MachineToMachine' } });
    await tokenFor(created.id, created.secret);
    expect((await server.api('DELETE', `/api/applications/${created.id}`)).status).toBe(204);
    expect(await server.database.db.collection('application_secrets').countDocuments({ applicationId: created.id })).toBe(0);
    await expect(tokenFor(created.id, created.secret)).rejects.toMatchObject({ status: 401 });
    expect((await server.api('GET', `/api/applications/${created.id}`)).status).toBe(404);
    expect((await server.api('DELETE', `/api/applications/${created.id}`)).status).toBe(404);
  });

  it('rotates a secret: a new one works alongside the old until the old is deleted', async () => {
    const { body: app } = await server.api('POST', '/api/applications', { body: { name: 'Rotating', type: 'MachineToMachine' } });
    const added = await server.api('POST', `/api/applications/${app.id}/secrets`, { body: { name: 'second' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ name: 'second', expiresAt: null, value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    await tokenFor(app.id, app.secret);
    await tokenFor(app.id, added.body.value);

    const listed = await server.api('GET', `/api/applications/${app.id}/secrets`);
    expect(listed.body.map(({ name }: { name: string }) => name)).toEqual(['Default secret', 'second']);
    expect(JSON.stringify(listed.body)).not.toContain(added.body.value);

    expect((await server.api('POST', `/api/applications/${app.id}/secrets`, { body: { name: 'second' } })).status).toBe(422);
    expect((await server.api('DELETE', `/api/applications/${app.id}/secrets/${encodeURIComponent('Default secret')}`)).status).toBe(204);
    await expect(tokenFor(app.id, app.secret)).rejects.toMatchObject({ status: 401 });
    await tokenFor(app.id, added.body.value);
    expect((await server.api('DELETE', `/api/applications/${app.id}/secrets/nope`)).status).toBe(404);

    // Renamed as in Logto (PATCH .../secrets/:name): the value stays, the name is unique, an unknown one is 404.
    const renamed = await server.api('PATCH', `/api/applications/${app.id}/secrets/second`, { body: { name: 'primary' } });
    expect(renamed).toMatchObject({ status: 200, body: { name: 'primary', expiresAt: null, createdAt: expect.any(Number) } });
    expect(JSON.stringify(renamed.body)).not.toMatch(/hash|value/);
    await tokenFor(app.id, added.body.value);
    await server.api('POST', `/api/applications/${app.id}/secrets`, { body: { name: 'third' } });
    expect((await server.api('PATCH', `/api/applications/${app.id}/secrets/third`, { body: { name: 'primary' } })).body.code).toBe(
      'application.secret_name_exists',
    );
    expect((await server.api('PATCH', `/api/applications/${app.id}/secrets/nope`, { body: { name: 'other' } })).status).toBe(404);
  });

  // Logto's PATCH /api/applications/:id/custom-data (packages/core/src/routes/applications/application-custom-data.ts).
  it("replaces an application's custom data and answers it", async () => {
    const { body: app } = await server.api('POST', '/api/applications', { body: { name: 'Custom', type: 'SPA', customData: { a: 1 } } });
    const patched = await server.api('PATCH', `/api/applications/${app.id}/custom-data`, { body: { plan: 'pro', seats: 5 } });
    expect(patched).toMatchObject({ status: 200, body: { plan: 'pro', seats: 5 } });
    expect((await server.api('GET', `/api/applications/${app.id}`)).body.customData).toEqual({ plan: 'pro', seats: 5 });
    expect((await server.api('PATCH', `/api/applications/${app.id}/custom-data`, { body: { $where: 'x' } })).status).toBe(400);
    expect((await server.api('PATCH', '/api/applications/nope/custom-data', { body: {} })).status).toBe(404);
  });

  it('refuses a secret that expired', async () => {
    const { body: app } = await server.api('POST', '/api/applications', { body: { name: 'Expiring', type: 'MachineToMachine' } });
    const past = await server.api('POST', `/api/applications/${app.id}/secrets`, { body: { name: 'old', expiresAt: Date.now() - 1000 } });
    expect(past.status).toBe(400);
    // As Logto's routes/applications/application-secret.ts: 400 request.invalid_input.
    expect(past.body).toMatchObject({ code: 'request.invalid_input', message: 'body.expiresAt must be in the future', data: { field: 'body.expiresAt' } });
    const soon = await server.api('POST', `/api/applications/${app.id}/secrets`, { body: { name: 'soon', expiresAt: Date.now() + 1500 } });
    await tokenFor(app.id, soon.body.value);
    clock.advance(1600);
    await expect(tokenFor(app.id, soon.body.value)).rejects.toMatchObject({ status: 401 });
  });

  describe('bad input: 4xx naming the problem, nothing written', () => {
    const cases: Array<[string, unknown, number, Record<string, unknown>]> = [
      ['a missing name', { type: 'SPA' }, 400, { code: 'guard.invalid_input', message: 'body.name is required' }],
      ['a wrong type for name', { name: 42, type: 'SPA' }, 400, { message: 'body.name must be string' }],
      ['an unknown type', { name: 'x', type: 'Mainframe' }, 400, { message: 'body.type must be one of "Native", "SPA", "Traditional", "MachineToMachine"' }],
      [
        'a $-prefixed key in customData',
        { name: 'x', type: 'SPA', customData: { $where: 'sleep(1)' } },
        400,
        { message: 'body.customData has a key that is not allowed (`$where`)' },
      ],
      [
        'a dotted key nested in customData',
        { name: 'x', type: 'SPA', customData: { a: { 'b.c': 1 } } },
        400,
        { message: 'body.customData has a key that is not allowed (`b.c`)' },
      ],
      [
        'a redirect URI that is not a URI',
        { name: 'x', type: 'SPA', oidcClientMetadata: { redirectUris: ['not a uri'] } },
        400,
        { data: { field: 'body.oidcClientMetadata.redirectUris.0' } },
      ],
      [
        'a redirect URI with a fragment (refused by oidc-provider)',
        { name: 'x', type: 'SPA', oidcClientMetadata: { redirectUris: ['https://a.example.com/cb#frag'] } },
        400,
        { code: 'guard.invalid_input' },
      ],
      [
        'a third-party machine-to-machine application',
        { name: 'x', type: 'MachineToMachine', isThirdParty: true },
        400,
        { message: 'a machine-to-machine application cannot be third-party: no person consents for it' },
      ],
      ['an array body', [], 400, { message: 'body must be object' }],
      ['a null body', null, 400, { message: 'body must be object' }],
    ];

    it.each(cases)('refuses %s', async (_name, body, status, expected) => {
      const before = await count();
      const response = await server.api('POST', '/api/applications', { body });
      expect(response.status).toBe(status);
      expect(response.body).toMatchObject(expected);
      expect(await count()).toBe(before);
    });

    it('refuses invalid JSON', async () => {
      const before = await count();
      const { status, body } = await server.api('POST', '/api/applications', { raw: '{"name": "x", ' });
      expect(status).toBe(400);
      expect(body).toEqual({ code: 'guard.invalid_input', message: 'the request body is not valid JSON', data: { field: 'body' } });
      expect(await count()).toBe(before);
    });

    it('refuses a body that is not JSON', async () => {
      const { status, body } = await server.api('POST', '/api/applications', {
        raw: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(status).toBe(415);
      expect(body.code).toBe('guard.unsupported_media_type');
    });

    it('refuses an oversized body', async () => {
      const before = await count();
      const { status, body } = await server.api('POST', '/api/applications', { body: { name: 'x', type: 'SPA', customData: { blob: 'x'.repeat(200_000) } } });
      expect(status).toBe(413);
      expect(body).toEqual({ code: 'guard.payload_too_large', message: 'the request body is larger than 102400 bytes' });
      expect(await count()).toBe(before);
    });

    it('answers 404 for an unknown id and 400 for a malformed one', async () => {
      expect((await server.api('GET', '/api/applications/doesnotexist')).body).toEqual({
        code: 'entity.not_exists_with_id',
        message: 'application with id `doesnotexist` does not exist',
        data: { name: 'application', entity: 'application', id: 'doesnotexist' },
      });
      const patched = await server.api('PATCH', '/api/applications/doesnotexist', { body: { name: 'y' } });
      expect(patched.status).toBe(404);
      expect((await server.api('GET', `/api/applications/${encodeURIComponent('a$b')}`)).status).toBe(400);
    });

    it('refuses a PATCH with a bad field and leaves the application as it was', async () => {
      const { body: app } = await server.api('POST', '/api/applications', { body: { name: 'Stable', type: 'SPA' } });
      const response = await server.api('PATCH', `/api/applications/${app.id}`, { body: { name: 'Changed', description: 42 } });
      expect(response.status).toBe(400);
      expect(response.body.data.field).toMatch(/^body\./);
      expect((await server.api('GET', `/api/applications/${app.id}`)).body.name).toBe('Stable');
    });
  });
});
