import * as oauth from 'openid-client';
import { decodeJwt } from 'jose';

import { TestBrowser } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
const jwtTokenType = 'urn:ietf:params:oauth:token-type:jwt';
const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/** The token endpoint against the text of RFC 6749, RFC 8693 and OpenID Connect Core. */
describe('token endpoint conformance', () => {
  let server: TestServer;
  let exchanger: { id: string; secret: string };
  let plainWeb: { id: string; secret: string };
  let userId: string;
  const indicator = 'https://orders.conformance.test';

  beforeAll(async () => {
    server = await startTestServer('conformance');
    const orders = await server.create('/api/resources', { name: 'Orders', indicator });
    const read = await server.create(`/api/resources/${orders.id}/scopes`, { name: 'read:orders' });
    const role = await server.create('/api/roles', { name: 'reader', scopeIds: [read.id] });
    userId = (await server.create('/api/users', { username: 'conformant', password })).id;
    await server.create(`/api/users/${userId}/roles`, { roleIds: [role.id] });
    const app = (body: Record<string, unknown>) =>
      server.create('/api/applications', {
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
        ...body,
      });
    exchanger = await app({ name: 'Exchanger', customClientMetadata: { allowTokenExchange: true } });
    plainWeb = await app({ name: 'Plain web' });
  });
  afterAll(async () => {
    await server.close();
  });

  /** A raw POST to the token endpoint with HTTP Basic, answering the status and the JSON body. */
  async function tokenRequest(client: { id: string; secret: string }, parameters: Record<string, string>) {
    const response = await fetch(`http://localhost:${server.port}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(parameters),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }
  const subjectToken = async () => (await server.api('POST', '/api/subject-tokens', { body: { userId } })).body.subjectToken as string;
  const exchange = async (parameters: Record<string, string>, client = exchanger) =>
    tokenRequest(client, { grant_type: tokenExchange, subject_token_type: accessTokenType, resource: indicator, ...parameters });

  describe('RFC 8693 §2.2.2: an invalid or unacceptable token is invalid_request', () => {
    it('answers invalid_request to an unknown, a used and a malformed subject_token', async () => {
      expect(await exchange({ subject_token: 'no-such-token' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      const token = await subjectToken();
      expect((await exchange({ subject_token: token })).status).toBe(200);
      expect(await exchange({ subject_token: token })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });

    it('answers invalid_request to an unacceptable actor_token, without spending the subject token', async () => {
      const token = await subjectToken();
      expect(await exchange({ subject_token: token, actor_token: 'not.a.token', actor_token_type: accessTokenType })).toMatchObject({
        status: 400,
        body: { error: 'invalid_request', error_description: 'the actor token is not acceptable' },
      });
      expect((await exchange({ subject_token: token })).status).toBe(200);
    });
  });

  it('RFC 6749 §5.2: a client using a grant type it is not allowed gets unauthorized_client', async () => {
    expect(await exchange({ subject_token: await subjectToken() }, plainWeb)).toMatchObject({ status: 400, body: { error: 'unauthorized_client' } });
    expect(await tokenRequest(plainWeb, { grant_type: 'client_credentials' })).toMatchObject({ status: 400, body: { error: 'unauthorized_client' } });
  });

  describe('RFC 6749 §3.3 and §5.1: scope is in the answer whenever it differs from the request', () => {
    it('says an empty issued scope for client_credentials asking only for an unknown scope', async () => {
      const answer = await tokenRequest(
        { id: server.admin.clientId, secret: server.admin.clientSecret },
        {
          grant_type: 'client_credentials',
          resource: server.identity.managementApiIndicator,
          scope: 'no-such-scope',
        },
      );
      expect(answer).toMatchObject({ status: 200, body: { scope: '' } });
    });

    it('says the narrowed scope of a token exchange, and an empty one', async () => {
      expect((await exchange({ subject_token: await subjectToken(), scope: 'read:orders write:orders' })).body.scope).toBe('read:orders');
      expect((await exchange({ subject_token: await subjectToken(), scope: 'write:orders' })).body.scope).toBe('');
    });
  });

  describe('RFC 8693 §2.1: requested_token_type and audience', () => {
    it('issues for requested_token_type access_token and jwt, naming it as issued_token_type', async () => {
      expect((await exchange({ subject_token: await subjectToken(), requested_token_type: accessTokenType })).body.issued_token_type).toBe(accessTokenType);
      const asJwt = await exchange({ subject_token: await subjectToken(), requested_token_type: jwtTokenType });
      expect(asJwt.body.issued_token_type).toBe(jwtTokenType);
      expect(decodeJwt(asJwt.body.access_token!).aud).toBe(indicator);
    });

    it('refuses any other requested_token_type with invalid_request naming it', async () => {
      const answer = await exchange({ subject_token: await subjectToken(), requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' });
      expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      expect(answer.body.error_description).toContain('urn:ietf:params:oauth:token-type:refresh_token');
    });

    it('accepts an audience that is a known resource indicator, and refuses an unknown or conflicting one with invalid_target', async () => {
      const token = await subjectToken();
      const byAudience = await tokenRequest(exchanger, {
        grant_type: tokenExchange,
        subject_token_type: accessTokenType,
        subject_token: token,
        audience: indicator,
        scope: 'read:orders',
      });
      expect(byAudience).toMatchObject({ status: 200, body: { scope: 'read:orders' } });
      expect(decodeJwt(byAudience.body.access_token!).aud).toBe(indicator);
      expect(
        await tokenRequest(exchanger, {
          grant_type: tokenExchange,
          subject_token_type: accessTokenType,
          subject_token: await subjectToken(),
          audience: 'orders-service',
        }),
      ).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
      expect(await exchange({ subject_token: await subjectToken(), audience: 'https://other.conformance.test' })).toMatchObject({
        status: 400,
        body: { error: 'invalid_target' },
      });
    });
  });

  it('OIDC Core §12.2: an ID token issued on refresh carries no nonce', async () => {
    const flow = await codeFlow(new TestBrowser(server.url), {
      clientId: plainWeb.id,
      redirectUri,
      scope: 'openid offline_access',
      identifier: 'conformant',
      password,
      prompt: 'consent',
    });
    const config = await server.discover(plainWeb.id, plainWeb.secret);
    const first = await oauth.authorizationCodeGrant(config, flow.callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: 'state-1',
      expectedNonce: 'nonce-1',
    });
    expect(decodeJwt(first.id_token!).nonce).toBe('nonce-1');
    const refreshed = await oauth.refreshTokenGrant(config, first.refresh_token!);
    expect(refreshed.id_token).toEqual(expect.any(String));
    expect(decodeJwt(refreshed.id_token!)).not.toHaveProperty('nonce');
    expect(decodeJwt(refreshed.id_token!).sub).toBe(userId);
  });
});
