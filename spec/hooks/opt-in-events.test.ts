import * as oauth from 'openid-client';

import { optInEvents } from '../../hooks/catalog.js';
import { TestBrowser, startAuthorization } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { deliveriesSettled, eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const indicator = 'https://reports.example.com';

/**
 * The opt-in, high-volume events (issue 38): absent while no hook names them (nothing is even
 * written), present with one; each from the real flow; never a token, a code or a password; kept
 * for their own retention.
 */
describe('opt-in events', () => {
  let server: TestServer;
  let receiver: Receiver;
  let web: { clientId: string; clientSecret: string };
  let machine: { clientId: string; clientSecret: string };
  let userId: string;
  let ip = 80;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('opt-in', { ...hookTestEnv, TRUST_PROXY: 'true', HOOKS_OPT_IN_RETENTION_HOURS: '2' });
    const resource = await server.create('/api/resources', { name: 'Reports', indicator });
    const scope = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'read:reports' });
    const role = await server.create('/api/roles', { name: 'report reader', type: 'MachineToMachine', scopeIds: [scope.id] });
    const m2m = await server.create('/api/applications', { name: 'Reporter', type: 'MachineToMachine' });
    await server.create(`/api/applications/${m2m.id}/roles`, { roleIds: [role.id] });
    machine = { clientId: m2m.id, clientSecret: m2m.secret };
    const app = await server.create('/api/applications', {
      name: 'Web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    web = { clientId: app.id, clientSecret: app.secret };
    userId = (await server.create('/api/users', { username: 'streamed', password })).id;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const named = (received: Received[], event: string) => received.filter(({ body }) => body.event === event).map(({ body }) => body);
  const stored = (event: string) => server.database.db.collection('hook_events').countDocuments({ event });
  const machineToken = async () => {
    const config = await server.discover(machine.clientId, machine.clientSecret);
    return oauth.clientCredentialsGrant(config, { resource: indicator, scope: 'read:reports' });
  };
  const wrongPassword = async () => {
    const browser = new TestBrowser(server.url, `203.0.113.${(ip += 1)}`);
    await startAuthorization(browser, web.clientId, redirectUri);
    await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    const answer = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'streamed' },
      password: 'not-the-password-at-all',
    });
    expect(answer.body.code).toBe('session.invalid_credentials');
  };
  /** Everything that causes an opt-in event, once. */
  async function everything() {
    const issued = await machineToken();
    const refused = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${machine.clientId}:wrong-secret`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: indicator }).toString(),
    });
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_client');
    const browser = new TestBrowser(server.url, `203.0.113.${(ip += 1)}`);
    const flow = await codeFlow(browser, {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid offline_access',
      identifier: 'streamed',
      password,
      prompt: 'consent',
    });
    const config = await server.discover(web.clientId, web.clientSecret);
    const tokens = await oauth.authorizationCodeGrant(config, flow.callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: 'state-1',
      expectedNonce: 'nonce-1',
    });
    await oauth.tokenRevocation(config, tokens.refresh_token!);
    // A silent authorization that finds nobody is expected, not a failure; an unsupported response type is one.
    const silent = new URL(`${server.url}/oidc/auth`);
    silent.search = new URLSearchParams({
      client_id: web.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: redirectUri,
      prompt: 'none',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    }).toString();
    expect((await new TestBrowser(server.url).follow(silent, redirectUri)).url.searchParams.get('error')).toBe('login_required');
    const unsupported = new URL(silent);
    unsupported.searchParams.set('response_type', 'code token');
    unsupported.searchParams.delete('prompt');
    // Refused (on the provider's error page: the client may not use that response type), with no code.
    expect((await new TestBrowser(server.url).follow(unsupported, redirectUri)).url.searchParams.get('code')).toBeNull();
    await wrongPassword();
    return {
      secrets: [
        issued.access_token,
        tokens.access_token,
        tokens.refresh_token!,
        tokens.id_token!,
        flow.callback.searchParams.get('code')!,
        'not-the-password-at-all',
      ],
    };
  }

  it('without a hook naming them nothing is recorded, not even in the feed', async () => {
    // A hook on every event but these: subscribing to the rest never includes them.
    await subscribe(server, receiver, ['User.Created', 'PostSignIn', 'Grant.Created'], 'not opted in');
    const received = await eventsDuring(server, receiver, async () => {
      await everything();
      // What a wrong recording would have written by now, off the requests' path.
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    for (const event of optInEvents) {
      expect(named(received, event)).toEqual([]);
      expect(await stored(event)).toBe(0);
    }
  });

  it('with a hook naming them, each is delivered once from the real flow, without any token, code or password', async () => {
    await subscribe(server, receiver, [...optInEvents], 'opted in');
    let secrets: string[] = [];
    const received = await eventsDuring(server, receiver, async () => {
      ({ secrets } = await everything());
      // Recorded off the requests' path: until the group commit has written them all (one each, the issued two).
      const expected = { 'Token.Issued': 2, 'Token.Failed': 1, 'Token.Revoked': 1, 'Authorization.Failed': 1, 'SignIn.Failed': 1 };
      const deadline = Date.now() + 30_000;
      for (const [event, count] of Object.entries(expected)) {
        while ((await stored(event)) < count) {
          if (Date.now() > deadline) throw new Error(`${event}: fewer than ${count} recorded after 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
      await deliveriesSettled(server.database.db);
    });
    const issued = named(received, 'Token.Issued');
    expect(issued).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          grantType: 'client_credentials',
          applicationId: machine.clientId,
          resource: indicator,
          scope: 'read:reports',
          tokens: ['access_token'],
        }),
        expect.objectContaining({
          grantType: 'authorization_code',
          applicationId: web.clientId,
          userId,
          grantId: expect.any(String),
          sessionUid: expect.any(String),
          tokens: ['access_token', 'id_token', 'refresh_token'],
          entity: { type: 'Grant', id: expect.any(String) },
        }),
      ]),
    );
    expect(issued).toHaveLength(2);
    expect(named(received, 'Token.Failed')).toEqual([expect.objectContaining({ grantType: 'client_credentials', error: 'invalid_client' })]);
    expect(named(received, 'Token.Revoked')).toEqual([expect.objectContaining({ tokenType: 'refresh_token', applicationId: web.clientId, userId })]);
    expect(named(received, 'Authorization.Failed')).toEqual([
      expect.objectContaining({ error: expect.stringMatching(/^(unsupported_response_type|unauthorized_client|invalid_request)$/) }),
    ]);
    expect(named(received, 'SignIn.Failed')).toEqual([
      expect.objectContaining({
        identifierType: 'username',
        reason: 'session.invalid_credentials',
        interactionEvent: 'SignIn',
        ip: expect.stringMatching(/^203\.0\.113\./),
      }),
    ]);
    for (const secret of secrets) expect(received.filter(({ raw }) => raw.includes(secret))).toEqual([]);
    // Their own retention (HOOKS_OPT_IN_RETENTION_HOURS=2), not the events' 30 days.
    const kept = await server.database.db.collection<{ createdAt: Date; expiresAt: Date }>('hook_events').findOne({ event: 'Token.Issued' });
    expect(kept!.expiresAt.getTime() - kept!.createdAt.getTime()).toBe(2 * 60 * 60 * 1000);
  });

  it('a hook change takes effect at the next request: a hook no longer naming them stops their recording', async () => {
    const hooks = (await server.api('GET', '/api/hooks')).body as Array<{ id: string; name: string }>;
    const optedIn = hooks.find(({ name }) => name === 'opted in')!;
    expect((await server.api('PATCH', `/api/hooks/${optedIn.id}`, { body: { events: ['User.Created'] } })).status).toBe(200);
    const before = await stored('Token.Issued');
    await machineToken();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await stored('Token.Issued')).toBe(before);
  });

  it('RFC 8693 §4.1: a token exchange’s Token.Issued names the impersonated user and, in `act`, the actor', async () => {
    await subscribe(server, receiver, ['Token.Issued'], 'exchanges');
    const actorId = (await server.create('/api/users', { username: 'stream_actor', password })).id;
    const console_ = await server.create('/api/applications', { name: 'Support console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    const flow = await codeFlow(new TestBrowser(server.url, '203.0.113.250'), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid',
      identifier: 'stream_actor',
      password,
    });
    const config = await server.discover(web.clientId, web.clientSecret);
    const actorToken = (
      await oauth.authorizationCodeGrant(config, flow.callback, { pkceCodeVerifier: flow.verifier, expectedState: 'state-1', expectedNonce: 'nonce-1' })
    ).access_token;
    const { subjectToken } = (await server.api('POST', '/api/subject-tokens', { body: { userId } })).body;
    const exchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange';
    const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
    const received = await eventsDuring(server, receiver, async () => {
      await oauth.genericGrantRequest(await server.discover(console_.id), exchangeGrant, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        actor_token: actorToken,
        actor_token_type: accessTokenType,
        resource: indicator,
      });
      const deadline = Date.now() + 30_000;
      while ((await server.database.db.collection('hook_events').countDocuments({ event: 'Token.Issued', 'payload.grantType': exchangeGrant })) === 0) {
        if (Date.now() > deadline) throw new Error('no Token.Issued for the exchange after 30 s');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    });
    expect(named(received, 'Token.Issued').filter(({ grantType }) => grantType === exchangeGrant)).toEqual([
      expect.objectContaining({ applicationId: console_.id, userId, resource: indicator, tokens: ['access_token'], act: { sub: actorId } }),
    ]);
    expect(received.some(({ raw }) => raw.includes(subjectToken) || raw.includes(actorToken))).toBe(false);
  });
});
