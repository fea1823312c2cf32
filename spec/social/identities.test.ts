import { createHash, randomBytes } from 'node:crypto';

import { TestBrowser } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startGitHubLike, type GitHubLike } from '../support/upstream.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * A user's social identities outside a sign-in: Logto's Management API routes
 * (admin-user/social.ts) and the Account API's (account/identities.ts with the social
 * verification), against a GitHub-shaped OAuth 2.0 server in this process.
 */
describe('identities through the Management and Account APIs', () => {
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let github: GitHubLike;
  let connectorId: string;
  let client: { clientId: string; clientSecret: string };
  let ip = 90;

  beforeAll(async () => {
    receiver = await startReceiver();
    mail = await startMailCatcher();
    server = await startTestServer('identities', {
      ...hookTestEnv,
      TRUST_PROXY: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost',
      SMTP_URL: mail.url,
      EMAIL_FROM: 'Identity <no-reply@id.test>',
    });
    await subscribe(server, receiver, ['User.Data.Updated']);
    github = await startGitHubLike();
    connectorId = (
      await server.create('/api/connectors', {
        connectorId: 'github-universal',
        config: {
          clientId: github.clientId,
          clientSecret: github.clientSecret,
          authorizationEndpoint: `${github.url}/login/oauth/authorize`,
          tokenEndpoint: `${github.url}/login/oauth/access_token`,
          userInfoEndpoint: `${github.url}/user`,
          emailsEndpoint: `${github.url}/user/emails`,
        },
      })
    ).id;
    const application = await server.create('/api/applications', {
      name: 'Account centre',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    client = { clientId: application.id, clientSecret: application.secret };
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await github.close();
    await mail.close();
  });

  /** The integrator's own authorization request at the provider (its PKCE verifier), answered with the callback's code. */
  async function integratorCode() {
    const codeVerifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${github.url}/login/oauth/authorize`);
    authorize.searchParams.set('client_id', github.clientId);
    authorize.searchParams.set('redirect_uri', redirectUri);
    authorize.searchParams.set('state', 'integrator-state');
    authorize.searchParams.set('code_challenge', createHash('sha256').update(codeVerifier).digest('base64url'));
    authorize.searchParams.set('code_challenge_method', 'S256');
    const { url } = await new TestBrowser(github.url).follow(authorize, redirectUri);
    return { code: url.searchParams.get('code')!, state: url.searchParams.get('state')!, codeVerifier, redirectUri };
  }

  it('Management API: PUT sets an identity (201, then 200), POST links one by connector data, DELETE unlinks (404 after); another user’s is 422', async () => {
    const user = await server.create('/api/users', { username: 'managed_links' });
    const other = await server.create('/api/users', { username: 'managed_other' });
    const put = (id: string, target: string, body: unknown) => server.api('PUT', `/api/users/${id}/identities/${target}`, { body });

    const events = await eventsDuring(server, receiver, async () => {
      const created = await put(user.id, 'saml-corp', { userId: 'corp-1', details: { email: 'a@corp.example' } });
      expect({ status: created.status, body: created.body }).toEqual({
        status: 201,
        body: { 'saml-corp': { userId: 'corp-1', details: { email: 'a@corp.example' } } },
      });
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([['User.Data.Updated', ['identities.saml-corp']]]);
    expect((await put(user.id, 'saml-corp', { userId: 'corp-2' })).status).toBe(200);

    const before = await snapshot(server.database.db);
    // The upstream account belongs to one user only; a target that could not be a connector's is refused.
    const taken = await put(other.id, 'saml-corp', { userId: 'corp-2' });
    expect({ status: taken.status, code: taken.body.code }).toEqual({ status: 422, code: 'user.identity_already_in_use' });
    expect((await put(other.id, 'Has:Colon', { userId: 'x' })).status).toBe(400);
    expect((await put(other.id, 'saml-corp', {})).status).toBe(400);
    expect((await put('no-such-user', 'saml-corp', { userId: 'corp-9' })).status).toBe(404);
    expect(await snapshot(server.database.db)).toBe(before);

    github.signInAs({ id: 4242, login: 'linked-by-admin', name: 'Admin Linked' }, [{ email: 'admin.linked@example.com', primary: true, verified: true }]);
    const linked = await server.api('POST', `/api/users/${user.id}/identities`, { body: { connectorId, connectorData: await integratorCode() } });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ github: { userId: '4242', details: { id: '4242', email: 'admin.linked@example.com', name: 'Admin Linked' } } });
    expect(JSON.stringify(linked.body)).not.toMatch(/access_token|codeVerifier/);
    // A code is redeemed once: the provider refuses it the second time, and nothing changes.
    const code = await integratorCode();
    expect((await server.api('POST', `/api/users/${other.id}/identities`, { body: { connectorId, connectorData: code } })).status).toBe(422);
    const reused = await server.api('POST', `/api/users/${other.id}/identities`, { body: { connectorId, connectorData: code } });
    expect({ status: reused.status, code: reused.body.code }).toEqual({ status: 400, code: 'connector.general' });
    const missing = await server.api('POST', `/api/users/${other.id}/identities`, { body: { connectorId, connectorData: {} } });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 400, code: 'guard.invalid_input' });
    expect((await server.api('POST', `/api/users/${other.id}/identities`, { body: { connectorId: 'nope', connectorData: code } })).status).toBe(404);

    const removed = await server.api('DELETE', `/api/users/${user.id}/identities/github`);
    expect(removed.status).toBe(200);
    expect(removed.body.identities).toEqual({ 'saml-corp': { userId: 'corp-2', details: {} } });
    const again = await server.api('DELETE', `/api/users/${user.id}/identities/github`);
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 404, code: 'user.identity_not_exist' });
    // Unlinked, the GitHub account may be linked to the other user.
    expect((await server.api('POST', `/api/users/${other.id}/identities`, { body: { connectorId, connectorData: await integratorCode() } })).status).toBe(200);

    const withSso = await server.api('GET', `/api/users/${user.id}?includeSsoIdentities=true`);
    expect(withSso.body.ssoIdentities).toEqual([]);
    expect((await server.api('GET', `/api/users/${user.id}`)).body).not.toHaveProperty('ssoIdentities');
  });

  describe('Account API', () => {
    let token: string;
    let narrow: string;
    let userId: string;

    beforeAll(async () => {
      userId = (await server.create('/api/users', { username: 'self_linker', primaryEmail: 'self.linker@example.com', password })).id;
      const tokenFor = async (scope: string) => {
        const flow = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
          clientId: client.clientId,
          redirectUri,
          scope,
          identifier: 'self_linker',
          password,
        });
        return (await redeem(server, client, flow)).access_token;
      };
      token = await tokenFor('openid identities');
      narrow = await tokenFor('openid profile');
    });

    const stepUp = async () => (await server.api('POST', '/api/verifications/password', { token, body: { password } })).body.verificationRecordId as string;
    /** The user's own sign-in at the provider, for linking: the verification, then the provider's callback. */
    async function socialVerification(state = 'account-state') {
      const started = await server.api('POST', '/api/verifications/social', { token, body: { connectorId, redirectUri, state } });
      expect(started.status).toBe(201);
      const authorizationUri = new URL(started.body.authorizationUri as string);
      expect(authorizationUri.searchParams.get('code_challenge_method')).toBe('S256');
      const { url } = await new TestBrowser(authorizationUri.origin).follow(authorizationUri, redirectUri);
      return { verificationRecordId: started.body.verificationRecordId as string, connectorData: Object.fromEntries(url.searchParams) };
    }

    it('links the provider’s account after a step-up (announced), once, and refuses a second identity of that connector', async () => {
      github.signInAs({ id: 777, login: 'self', name: 'Self Linked' }, [{ email: 'self@example.com', primary: true, verified: true }]);
      const { verificationRecordId, connectorData } = await socialVerification();
      // Another state than the one the verification sent is refused.
      const wrong = await server.api('POST', '/api/verifications/social/verify', {
        token,
        body: { verificationRecordId, connectorData: { ...connectorData, state: 'forged' } },
      });
      expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 400, code: 'connector.general' });

      const fresh = await socialVerification();
      expect((await server.api('POST', '/api/verifications/social/verify', { token, body: fresh })).status).toBe(200);
      const link = (stepUpId?: string, with_ = token) =>
        server.api('POST', '/api/my-account/identities', {
          token: with_,
          body: { newIdentifierVerificationRecordId: fresh.verificationRecordId },
          ...(stepUpId && { headers: { 'logto-verification-id': stepUpId } }),
        });
      const unused = await stepUp();
      const before = await snapshot(server.database.db);
      expect((await link()).status).toBe(401);
      expect((await link(unused, narrow)).status).toBe(403);
      expect(await snapshot(server.database.db)).toBe(before);
      const events = await eventsDuring(server, receiver, async () => {
        expect((await link(await stepUp())).status).toBe(204);
      });
      expect(events.map(({ body }) => [body.event, body.changes])).toEqual([['User.Data.Updated', ['identities.github']]]);
      expect((await server.api('GET', `/api/users/${userId}`)).body.identities).toMatchObject({ github: { userId: '777' } });
      // The verification is spent; a new one for the same connector finds the account already has one.
      const spent = await link(await stepUp());
      expect({ status: spent.status, code: spent.body.code }).toEqual({ status: 400, code: 'verification_record.not_found' });
      const second = await socialVerification();
      await server.api('POST', '/api/verifications/social/verify', { token, body: second });
      const twice = await server.api('POST', '/api/my-account/identities', {
        token,
        body: { newIdentifierVerificationRecordId: second.verificationRecordId },
        headers: { 'logto-verification-id': await stepUp() },
      });
      expect({ status: twice.status, code: twice.body.code }).toEqual({ status: 422, code: 'user.identity_already_in_use' });
      // The code goes only to this service or the application's own redirect URIs.
      const elsewhere = await server.api('POST', '/api/verifications/social', {
        token,
        body: { connectorId, redirectUri: 'https://evil.example/cb', state: 's' },
      });
      expect(elsewhere.status).toBe(400);
    });

    it('unlinks an identity after a step-up, but never the last way to sign in (422 user.last_sign_in_method_required)', async () => {
      const remove = async (target: string, as = token) =>
        server.api('DELETE', `/api/my-account/identities/${target}`, { token: as, headers: { 'logto-verification-id': await stepUp() } });
      const missing = await remove('google');
      expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'user.identity_not_exist' });
      // The password remains: the GitHub identity may go.
      expect((await remove('github')).status).toBe(204);
      expect((await server.api('GET', `/api/users/${userId}`)).body.identities).toEqual({});

      // Only the upstream account signs this user in: removing it is refused, and nothing is written.
      await server.api('DELETE', `/api/users/${userId}/identities/github`);
      await server.api('PUT', `/api/users/${userId}/identities/github`, { body: { userId: 'only-way' } });
      // A step-up by a code to the account's address (one by the password would end with the password).
      const identifier = { type: 'email', value: 'self.linker@example.com' };
      const sent = await server.api('POST', '/api/verifications/verification-code', { token, body: { identifier } });
      expect(sent.status).toBe(201);
      const verified = await server.api('POST', '/api/verifications/verification-code/verify', {
        token,
        body: { identifier, verificationId: sent.body.verificationRecordId, code: await mail.nextCode('self.linker@example.com') },
      });
      expect(verified.status).toBe(200);
      const stepUpId = verified.body.verificationRecordId as string;
      // The password is gone from the account, as an account made through a connector has none.
      await server.database.db.collection('users').updateOne({ _id: userId as never }, { $set: { passwordHash: null } });
      const before = await snapshot(server.database.db);
      const last = await server.api('DELETE', `/api/my-account/identities/github`, { token, headers: { 'logto-verification-id': stepUpId } });
      expect({ status: last.status, code: last.body.code }).toEqual({ status: 422, code: 'user.last_sign_in_method_required' });
      expect(await snapshot(server.database.db)).toBe(before);
    });
  });
});
