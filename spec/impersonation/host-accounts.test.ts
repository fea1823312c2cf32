import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'openid-client';

import { startEmbeddedExample } from '../../examples/embedded.js';
import { silentLogger } from '../../lib/logger.js';
import { TestBrowser } from '../support/browser.js';
import { startEmbeddedHost } from '../support/embedded.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const api = 'https://tickets.example.test';
const exchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * A host's own accounts in impersonation (issue 41, point 2): embedded into a deployment whose
 * people live in the host's `findAccount` (examples/embedded.ts, with its own login page), the
 * host's support engineer Bob acts for the host's customer Carol, through `hostAccounts`. Subjects
 * and actors are the host's accounts; suspension and the host's protection hold at issuance and
 * again at exchange; the audit says the true reason.
 */
describe("impersonation of and by an embedding host's own accounts", () => {
  const bootstrap = { clientId: 'embedded-admin', clientSecret: 'embedded-admin-secret-0123456789' };
  let example: Awaited<ReturnType<typeof startEmbeddedExample>>;
  let token: string;
  let console: { id: string };

  beforeAll(async () => {
    example = await startEmbeddedExample({ mongodbUri: testMongoUri(), dbName: uniqueDbName('host-accounts'), bootstrap, logger: silentLogger });
    const admin = await oauth.discovery(new URL(example.issuer), bootstrap.clientId, bootstrap.clientSecret, oauth.ClientSecretBasic(bootstrap.clientSecret), {
      execute: [oauth.allowInsecureRequests],
    });
    token = (await oauth.clientCredentialsGrant(admin, { scope: 'all', resource: example.managementApiIndicator })).access_token;
    const resource = await call('POST', '/resources', { name: 'Tickets', indicator: api });
    await call('POST', `/resources/${resource.body.id}/scopes`, { name: 'tickets:read' });
    console = (
      await call('POST', '/applications', {
        name: 'Support console',
        type: 'SPA',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
        customClientMetadata: { allowTokenExchange: true },
      })
    ).body;
  });
  afterAll(async () => {
    await example.close();
  });

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${example.baseUrl}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (response.status === 204 ? undefined : await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read arbitrary JSON
  }

  const consoleConfig = () => oauth.discovery(new URL(example.issuer), console.id, undefined, oauth.None(), { execute: [oauth.allowInsecureRequests] });

  /** Signs `login` in on the host's own login page, for the support console; answers their access token. */
  async function signInAtHost(login: string, password: string) {
    const config = await consoleConfig();
    const verifier = oauth.randomPKCECodeVerifier();
    const url = oauth.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      state: 'state-1',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const browser = new TestBrowser(example.baseUrl);
    const { url: page } = await browser.follow(url, redirectUri);
    expect(page.pathname).toMatch(/^\/login\//);
    const posted = await browser.form(page.pathname, { login, password });
    expect(posted.status).toBe(303);
    const { url: callback } = await browser.follow(posted.headers.get('location')!, redirectUri);
    const tokens = await oauth.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'state-1' });
    return tokens.access_token;
  }

  const exchange = async (subjectToken: string, actorToken?: string) =>
    oauth.genericGrantRequest(await consoleConfig(), exchangeGrant, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: api,
      scope: 'tickets:read',
      ...(actorToken && { actor_token: actorToken, actor_token_type: accessTokenType }),
    });

  /** The audit's failure reason for the impersonation's refused exchange. */
  async function failureOf(impersonationId: string) {
    const { body } = await call('GET', `/impersonations?impersonationId=${impersonationId}`);
    return (body as Array<{ kind: string; failureReason?: string }>).find(({ kind }) => kind === 'exchange.failed')?.failureReason;
  }

  it("Bob, the host's support engineer, acts for Carol, the host's customer: bound to him, with his own access token, named in act and in the audit", async () => {
    const bobToken = await signInAtHost('bob', 'bob-example-password');
    const issued = await call('POST', '/subject-tokens', { userId: 'carol', actorId: 'bob', reason: 'Carol cannot see her tickets' });
    expect(issued.status).toBe(201);
    // Bound to Bob: without his token, refused, and the audit says why.
    await expect(exchange(issued.body.subjectToken)).rejects.toMatchObject({ error: 'invalid_request' });
    const second = await call('POST', '/subject-tokens', { userId: 'carol', actorId: 'bob' });
    const tokens = await exchange(second.body.subjectToken, bobToken);
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${example.issuer}/jwks`)), { issuer: example.issuer, audience: api });
    expect(payload).toMatchObject({ sub: 'carol', act: { sub: 'bob' }, impersonation_id: second.body.impersonationId });
    // A host account holds no roles of ours: identity scopes only, no API permission.
    expect(payload.scope).toBeUndefined();
    const { body: records } = await call('GET', `/impersonations?impersonationId=${second.body.impersonationId}`);
    expect(records).toEqual(expect.arrayContaining([expect.objectContaining({ targetUserId: 'carol', actorUserId: 'bob' })]));
    expect(await failureOf(issued.body.impersonationId)).toBe('the subject token is bound to an actor: its actor token is required');
  });

  it("refuses the host's suspended and protected accounts, and an id neither the host nor we know, at issuance", async () => {
    const suspended = await call('POST', '/subject-tokens', { userId: 'dana' });
    expect({ status: suspended.status, code: suspended.body.code }).toEqual({ status: 422, code: 'user.suspended' });
    const protectedOne = await call('POST', '/subject-tokens', { userId: 'erin' });
    expect({ status: protectedOne.status, code: protectedOne.body.code }).toEqual({ status: 403, code: 'impersonation.user_protected' });
    const unknown = await call('POST', '/subject-tokens', { userId: 'nobody' });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'entity.not_exists_with_id' });
    const suspendedActor = await call('POST', '/subject-tokens', { userId: 'carol', actorId: 'dana' });
    expect({ status: suspendedActor.status, code: suspendedActor.body.code }).toEqual({ status: 422, code: 'user.suspended' });
    const unknownActor = await call('POST', '/subject-tokens', { userId: 'carol', actorId: 'nobody' });
    expect(unknownActor.status).toBe(404);
  });

  it('asks the host again at exchange: a subject or an actor suspended after the token was issued is refused, and the audit says which', async () => {
    const { directory } = example;
    const bobToken = await signInAtHost('bob', 'bob-example-password');
    const forCarol = await call('POST', '/subject-tokens', { userId: 'carol', actorId: 'bob' });
    // One of our users, for the host's engineer to act for: ours and the host's mix.
    const ours = await call('POST', '/users', { username: 'our_customer' });
    const forOurs = await call('POST', '/subject-tokens', { userId: ours.body.id, actorId: 'bob' });
    expect([forCarol.status, forOurs.status]).toEqual([201, 201]);

    directory.suspend('carol');
    await expect(exchange(forCarol.body.subjectToken, bobToken)).rejects.toMatchObject({ error: 'invalid_request' });
    expect(await failureOf(forCarol.body.impersonationId)).toBe('the user is suspended');

    directory.suspend('bob');
    await expect(exchange(forOurs.body.subjectToken, bobToken)).rejects.toMatchObject({ error: 'invalid_request' });
    expect(await failureOf(forOurs.body.impersonationId)).toBe('the actor is suspended');
  });
});

describe("a host's account lookup that fails", () => {
  it('is an outage (503 service.host_accounts_unavailable), never a refusal', async () => {
    const host = await startEmbeddedHost('host-accounts-down', {
      hostAccounts: {
        find() {
          throw new Error('the host directory is down');
        },
      },
    });
    try {
      const answer = await host.api('POST', '/api/subject-tokens', { userId: 'someone' });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 503, code: 'service.host_accounts_unavailable' });
    } finally {
      await host.close();
    }
  });
});
