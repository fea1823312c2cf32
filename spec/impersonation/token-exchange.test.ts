import { randomBytes } from 'node:crypto';

import * as oauth from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';

import { sha256 } from '../../lib/ids.js';
import { secretBox } from '../../lib/mfa/secret-box.js';
import { subjectTokenSeal } from '../../impersonation/subject-token.js';
import { loadProviderSecrets } from '../../provider/keys.js';
import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
const engineerPassword = 'correct horse battery staple';
const supportCallback = 'https://support.test/cb';

describe('impersonation: subject tokens and token exchange', () => {
  let server: TestServer;
  let resource: { id: string; indicator: string };
  let target: { id: string };
  let actor: { id: string };
  let spa: { id: string };
  let web: { id: string; secret: string };

  beforeAll(async () => {
    server = await startTestServer('exchange');
    const post = server.create;
    resource = await post('/api/resources', { name: 'Orders', indicator: 'https://orders.test' });
    const read = await post(`/api/resources/${resource.id}/scopes`, { name: 'read:orders' });
    await post(`/api/resources/${resource.id}/scopes`, { name: 'write:orders' });
    const role = await post('/api/roles', { name: 'Customer', scopeIds: [read.id] });
    target = await post('/api/users', { username: 'customer', name: 'Cus Tomer' });
    actor = await post('/api/users', { username: 'support_engineer', password: engineerPassword });
    await post(`/api/users/${target.id}/roles`, { roleIds: [role.id] });
    await post(`/api/users/${actor.id}/roles`, { roleIds: [role.id] });
    spa = await post('/api/applications', { name: 'Support console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    web = await post('/api/applications', {
      name: 'Support web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['https://support.test/cb'] },
      customClientMetadata: { allowTokenExchange: true },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  const subjectToken = async (userId: string, context: Record<string, unknown> = { ticketId: 'T-1', reason: 'bug report' }) => {
    const { status, body } = await server.api('POST', '/api/subject-tokens', { body: { userId, context } });
    expect(status).toBe(201);
    return body as { subjectToken: string; expiresIn: number };
  };
  const exchange = async (config: oauth.Configuration, parameters: Record<string, string>) =>
    oauth.genericGrantRequest(config, grantType, { subject_token_type: accessTokenType, resource: resource.indicator, ...parameters });
  const publicClient = () => server.discover(spa.id);
  const jwks = () => createRemoteJWKSet(new URL(`http://localhost:${server.port}/oidc/jwks`));
  const verify = (token: string) => jwtVerify(token, jwks(), { issuer: server.issuer, audience: resource.indicator, typ: 'at+jwt' });
  /** The support engineer's own access token: it signs in to the support web app (code flow), as an actor does. */
  const ownToken = async (username = 'support_engineer', extra: { resource?: string; scope?: string } = {}) => {
    const flow = await codeFlow(new TestBrowser(server.url), {
      clientId: web.id,
      redirectUri: supportCallback,
      scope: extra.scope ?? 'openid',
      identifier: username,
      password: engineerPassword,
      ...(extra.resource && { resource: extra.resource }),
    });
    return (await redeem(server, { clientId: web.id, clientSecret: web.secret }, flow, extra.resource)).access_token;
  };

  /** Seals facts as the deployment does: with its key, read from its database. */
  const sealer = async () => subjectTokenSeal((await loadProviderSecrets(server.database.db)).mfaKey);

  it('issues a subject token sealed (AES-256-GCM) with its facts, opaque to its holder, stored only as its hash', async () => {
    const { subjectToken: token, expiresIn } = await subjectToken(target.id);
    expect(expiresIn).toBe(600);
    // Nothing of what it says can be read from it: not the user, not the context.
    const visible = token
      .split('.')
      .map((part) => Buffer.from(part, 'base64url').toString('latin1'))
      .join(' ');
    for (const secret of [target.id, 'bug report', 'T-1']) expect(`${token} ${visible}`).not.toContain(secret);
    const stored = await server.database.db.collection('subject_tokens').findOne({ _id: sha256(token) as never });
    expect(stored).toMatchObject({ userId: target.id, clientId: server.admin.clientId, context: { ticketId: 'T-1', reason: 'bug report' } });
    expect(JSON.stringify(await server.database.db.collection('subject_tokens').find({}).toArray())).not.toContain(token);
    // The deployment's key opens it: its user, issuer, terms and the user's role ids then.
    const held = await server.database.db.collection<{ userId: string; roleId: string }>('users_roles').find({ userId: target.id }).toArray();
    expect((await sealer()).open(token)).toMatchObject({
      userId: target.id,
      clientId: server.admin.clientId,
      context: { ticketId: 'T-1', reason: 'bug report' },
      roleIds: held.map(({ roleId }) => roleId),
      expiresAt: (stored!.expiresAt as Date).getTime(),
    });
  });

  it('refuses a subject token altered, forged under another key, or sealed for another purpose with invalid_request (RFC 8693 §2.2.2)', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const facts = (await sealer()).open(token)!;
    const [version, iv, body] = token.split('.') as [string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[3] ^= 1;
    const mfaKey = (await loadProviderSecrets(server.database.db)).mfaKey;
    const forgeries = [
      `${version}.${iv}.${flipped.toString('base64url')}`,
      `${version}.${iv}.${body.slice(0, 40)}`,
      `${version}.${Buffer.alloc(12).toString('base64url')}.${body}`,
      // The same facts with more roles, sealed under a key that is not the deployment's.
      subjectTokenSeal(randomBytes(32)).seal({ ...facts, roleIds: [...facts.roleIds, 'admin'] }),
      // Sealed with the deployment's MFA key itself (the subject token key is derived from it, for its purpose only).
      secretBox(mfaKey).seal(JSON.stringify(facts), 'oidc-identity subject token'),
    ];
    const config = await publicClient();
    for (const forged of forgeries) {
      await expect(exchange(config, { subject_token: forged, scope: 'read:orders' })).rejects.toMatchObject({ error: 'invalid_request' });
    }
    // The real one was not spent by any of them.
    expect((await exchange(config, { subject_token: token, scope: 'read:orders' })).scope).toBe('read:orders');
  });

  it('exchanges it, for a public client, for a JWT that represents the user and is bound to the resource', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const response = await exchange(await publicClient(), { subject_token: token, scope: 'openid profile read:orders write:orders' });
    // The resource allows an hour; the impersonation policy's ceiling (15 minutes by default) is lower.
    expect(response).toMatchObject({ issued_token_type: accessTokenType, token_type: 'bearer', expires_in: 900, scope: 'openid profile read:orders' });
    expect(response.refresh_token).toBeUndefined();
    expect(response.id_token).toBeUndefined();
    const { payload } = await verify(response.access_token);
    expect(payload).toMatchObject({ sub: target.id, aud: resource.indicator, client_id: spa.id, scope: 'openid profile read:orders', iss: server.issuer });
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload).not.toHaveProperty('act');
  });

  it("accepts Logto's subject token type, urn:logto:token-type:impersonation_token (Logto's integration-tests api/oidc/token-exchange/index.test.ts), as the access_token type", async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const response = await exchange(await publicClient(), {
      subject_token: token,
      subject_token_type: 'urn:logto:token-type:impersonation_token',
      scope: 'openid read:orders',
    });
    expect(response).toMatchObject({ issued_token_type: accessTokenType, scope: 'openid read:orders' });
    expect((await verify(response.access_token)).payload).toMatchObject({ sub: target.id });
  });

  it("grants a resource's permission only when the user holds that resource's own permission, not one of the same name elsewhere", async () => {
    const { body: other } = await server.api('POST', '/api/resources', { body: { name: 'Other', indicator: 'https://other.test' } });
    await server.api('POST', `/api/resources/${other.id}/scopes`, { body: { name: 'read:orders' } });
    const { subjectToken: token } = await subjectToken(target.id);
    const config = await publicClient();
    const response = await oauth.genericGrantRequest(config, grantType, {
      subject_token: token,
      subject_token_type: accessTokenType,
      resource: 'https://other.test',
      scope: 'openid read:orders',
    });
    expect(response.scope).toBe('openid');
  });

  it('exchanges it for a confidential client authenticated with HTTP Basic', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const config = await server.discover(web.id, web.secret);
    const response = await exchange(config, { subject_token: token, scope: 'read:orders' });
    expect((await verify(response.access_token)).payload).toMatchObject({ sub: target.id, client_id: web.id, scope: 'read:orders' });
  });

  it('answers 401 invalid_client to a confidential client without Basic credentials, keeping the subject token', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const response = await fetch(`http://localhost:${server.port}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: grantType,
        client_id: web.id,
        subject_token: token,
        subject_token_type: accessTokenType,
        resource: resource.indicator,
      }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
    expect((await exchange(await publicClient(), { subject_token: token })).access_token).toEqual(expect.any(String));
  });

  it('lets each subject token be used once', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const config = await publicClient();
    await exchange(config, { subject_token: token });
    await expect(exchange(config, { subject_token: token })).rejects.toMatchObject({ error: 'invalid_request' });
  });

  it('refuses an expired subject token: its expiry is sealed in it, whatever its record says', async () => {
    const { subjectToken: live } = await subjectToken(target.id);
    const facts = (await sealer()).open(live)!;
    const expired = (await sealer()).seal({ ...facts, expiresAt: Date.now() - 1000 });
    await server.database.db.collection('subject_tokens').insertOne({
      _id: sha256(expired) as never,
      userId: target.id,
      context: facts.context,
      clientId: facts.clientId,
      impersonationId: facts.impersonationId,
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + 600_000),
    });
    await expect(exchange(await publicClient(), { subject_token: expired })).rejects.toMatchObject({ error: 'invalid_request' });
  });

  it.each([
    ['a missing subject token', { subject_token: '' }, 'invalid_request'],
    ['a wrong subject token type', { subject_token: 'x', subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }, 'invalid_request'],
    ['an actor token type without an actor token', { subject_token: 'x', actor_token_type: accessTokenType }, 'invalid_request'],
    ['an unknown subject token', { subject_token: 'not-a-subject-token' }, 'invalid_request'],
    ['an unknown resource', { subject_token: 'x', resource: 'https://unknown.test' }, 'invalid_target'],
  ])('refuses %s', async (_case, parameters, error) => {
    await expect(exchange(await publicClient(), parameters as Record<string, string>)).rejects.toMatchObject({ error });
  });

  it('refuses a request without a resource with invalid_target', async () => {
    const { subjectToken: token } = await subjectToken(target.id);
    const config = await publicClient();
    await expect(oauth.genericGrantRequest(config, grantType, { subject_token: token, subject_token_type: accessTokenType })).rejects.toMatchObject({
      error: 'invalid_target',
    });
  });

  // oidc-provider answers a grant type the client may not use with invalid_request.
  it('refuses applications that may not exchange tokens', async () => {
    const { body: plain } = await server.api('POST', '/api/applications', { body: { name: 'Plain SPA', type: 'SPA' } });
    const { subjectToken: token } = await subjectToken(target.id);
    await expect(exchange(await server.discover(plain.id), { subject_token: token })).rejects.toMatchObject({
      error: 'unauthorized_client',
      error_description: 'requested grant type is not allowed for this client',
    });
  });

  it('never lets a third-party application exchange tokens, even when the setting is on', async () => {
    const { body: third } = await server.api('POST', '/api/applications', {
      body: {
        name: 'Partner',
        type: 'Traditional',
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: ['https://partner.test/cb'] },
        customClientMetadata: { allowTokenExchange: true },
      },
    });
    const { subjectToken: token } = await subjectToken(target.id);
    await expect(exchange(await server.discover(third.id, third.secret), { subject_token: token })).rejects.toMatchObject({
      error: 'unauthorized_client',
      error_description: 'requested grant type is not allowed for this client',
    });
  });

  it('refuses a subject token whose user was suspended or deleted after issuance', async () => {
    const { body: victim } = await server.api('POST', '/api/users', { body: { username: 'soon_suspended' } });
    const first = await subjectToken(victim.id);
    const second = await subjectToken(victim.id);
    await server.api('PATCH', `/api/users/${victim.id}/is-suspended`, { body: { isSuspended: true } });
    await expect(exchange(await publicClient(), { subject_token: first.subjectToken })).rejects.toMatchObject({ error: 'invalid_request' });
    await server.api('DELETE', `/api/users/${victim.id}`);
    await expect(exchange(await publicClient(), { subject_token: second.subjectToken })).rejects.toMatchObject({ error: 'invalid_request' });
  });

  it("names the actor in `act` when the actor's own access token is given, opaque or JWT", async () => {
    const config = await publicClient();
    for (const actorToken of [await ownToken(), await ownToken('support_engineer', { resource: resource.indicator, scope: 'openid read:orders' })]) {
      const asTarget = await exchange(config, {
        subject_token: (await subjectToken(target.id)).subjectToken,
        scope: 'openid read:orders',
        actor_token: actorToken,
        actor_token_type: accessTokenType,
      });
      expect((await verify(asTarget.access_token)).payload.act).toEqual({ sub: actor.id });
    }
  });

  it("refuses as actor a token minted by an exchange, one naming the subject token's own user, and a suspended or deleted actor, without spending the subject token", async () => {
    const config = await publicClient();
    const { subjectToken: token } = await subjectToken(target.id);
    const exchanged = (await exchange(config, { subject_token: (await subjectToken(actor.id)).subjectToken, scope: 'openid' })).access_token;
    const { body: self } = await server.api('POST', '/api/users', { body: { username: 'acts_as_self', password: engineerPassword } });
    const { body: selfToken } = await server.api('POST', '/api/subject-tokens', { body: { userId: self.id } });
    const selfActor = await ownToken('acts_as_self');
    await expect(exchange(config, { subject_token: selfToken.subjectToken, actor_token: selfActor, actor_token_type: accessTokenType })).rejects.toMatchObject({
      error: 'invalid_request',
    });

    const { body: leaving } = await server.api('POST', '/api/users', { body: { username: 'leaving_engineer', password: engineerPassword } });
    const suspendedActor = await ownToken('leaving_engineer', { resource: resource.indicator, scope: 'openid' });
    await server.api('PATCH', `/api/users/${leaving.id}/is-suspended`, { body: { isSuspended: true } });
    const { body: gone } = await server.api('POST', '/api/users', { body: { username: 'gone_engineer', password: engineerPassword } });
    const deletedActor = await ownToken('gone_engineer', { resource: resource.indicator, scope: 'openid' });
    await server.api('DELETE', `/api/users/${gone.id}`);

    for (const actorToken of [exchanged, suspendedActor, deletedActor]) {
      await expect(exchange(config, { subject_token: token, actor_token: actorToken, actor_token_type: accessTokenType })).rejects.toMatchObject({
        error: 'invalid_request',
      });
    }
    const reasons = (await server.api('GET', `/api/impersonations?targetUserId=${target.id}`)).body
      .filter(({ kind }: { kind: string }) => kind === 'exchange.failed')
      .map(({ failureReason }: { failureReason: string }) => failureReason);
    expect(reasons).toEqual(expect.arrayContaining(['the actor token was minted by a token exchange', 'the actor is suspended', 'the actor no longer exists']));
    expect((await exchange(config, { subject_token: token })).access_token).toEqual(expect.any(String));
  });

  it("refuses an actor token that is not a user's access token of this provider with invalid_request (RFC 8693 §2.2.2), without spending the subject token", async () => {
    const config = await publicClient();
    const { subjectToken: token } = await subjectToken(target.id);
    const machineToken = await server.adminToken();
    for (const actorToken of ['garbage', machineToken, `${machineToken.slice(0, -4)}AAAA`]) {
      await expect(exchange(config, { subject_token: token, actor_token: actorToken, actor_token_type: accessTokenType })).rejects.toMatchObject({
        error: 'invalid_request',
      });
    }
    expect((await exchange(config, { subject_token: token })).access_token).toEqual(expect.any(String));
  });

  it('audits issuance and every exchange attempt, filterable by target, actor and time', async () => {
    const { body: victim } = await server.api('POST', '/api/users', { body: { username: 'audited' } });
    const since = Date.now();
    const config = await publicClient();
    const actorToken = await ownToken();
    const { subjectToken: token } = await subjectToken(victim.id, { ticketId: 'T-42', reason: 'cannot check out' });
    const issued = await exchange(config, { subject_token: token, actor_token: actorToken, actor_token_type: accessTokenType });
    await expect(exchange(config, { subject_token: token })).rejects.toMatchObject({ error: 'invalid_request' });

    const { status, body, headers } = await server.api('GET', `/api/impersonations?targetUserId=${victim.id}`);
    expect(status).toBe(200);
    expect(headers.get('total-number')).toBe('3');
    expect(body.map(({ kind }: { kind: string }) => kind)).toEqual(['exchange.failed', 'exchange.succeeded', 'subject_token.issued']);
    expect(body[0]).toMatchObject({ failureReason: 'the subject token is invalid, expired or already used', clientId: spa.id, targetUserId: victim.id });
    expect(body[1]).toMatchObject({
      targetUserId: victim.id,
      actorUserId: actor.id,
      clientId: spa.id,
      issuerClientId: server.admin.clientId,
      context: { ticketId: 'T-42', reason: 'cannot check out' },
      resource: resource.indicator,
      tokenId: decodeJwt(issued.access_token).jti,
    });
    expect(body[2]).toMatchObject({ issuerClientId: server.admin.clientId, context: { ticketId: 'T-42' } });
    expect(JSON.stringify(body)).not.toContain(token);

    const byActor = await server.api('GET', `/api/impersonations?actorUserId=${actor.id}&since=${since}`);
    expect(byActor.body.map(({ targetUserId }: { targetUserId: string }) => targetUserId)).toEqual([victim.id]);
    expect((await server.api('GET', `/api/impersonations?targetUserId=${victim.id}&until=${since - 1}`)).body).toEqual([]);
    expect((await server.api('GET', '/api/impersonations?since=yesterday')).status).toBe(400);
  });
});
