import { createHash, randomBytes } from 'node:crypto';

import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Sessions and grants you can see and end (issue 38), as Logto has them: the Management API's
 * `/api/users/:userId/sessions` and `/grants`, the Account API's `/api/my-account/sessions` and
 * `/grants`, each end announced once (`Session.Revoked`, `Grant.Revoked`), and what ended stops
 * working: the browser's session, the grant's refresh tokens.
 */
describe('sessions and grants', () => {
  let server: TestServer;
  let receiver: Receiver;
  let web: { clientId: string; clientSecret: string };
  let ip = 60;
  const nextIp = () => `198.51.100.${(ip += 1)}`;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('sessions', { ...hookTestEnv, TRUST_PROXY: 'true' });
    await subscribe(server, receiver, ['Session.Revoked', 'Grant.Revoked'], 'sessions');
    const app = await server.create('/api/applications', {
      name: 'Web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    web = { clientId: app.id, clientSecret: app.secret };
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const named = (received: Received[], event: string) => received.filter(({ body }) => body.event === event).map(({ body }) => body);
  const user = async (username: string) => (await server.create('/api/users', { username, password })).id as string;

  /** Signs `username` in with a browser of its own; answers the browser and the tokens. */
  async function signIn(username: string, { scope = 'openid', userAgent = 'sessions-test-browser' } = {}) {
    const browser = new TestBrowser(server.url, nextIp(), userAgent);
    const offline = scope.includes('offline_access');
    const flow = await codeFlow(browser, { clientId: web.clientId, redirectUri, scope, identifier: username, password, ...(offline && { prompt: 'consent' }) });
    return { browser, tokens: await redeem(server, web, flow), config: await server.discover(web.clientId, web.clientSecret) };
  }

  /** Whether the browser still has a session: a `prompt=none` authorization answers a code, or `login_required`. */
  async function stillSignedIn(browser: TestBrowser) {
    const authorize = new URL(`${server.url}/oidc/auth`);
    authorize.search = new URLSearchParams({
      client_id: web.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: redirectUri,
      prompt: 'none',
      code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const { url } = await browser.follow(authorize, redirectUri);
    if (url.searchParams.get('error') === 'login_required') return false;
    if (url.searchParams.get('code')) return true;
    throw new Error(`unexpected answer: ${url.href}`);
  }

  const sessionsOf = async (userId: string) => (await server.api('GET', `/api/users/${userId}/sessions`)).body.sessions as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any

  describe('the Management API', () => {
    it('lists a user’s live sessions as Logto does, with where each began; never the sign-out form’s secret', async () => {
      const userId = await user('lister');
      const started = Date.now();
      await signIn('lister', { userAgent: 'Browser One' });
      await signIn('lister', { userAgent: 'Browser Two' });
      const sessions = await sessionsOf(userId);
      expect(sessions).toHaveLength(2);
      for (const session of sessions) {
        expect(session).toMatchObject({
          payload: {
            uid: expect.any(String),
            accountId: userId,
            kind: 'Session',
            authorizations: { [web.clientId]: expect.objectContaining({ grantId: expect.any(String) }) },
          },
          lastSubmission: { signInContext: { ip: expect.stringMatching(/^198\.51\.100\./), userAgent: expect.stringMatching(/^Browser (One|Two)$/) } },
          clientId: web.clientId,
          accountId: userId,
        });
        expect(session.expiresAt).toBeGreaterThan(Date.now());
        expect(Date.parse(session.lastActiveAt)).toBeGreaterThanOrEqual(started - 1000);
        expect(session.payload).not.toHaveProperty('state');
      }
      const [one] = sessions;
      expect((await server.api('GET', `/api/users/${userId}/sessions/${one!.payload.uid}`)).body).toEqual(one);
    });

    it('another user’s session is 404 oidc.invalid_session_account_id, an unknown one 404 oidc.session_not_found, a malformed id 400', async () => {
      const owner = await user('owner_of_one');
      const other = await user('not_the_owner');
      await signIn('owner_of_one');
      const [session] = await sessionsOf(owner);
      const uid = session!.payload.uid as string;
      for (const method of ['GET', 'DELETE']) {
        expect((await server.api(method, `/api/users/${other}/sessions/${uid}`)).body.code).toBe('oidc.invalid_session_account_id');
        expect((await server.api(method, `/api/users/${owner}/sessions/nosuchsession`)).body.code).toBe('oidc.session_not_found');
        expect((await server.api(method, `/api/users/${owner}/sessions/bad%20id`)).status).toBe(400);
      }
      // Nothing was ended by those.
      expect(await sessionsOf(owner)).toHaveLength(1);
    });

    it('ending one session signs that browser out and revokes its grant; announced once each (administrator)', async () => {
      const userId = await user('ended_once');
      const first = await signIn('ended_once');
      const second = await signIn('ended_once');
      const sessions = await sessionsOf(userId);
      const target = sessions.find((session) => session.lastSubmission.signInContext.ip === first.browser.ip)!;
      const received = await eventsDuring(server, receiver, async () => {
        expect((await server.api('DELETE', `/api/users/${userId}/sessions/${target.payload.uid}`)).status).toBe(204);
      });
      const revoked = named(received, 'Session.Revoked');
      // Named as the session routes name it (its `uid`), never by its cookie's value.
      expect(revoked).toEqual([
        expect.objectContaining({
          sessionId: target.payload.uid,
          userId,
          applicationIds: [web.clientId],
          cause: 'administrator',
          entity: { type: 'Session', id: target.payload.uid },
        }),
      ]);
      expect(received.some(({ raw }) => raw.includes(first.browser.cookies.get('_session')!))).toBe(false);
      expect(named(received, 'Grant.Revoked')).toEqual([
        expect.objectContaining({ userId, applicationId: web.clientId, grantId: target.payload.authorizations[web.clientId].grantId, cause: 'administrator' }),
      ]);
      expect(await stillSignedIn(first.browser)).toBe(false);
      expect(await stillSignedIn(second.browser)).toBe(true);
      expect((await sessionsOf(userId)).map((session) => session.payload.uid)).not.toContain(target.payload.uid);
    });

    it('two requests ending the same session at once: one 204, one 404, one Session.Revoked', async () => {
      const userId = await user('raced');
      await signIn('raced');
      const [session] = await sessionsOf(userId);
      let statuses: number[] = [];
      const received = await eventsDuring(server, receiver, async () => {
        statuses = (await Promise.all([1, 2].map(() => server.api('DELETE', `/api/users/${userId}/sessions/${session!.payload.uid}`)))).map(
          ({ status }) => status,
        );
      });
      expect(statuses.sort()).toEqual([204, 404]);
      expect(named(received, 'Session.Revoked')).toHaveLength(1);
      expect(named(received, 'Grant.Revoked')).toHaveLength(1);
    });

    it('a grant with offline_access outlives its session by default; revokeGrantsTarget=all ends it and its refresh token', async () => {
      const userId = await user('offline_keeper');
      const kept = await signIn('offline_keeper', { scope: 'openid offline_access' });
      const [session] = await sessionsOf(userId);
      expect((await server.api('DELETE', `/api/users/${userId}/sessions/${session!.payload.uid}`)).status).toBe(204);
      // The session is gone; the offline grant is not (as at the end-session endpoint).
      await expect(oauth.refreshTokenGrant(kept.config, kept.tokens.refresh_token!)).resolves.toMatchObject({ access_token: expect.any(String) });

      const ended = await signIn('offline_keeper', { scope: 'openid offline_access' });
      const [next] = await sessionsOf(userId);
      expect((await server.api('DELETE', `/api/users/${userId}/sessions/${next!.payload.uid}?revokeGrantsTarget=all`)).status).toBe(204);
      await expect(oauth.refreshTokenGrant(ended.config, ended.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect((await server.api('DELETE', `/api/users/${userId}/sessions/${next!.payload.uid}?revokeGrantsTarget=some`)).status).toBe(400);
    });

    it('sign out everywhere (DELETE /api/users/:userId/sessions): every session ends, each announced', async () => {
      const userId = await user('everywhere');
      const browsers = [await signIn('everywhere'), await signIn('everywhere'), await signIn('everywhere')];
      const received = await eventsDuring(server, receiver, async () => {
        expect((await server.api('DELETE', `/api/users/${userId}/sessions`)).status).toBe(204);
      });
      expect(named(received, 'Session.Revoked')).toHaveLength(3);
      expect(await sessionsOf(userId)).toEqual([]);
      for (const { browser } of browsers) expect(await stillSignedIn(browser)).toBe(false);
    });

    it('lists a user’s grants and revokes one: its refresh token stops working, the session forgets the application', async () => {
      const userId = await user('granted');
      const other = await user('granted_other');
      const { tokens, config } = await signIn('granted', { scope: 'openid offline_access' });
      const { grants } = (await server.api('GET', `/api/users/${userId}/grants`)).body;
      expect(grants).toEqual([
        expect.objectContaining({ id: expect.any(String), payload: expect.objectContaining({ clientId: web.clientId, accountId: userId }) }),
      ]);
      expect((await server.api('GET', `/api/users/${userId}/grants?appType=thirdParty`)).body.grants).toEqual([]);
      expect((await server.api('GET', `/api/users/${userId}/grants?appType=firstParty`)).body.grants).toHaveLength(1);
      const grantId = grants[0].id as string;
      expect((await server.api('DELETE', `/api/users/${other}/grants/${grantId}`)).body.code).toBe('oidc.invalid_grant');
      const received = await eventsDuring(server, receiver, async () => {
        expect((await server.api('DELETE', `/api/users/${userId}/grants/${grantId}`)).status).toBe(204);
      });
      expect(named(received, 'Grant.Revoked')).toEqual([expect.objectContaining({ grantId, userId, applicationId: web.clientId, cause: 'administrator' })]);
      expect(named(received, 'Session.Revoked')).toEqual([]);
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      const [session] = await sessionsOf(userId);
      expect(session!.payload.authorizations).toEqual({});
      expect((await server.api('DELETE', `/api/users/${userId}/grants/${grantId}`)).body.code).toBe('oidc.invalid_grant');
    });
  });

  describe('the Account API', () => {
    const stepUp = async (token: string) =>
      (await server.api('POST', '/api/verifications/password', { token, body: { password } })).body.verificationRecordId as string;
    const mine = (token: string, method: string, path: string, verification?: string) =>
      server.api(method, `/api/my-account${path}`, { token, ...(verification && { headers: { 'logto-verification-id': verification } }) });

    it('lists the user’s own sessions with the sessions scope and a step-up, marking the current one', async () => {
      await user('self_viewer');
      await signIn('self_viewer');
      const { tokens } = await signIn('self_viewer', { scope: 'openid urn:logto:scope:sessions' });
      const token = tokens.access_token;
      const withoutScope = (await signIn('self_viewer')).tokens.access_token;
      expect((await mine(withoutScope, 'GET', '/sessions', await stepUp(withoutScope))).status).toBe(403);
      expect((await mine(token, 'GET', '/sessions')).status).toBe(401);
      const { status, body } = await mine(token, 'GET', '/sessions', await stepUp(token));
      expect(status).toBe(200);
      expect(body.sessions).toHaveLength(3);
      expect(body.sessions.filter((session: { isCurrent: boolean }) => session.isCurrent)).toHaveLength(1);
    });

    it('ends one of the user’s own sessions with a step-up, spent by it; another user’s session is 404', async () => {
      const userId = await user('self_ender');
      const stranger = await user('self_stranger');
      const elsewhere = await signIn('self_ender');
      const { tokens } = await signIn('self_ender', { scope: 'openid urn:logto:scope:sessions' });
      await signIn('self_stranger');
      const [strangers] = await sessionsOf(stranger);
      const token = tokens.access_token;
      const target = (await sessionsOf(userId)).find((session) => session.lastSubmission.signInContext.ip === elsewhere.browser.ip)!;
      const verification = await stepUp(token);
      expect((await mine(token, 'DELETE', `/sessions/${strangers!.payload.uid}`, verification)).body.code).toBe('oidc.session_not_found');
      const received = await eventsDuring(server, receiver, async () => {
        expect((await mine(token, 'DELETE', `/sessions/${target.payload.uid}`, verification)).status).toBe(204);
      });
      expect(named(received, 'Session.Revoked')).toEqual([expect.objectContaining({ userId, cause: 'user' })]);
      expect(await stillSignedIn(elsewhere.browser)).toBe(false);
      // The step-up allowed one change.
      const [remaining] = await sessionsOf(userId);
      expect((await mine(token, 'DELETE', `/sessions/${remaining!.payload.uid}`, verification)).status).toBe(401);
      expect(await sessionsOf(stranger)).toHaveLength(1);
    });

    it('lists and revokes the user’s own grants', async () => {
      const userId = await user('self_granter');
      const { tokens, config } = await signIn('self_granter', { scope: 'openid offline_access urn:logto:scope:sessions' });
      const token = tokens.access_token;
      const { grants } = (await mine(token, 'GET', '/grants', await stepUp(token))).body;
      expect(grants).toEqual([expect.objectContaining({ payload: expect.objectContaining({ clientId: web.clientId, accountId: userId }) })]);
      expect((await mine(token, 'DELETE', `/grants/${grants[0].id}`, await stepUp(token))).status).toBe(204);
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
  });
});
