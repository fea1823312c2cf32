import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

import * as oauth from 'openid-client';

import { lifecycleEvents } from '../../hooks/catalog.js';
import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const signedOut = 'http://127.0.0.1:9/signed-out';
const password = 'correct horse battery staple';

/** A loopback endpoint that drops every connection: a back-channel logout there fails, whatever else runs on the machine. */
async function droppingEndpoint(): Promise<{ url: string; close(): Promise<unknown> }> {
  const dropping = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(dropping.address() as AddressInfo).port}/logout`,
    close: () => new Promise((resolve) => dropping.close(resolve)),
  };
}

/**
 * The provider's lifecycle as webhooks (issue 38): each event driven by the real flow (the sign-in
 * pages, openid-client at the token, revocation and end-session endpoints, the Management API),
 * received once, signed, and as its schema says (the receiver checks every body against it).
 */
describe('lifecycle events', () => {
  let server: TestServer;
  let receiver: Receiver;
  let web: { clientId: string; clientSecret: string };
  /** A public client (a single-page application): its refresh tokens rotate at every use. */
  let spa: { clientId: string; clientSecret?: string };
  let userId: string;
  let ip = 40;
  const nextIp = () => `203.0.113.${(ip += 1)}`;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('lifecycle', { ...hookTestEnv, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' });
    await subscribe(server, receiver, [...lifecycleEvents, 'User.Roles.Updated'], 'lifecycle');
    userId = (await server.create('/api/users', { username: 'ada', password })).id;
    const app = await server.create('/api/applications', {
      name: 'Web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [signedOut] },
    });
    web = { clientId: app.id, clientSecret: app.secret };
    const single = await server.create('/api/applications', {
      name: 'SPA',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    spa = { clientId: single.id };
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const named = (received: Received[], event: string) => received.filter(({ body }) => body.event === event).map(({ body }) => body);

  /** Signs ada in to `client` through the pages and redeems the code; `offline` asks for a refresh token. */
  async function signIn(client: { clientId: string; clientSecret?: string } = web, { offline = false, browser = new TestBrowser(server.url, nextIp()) } = {}) {
    const flow = await codeFlow(browser, {
      clientId: client.clientId,
      redirectUri,
      scope: offline ? 'openid offline_access' : 'openid',
      identifier: 'ada',
      password,
      // OpenID Connect Core §11: offline_access is granted only with prompt=consent.
      ...(offline && { prompt: 'consent' }),
    });
    return { flow, browser, tokens: await redeem(server, client, flow) };
  }

  /** Ends the browser's session at the end-session endpoint through its confirmation page; `idTokenHint` makes it RP-initiated. */
  async function signOut(browser: TestBrowser, idTokenHint?: string) {
    const end = new URL(`${server.issuer}/session/end`);
    if (idTokenHint) end.search = new URLSearchParams({ id_token_hint: idTokenHint, post_logout_redirect_uri: signedOut }).toString();
    const html = await (await browser.go(end)).text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const action = new URL(/action="([^"]+)"/.exec(html)![1]!, end);
    const confirmed = await browser.form(action.pathname, { xsrf, logout: 'yes' });
    expect(confirmed.status).toBe(303);
  }

  it('a sign-in to a first-party application: one Grant.Created with what was granted', async () => {
    const received = await eventsDuring(server, receiver, () => signIn());
    const [created, ...more] = named(received, 'Grant.Created');
    expect(more).toEqual([]);
    expect(created).toMatchObject({ userId, applicationId: web.clientId, scopes: ['openid'], resources: [], entity: { type: 'Grant', id: created.grantId } });
    expect(named(received, 'Grant.Revoked')).toEqual([]);
  });

  it('RFC 6749 §4.1.2: a code redeemed twice is refused and announced (AuthorizationCode.ReplayDetected, Grant.Revoked code_replay)', async () => {
    let code = '';
    const received = await eventsDuring(server, receiver, async () => {
      const { flow } = await signIn();
      code = flow.callback.searchParams.get('code')!;
      await expect(redeem(server, web, flow)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
    const grantId = named(received, 'Grant.Created')[0].grantId;
    expect(named(received, 'AuthorizationCode.ReplayDetected')).toEqual([
      expect.objectContaining({ grantId, applicationId: web.clientId, ip: expect.any(String), entity: { type: 'Grant', id: grantId } }),
    ]);
    expect(named(received, 'Grant.Revoked')).toEqual([expect.objectContaining({ grantId, applicationId: web.clientId, cause: 'code_replay' })]);
    // No payload carries the code.
    expect(received.some(({ raw }) => raw.includes(code))).toBe(false);
  });

  it('a rotated refresh token presented again is refused and announced (RefreshToken.ReuseDetected, Grant.Revoked refresh_token_reuse)', async () => {
    const { tokens } = await signIn(spa, { offline: true });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const config = await server.discover(spa.clientId);
    const rotated = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    const received = await eventsDuring(server, receiver, async () => {
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
    const [reuse, ...more] = named(received, 'RefreshToken.ReuseDetected');
    expect(more).toEqual([]);
    expect(reuse).toMatchObject({ userId, applicationId: spa.clientId, grantId: expect.any(String), ip: expect.any(String) });
    expect(named(received, 'Grant.Revoked')).toEqual([expect.objectContaining({ grantId: reuse.grantId, userId, cause: 'refresh_token_reuse' })]);
    // The grant is gone: the rotated token the thief's victim holds stops working too.
    await expect(oauth.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    for (const token of [tokens.refresh_token!, rotated.refresh_token!]) expect(received.some(({ raw }) => raw.includes(token))).toBe(false);
  });

  it('RFC 7009 §2.1: a refresh token revoked at the revocation endpoint ends its grant (Grant.Revoked revocation_endpoint)', async () => {
    const { tokens } = await signIn(web, { offline: true });
    const config = await server.discover(web.clientId, web.clientSecret);
    const received = await eventsDuring(server, receiver, () => oauth.tokenRevocation(config, tokens.refresh_token!));
    expect(named(received, 'Grant.Revoked')).toEqual([expect.objectContaining({ userId, applicationId: web.clientId, cause: 'revocation_endpoint' })]);
    await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('RFC 7009 §2.1: a client cannot revoke a token issued to another; nothing is revoked or announced', async () => {
    const { tokens } = await signIn(web, { offline: true });
    const other = await server.discover(spa.clientId);
    const received = await eventsDuring(server, receiver, () => oauth.tokenRevocation(other, tokens.refresh_token!).catch(() => undefined));
    expect(named(received, 'Grant.Revoked')).toEqual([]);
    const own = await server.discover(web.clientId, web.clientSecret);
    await expect(oauth.refreshTokenGrant(own, tokens.refresh_token!)).resolves.toMatchObject({ access_token: expect.any(String) });
  });

  it('BackchannelLogout.Failed says what the application answered, without its URI’s query or user information', async () => {
    const refusing = createHttpServer((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = refusing.address() as AddressInfo;
      const app = await server.create('/api/applications', {
        name: 'Refusing',
        type: 'Traditional',
        oidcClientMetadata: {
          redirectUris: [redirectUri],
          postLogoutRedirectUris: [signedOut],
          backchannelLogoutUri: `http://127.0.0.1:${port}/logout?key=hunter2`,
        },
      });
      // oidc-provider gives the application 2.5 s (its httpOptions' default). On a loaded machine this
      // process can spend them before the refusing server, which runs in it too, answers: the
      // provider then says it timed out, which is not what this test asks about, so it signs in and
      // out again (at most three times).
      let failed: { error: string } | undefined;
      for (let round = 0; round < 3 && (!failed || /aborted due to timeout/.test(failed.error)); round += 1) {
        const { browser, tokens } = await signIn({ clientId: app.id, clientSecret: app.secret });
        const received = await eventsDuring(server, receiver, () => signOut(browser, tokens.id_token!));
        [failed] = named(received, 'BackchannelLogout.Failed') as Array<{ error: string }>;
        expect(received.some(({ raw }) => raw.includes('hunter2'))).toBe(false);
      }
      expect(failed!.error).toContain('500');
      expect(failed!.error).toContain(`http://127.0.0.1:${port}/logout`);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });

  it('RP-initiated logout: PostSignOut (initiatedBy rp), the grant revoked (end_session), and a back-channel logout that failed', async () => {
    const dropping = await droppingEndpoint();
    const unreachable = await server.create('/api/applications', {
      name: 'Gone away',
      type: 'Traditional',
      oidcClientMetadata: {
        redirectUris: [redirectUri],
        postLogoutRedirectUris: [signedOut],
        backchannelLogoutUri: dropping.url,
      },
    });
    const client = { clientId: unreachable.id as string, clientSecret: unreachable.secret as string };
    const { browser, tokens } = await signIn(client);
    // The session cookie's value is the session's `jti`: a credential no event may carry.
    const cookieValue = browser.cookies.get('_session');
    expect(cookieValue).toEqual(expect.any(String));
    const received = await eventsDuring(server, receiver, () => signOut(browser, tokens.id_token!));
    await dropping.close();
    expect(received.some(({ raw }) => raw.includes(cookieValue!))).toBe(false);
    const [signOutEvent, ...more] = named(received, 'PostSignOut');
    expect(more).toEqual([]);
    expect(signOutEvent).toMatchObject({ userId, applicationIds: [client.clientId], initiatedBy: 'rp', entity: { type: 'Session' } });
    expect(signOutEvent.entity.id).toBe(signOutEvent.sessionId);
    expect(named(received, 'Grant.Revoked')).toEqual([expect.objectContaining({ userId, applicationId: client.clientId, cause: 'end_session' })]);
    const [failed, ...moreFailed] = named(received, 'BackchannelLogout.Failed');
    expect(moreFailed).toEqual([]);
    expect(failed).toMatchObject({
      userId,
      applicationId: client.clientId,
      sessionId: signOutEvent.sessionId,
      sid: expect.any(String),
      error: expect.any(String),
    });
    // The provider's message for a dropped connection ("fetch failed") says neither why nor where; the event says both.
    expect(failed.error).toContain(dropping.url);
    expect(failed.error).toMatch(/closed|reset|socket/i);
  });

  it('a sign-out the user starts at the end-session endpoint: PostSignOut (initiatedBy user) naming every application of the session', async () => {
    const browser = new TestBrowser(server.url, nextIp());
    await signIn(web, { browser });
    const received = await eventsDuring(server, receiver, () => signOut(browser));
    expect(named(received, 'PostSignOut')).toEqual([expect.objectContaining({ userId, applicationIds: [web.clientId], initiatedBy: 'user' })]);
  });

  it('a suspension ends every session and grant of the user: Session.Revoked and Grant.Revoked (suspension), once each', async () => {
    const other = (await server.create('/api/users', { username: 'grace', password })).id;
    const first = new TestBrowser(server.url, nextIp());
    const second = new TestBrowser(server.url, nextIp());
    for (const browser of [first, second]) {
      await codeFlow(browser, { clientId: web.clientId, redirectUri, scope: 'openid', identifier: 'grace', password });
    }
    const received = await eventsDuring(server, receiver, () => server.api('PATCH', `/api/users/${other}/is-suspended`, { body: { isSuspended: true } }));
    const sessions = named(received, 'Session.Revoked');
    expect(sessions).toHaveLength(2);
    for (const session of sessions)
      expect(session).toMatchObject({ userId: other, applicationIds: [web.clientId], cause: 'suspension', entity: { type: 'Session' } });
    expect(new Set(sessions.map(({ sessionId }) => sessionId)).size).toBe(2);
    const grants = named(received, 'Grant.Revoked');
    expect(grants).toHaveLength(2);
    for (const grant of grants) expect(grant).toMatchObject({ userId: other, applicationId: web.clientId, cause: 'suspension' });
  });

  it('User.Roles.Updated names the roles given and taken (addedRoleIds, removedRoleIds), only when not empty', async () => {
    const role = await server.create('/api/roles', { name: 'lifecycle-reader' });
    let received = await eventsDuring(server, receiver, () => server.create(`/api/users/${userId}/roles`, { roleIds: [role.id] }));
    expect(named(received, 'User.Roles.Updated')).toEqual([expect.objectContaining({ userId, addedRoleIds: [role.id], entity: { type: 'User', id: userId } })]);
    expect(named(received, 'User.Roles.Updated')[0]).not.toHaveProperty('removedRoleIds');
    received = await eventsDuring(server, receiver, () => server.api('DELETE', `/api/users/${userId}/roles/${role.id}`));
    expect(named(received, 'User.Roles.Updated')).toEqual([expect.objectContaining({ userId, removedRoleIds: [role.id] })]);
  });

  it('Organization.Membership.Roles.Updated names the organization, the member and the organization roles given and taken', async () => {
    await subscribe(server, receiver, ['Organization.Membership.Roles.Updated'], 'organization roles');
    const organization = await server.create('/api/organizations', { name: 'Lifecycle Org' });
    const orgRole = await server.create('/api/organization-roles', { name: 'lifecycle-editor' });
    await server.create(`/api/organizations/${organization.id}/users`, { userIds: [userId] });
    let received = await eventsDuring(server, receiver, () =>
      server.create(`/api/organizations/${organization.id}/users/${userId}/roles`, { organizationRoleIds: [orgRole.id] }),
    );
    expect(named(received, 'Organization.Membership.Roles.Updated')).toEqual([
      expect.objectContaining({ organizationId: organization.id, userId, addedRoleIds: [orgRole.id], entity: { type: 'Organization', id: organization.id } }),
    ]);
    received = await eventsDuring(server, receiver, () => server.api('DELETE', `/api/organizations/${organization.id}/users/${userId}/roles/${orgRole.id}`));
    expect(named(received, 'Organization.Membership.Roles.Updated')).toEqual([expect.objectContaining({ userId, removedRoleIds: [orgRole.id] })]);
    expect(named(received, 'Organization.Membership.Roles.Updated')[0]).not.toHaveProperty('addedRoleIds');
  });

  it('a default role given at creation is announced as User.Roles.Updated with the new user', async () => {
    const role = await server.create('/api/roles', { name: 'lifecycle-default', isDefault: true });
    try {
      const received = await eventsDuring(server, receiver, () => server.create('/api/users', { username: 'newcomer' }));
      const [given] = named(received, 'User.Roles.Updated');
      expect(given).toMatchObject({ addedRoleIds: [role.id] });
    } finally {
      await server.api('DELETE', `/api/roles/${role.id}`);
    }
  });
});
