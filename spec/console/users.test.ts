import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A user's page in the console (issue 42): the profile with custom data, identities, factors,
 * organizations and sessions; removing a factor, unlinking an identity, ending a session or every
 * one, setting a password, deleting the user. Each confirmed on its own page, each a change that
 * names the administrator; an administrator cannot suspend or delete their own account.
 */
describe('the console: a user and what may be done to them', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-users');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body === undefined ? undefined : { body });
  const originsOf = async (id: string) =>
    ((await api('GET', `/api/changes?entityId=${id}`)).body as Array<{ action: string; origin: { type?: string; id?: string } }>).map(
      ({ action, origin }) => `${action} by ${origin.type ?? 'client'}:${origin.id ?? ''}`,
    );

  it('shows the profile, custom data, identities, factors, organizations and sessions', async () => {
    const admin = await helpers.administrator('console_users_amy');
    const member = await helpers.person('console_member_bob', { role: false });
    expect((await api('PATCH', `/api/users/${member.id}`, { customData: { plan: 'gold' } })).status).toBe(200);
    expect((await api('PUT', `/api/users/${member.id}/identities/github`, { userId: 'gh-4242' })).status).toBe(201);
    const organization = await server.create('/api/organizations', { name: 'Globex' });
    expect((await api('POST', `/api/organizations/${organization.id}/users`, { userIds: [member.id] })).status).toBe(201);
    // A session of the member's own: the console refuses them, the provider has signed them in.
    await helpers.signIn(member);
    const page = await (await admin.browser.go(`/console/users/${member.id}`)).text();
    expect(page).toContain('&quot;plan&quot;: &quot;gold&quot;');
    expect(page).toContain('gh-4242');
    expect(page).toContain('Globex');
    expect(page).toContain('Totp');
    expect(page).toMatch(/\/sessions\/[^/"]+\/end"/);
    expect(page).toContain(`/console/users/${member.id}/sign-out-everywhere`);
  });

  it('removes a factor, unlinks an identity, ends a session and then every one, each after confirming, each named as the administrator’s', async () => {
    const admin = await helpers.administrator('console_users_cal');
    const member = await helpers.person('console_member_dot', { role: false });
    expect((await api('PUT', `/api/users/${member.id}/identities/github`, { userId: 'gh-77' })).status).toBe(201);
    await helpers.signIn(member);
    // The next window's code: one code signs in once.
    await helpers.signIn(member, { offsetMs: 30_000 });
    const base = `/console/users/${member.id}`;

    const [factor] = (await api('GET', `/api/users/${member.id}/mfa-verifications`)).body as Array<{ id: string }>;
    const remove = `${base}/factors/${factor!.id}/remove`;
    expect((await admin.browser.go(remove)).status).toBe(200);
    const removed = await admin.submit(remove, remove);
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe(`${base}?done=factor`);
    expect((await api('GET', `/api/users/${member.id}/mfa-verifications`)).body).toEqual([]);
    // Removed already: the API's 404, said on the page.
    expect((await admin.submit(remove, remove)).status).toBe(404);

    const unlink = `${base}/identities/github/unlink`;
    expect((await admin.submit(unlink, unlink)).status).toBe(303);
    expect((await api('GET', `/api/users/${member.id}`)).body.identities).toEqual({});

    const sessions = () => api('GET', `/api/users/${member.id}/sessions`).then(({ body }) => body.sessions as Array<{ payload: { uid: string } }>);
    const live = await sessions();
    expect(live).toHaveLength(2);
    const end = `${base}/sessions/${live[0]!.payload.uid}/end`;
    expect((await admin.submit(end, end)).status).toBe(303);
    expect(await sessions()).toHaveLength(1);
    const everywhere = `${base}/sign-out-everywhere`;
    expect(await (await admin.browser.go(everywhere)).text()).toContain('name="grants"');
    const out = await admin.submit(everywhere, everywhere, { grants: 'all' });
    expect(out.status).toBe(303);
    expect(await (await admin.browser.go(out.headers.get('location')!)).text()).toContain('The user is signed out everywhere.');
    expect(await sessions()).toHaveLength(0);

    const origins = await originsOf(member.id);
    // The factor's removal and the unlinking: each a change of the user, made by the administrator.
    expect(origins.filter((origin) => origin === `updated by user:${admin.id}`)).toHaveLength(2);
  });

  it('sets a password (too short is said at the field, and nothing changes), and the new one signs in', async () => {
    const admin = await helpers.administrator('console_users_eve');
    const member = await helpers.person('console_member_fay', { role: false, factor: false });
    const path = `/console/users/${member.id}/password`;
    const form = await (await admin.browser.go(path)).text();
    expect(form).toMatch(/id="password"[^>]*autocomplete="new-password"/);
    const short = await admin.submit(path, path, { password: 'short' });
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(/id="password"[^>]*aria-invalid="true"/);
    const verify = (password: string) => api('POST', `/api/users/${member.id}/password/verify`, { password }).then(({ status }) => status);
    expect(await verify('console_password_5318')).toBe(204);
    const set = await admin.submit(path, path, { password: 'a brand new passphrase' });
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe(`/console/users/${member.id}?done=password`);
    expect(await verify('a brand new passphrase')).toBe(204);
    expect(await verify('console_password_5318')).toBe(422);
    // Or one made by the console, shown once on the user's page, and the one that now works.
    const generated = await admin.submit(path, path, { password: '', intent: 'generate' });
    expect(generated.status).toBe(303);
    const shown = await (await admin.browser.go(generated.headers.get('location')!)).text();
    const made = /<code class="secret">([^<]+)<\/code>/.exec(shown)![1]!;
    expect(made.length).toBeGreaterThanOrEqual(20);
    expect(await verify(made)).toBe(204);
    expect(await verify('a brand new passphrase')).toBe(422);
    expect(await (await admin.browser.go(`/console/users/${member.id}`)).text()).not.toContain(made);
  });

  it('deletes a user after confirming; an administrator can neither delete nor suspend their own account', async () => {
    const admin = await helpers.administrator('console_users_gus');
    const doomed = await helpers.person('console_member_hal', { role: false, factor: false });
    const path = `/console/users/${doomed.id}/delete`;
    expect(await (await admin.browser.go(path)).text()).toContain('This cannot be undone.');
    const deleted = await admin.submit(path, path);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/console/users?done=deleted');
    expect(await (await admin.browser.go('/console/users?done=deleted')).text()).toContain('The user is deleted.');
    expect((await api('GET', `/api/users/${doomed.id}`)).status).toBe(404);
    expect((await admin.browser.go(`/console/users/${doomed.id}`)).status).toBe(404);

    const own = `/console/users/${admin.id}/delete`;
    const refusedDelete = await admin.submit(own, own);
    expect(refusedDelete.status).toBe(400);
    expect(await refusedDelete.text()).toContain('Not for the account you are signed in with');
    const suspendOwn = `/console/users/${admin.id}/suspend`;
    expect((await admin.submit(suspendOwn, suspendOwn)).status).toBe(400);
    expect((await api('GET', `/api/users/${admin.id}`)).body.isSuspended).toBe(false);
  });
});
