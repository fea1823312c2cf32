import { csrfOf } from '../support/browser.js';
import { eventsDuring, subscribe } from '../support/hooks.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, redirectUri, strong } from './world.js';

/**
 * One-time tokens and magic links (issue 39, point 4): Logto's /api/one-time-tokens, the Experience
 * API's `verification/one-time-token/verify`, the sign-in page's `one_time_token` and `login_hint`,
 * and just-in-time membership by a token's `jitOrganizationIds` (point 5). Unlike Logto, the token
 * is kept only as its hash and shown once.
 */
describe('one-time tokens and magic links', () => {
  const { world, newSignIn, createUser, codeFrom } = experienceWorld('one-time-tokens');
  let server: TestServer;
  let org: { id: string };

  beforeAll(async () => {
    ({ server } = world);
    org = await server.create('/api/organizations', { name: 'Linked Inc' });
    await subscribe(server, world.receiver, ['Organization.Membership.Updated'], 'membership hook');
  });

  const issue = (body: Record<string, unknown>) => server.api('POST', '/api/one-time-tokens', { body });

  it('makes a token shown once and kept hashed; verify spends it once; expired, revoked and deleted as Logto', async () => {
    const made = await issue({ email: 'Token@Example.com', expiresIn: 600, context: { jitOrganizationIds: [org.id] } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ email: 'token@example.com', status: 'active', context: { jitOrganizationIds: [org.id] }, token: expect.any(String) });
    const stored = await server.database.db.collection('one_time_tokens').findOne({ _id: made.body.id });
    expect(JSON.stringify(stored)).not.toContain(made.body.token);
    const read = await server.api('GET', `/api/one-time-tokens/${made.body.id}`);
    expect(read.body).not.toHaveProperty('token');
    expect((await server.api('GET', '/api/one-time-tokens?email=token@example.com')).body.map(({ id }: { id: string }) => id)).toEqual([made.body.id]);

    const verify = (token: string, email = 'token@example.com') => server.api('POST', '/api/one-time-tokens/verify', { body: { token, email } });
    expect((await verify(made.body.token, 'other@example.com')).body.code).toBe('one_time_token.active_token_not_found');
    const answers = await Promise.all([verify(made.body.token), verify(made.body.token), verify(made.body.token)]);
    expect(answers.map(({ status }) => status).sort()).toEqual([200, 404, 404]);
    expect(answers.find(({ status }) => status === 200)!.body.status).toBe('consumed');

    const old = await issue({ email: 'late@example.com' });
    await server.database.db.collection('one_time_tokens').updateOne({ _id: old.body.id }, { $set: { expiresAt: Date.now() - 1 } });
    expect((await server.api('GET', `/api/one-time-tokens/${old.body.id}`)).body.status).toBe('expired');
    const late = await verify(old.body.token, 'late@example.com');
    expect({ status: late.status, code: late.body.code }).toEqual({ status: 400, code: 'one_time_token.token_expired' });

    const revoked = await issue({ email: 'revoked@example.com' });
    expect((await server.api('PUT', `/api/one-time-tokens/${revoked.body.id}/status`, { body: { status: 'revoked' } })).body.status).toBe('revoked');
    expect((await verify(revoked.body.token, 'revoked@example.com')).status).toBe(404);
    expect((await server.api('DELETE', `/api/one-time-tokens/${revoked.body.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/one-time-tokens/${revoked.body.id}`)).status).toBe(404);
    expect((await issue({ email: 'x@example.com', context: { jitOrganizationIds: ['no-such-org'] } })).body.code).toBe('entity.relation_foreign_key_not_found');
    expect((await issue({ email: 'not an address' })).status).toBe(400);
  });

  it('Experience API: the token signs its account in, once, and joins the organizations it names (announced)', async () => {
    const user = await createUser({ username: 'linked_user', primaryEmail: 'linked@example.com', password: strong });
    const { body } = await issue({ email: 'linked@example.com', context: { jitOrganizationIds: [org.id] } });
    const { browser } = await newSignIn();
    const events = await eventsDuring(server, world.receiver, async () => {
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
      const verified = await browser.json('POST', '/api/experience/verification/one-time-token/verify', {
        identifier: { type: 'email', value: 'linked@example.com' },
        token: body.token,
      });
      expect(verified).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
    });
    expect(events.filter(({ body: event }) => event.event === 'Organization.Membership.Updated').map(({ body: event }) => event.addedUserIds)).toEqual([
      [user.id],
    ]);
    expect((await server.api('GET', `/api/users/${user.id}/organizations`)).body.map(({ id }: { id: string }) => id)).toEqual([org.id]);

    // Spent: another interaction cannot use it again.
    const again = await newSignIn();
    await again.browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    const reused = await again.browser.json('POST', '/api/experience/verification/one-time-token/verify', {
      identifier: { type: 'email', value: 'linked@example.com' },
      token: body.token,
    });
    expect({ status: reused.status, code: reused.body.code }).toEqual({ status: 404, code: 'one_time_token.active_token_not_found' });
  });

  it('a magic link (one_time_token and login_hint on the authorization request) asks before it spends, then signs in; a new address registers', async () => {
    await createUser({ username: 'magic_user', primaryEmail: 'magic@example.com', password: strong });
    const { body } = await issue({ email: 'magic@example.com' });
    const { browser, html, page } = await newSignIn({ one_time_token: body.token, login_hint: 'magic@example.com' });
    // Opening the link spends nothing: a mail scanner that follows it signs no one in.
    expect(html).toContain('magic@example.com');
    expect((await server.api('GET', `/api/one-time-tokens/${body.id}`)).body.status).toBe('active');
    const answered = await browser.form(`${page}/one-time-token`, { csrf: csrfOf(html) });
    expect(answered.status).toBe(303);
    const { url } = await browser.follow(answered.headers.get('location')!, redirectUri);
    expect(url.searchParams.get('code')).toEqual(expect.any(String));
    expect((await server.api('GET', `/api/one-time-tokens/${body.id}`)).body.status).toBe('consumed');

    // A new address, where the settings let an email alone sign up: the link creates the account, in the organization.
    const method = (identifier: string, verificationCode: boolean) => ({ identifier, password: true, verificationCode, isPasswordPrimary: true });
    const patched = await server.api('PATCH', '/api/sign-in-exp', {
      body: {
        signUp: { identifiers: ['email'], password: false, verify: true },
        signIn: { methods: [method('username', false), method('email', true), method('phone', false)] },
      },
    });
    expect(patched.status).toBe(200);
    const invited = await issue({ email: 'newcomer@example.com', context: { jitOrganizationIds: [org.id] } });
    const fresh = await newSignIn({ one_time_token: invited.body.token, login_hint: 'newcomer@example.com' });
    const created = await fresh.browser.form(`${fresh.page}/one-time-token`, { csrf: csrfOf(fresh.html) });
    expect(created.status).toBe(303);
    expect((await fresh.browser.follow(created.headers.get('location')!, redirectUri)).url.searchParams.get('code')).toEqual(expect.any(String));
    const [newcomer] = (await server.api('GET', '/api/users?search.primaryEmail=newcomer@example.com')).body;
    expect((await server.api('GET', `/api/users/${newcomer.id}/organizations`)).body.map(({ id }: { id: string }) => id)).toEqual([org.id]);

    // A spent link says so at the button, and signs no one in.
    const spent = await newSignIn({ one_time_token: body.token, login_hint: 'magic@example.com' });
    const refused = await spent.browser.form(`${spent.page}/one-time-token`, { csrf: csrfOf(spent.html) });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('This link has been used or has expired');
  });
});
