import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * An organization at sign-in (issue 39, point 6): its MFA requirement (Logto's sign-in settings
 * `mfa.organizationRequiredMfaPolicy`: with `Mandatory`, a member of an organization that requires
 * MFA enrols a factor before the sign-in completes; others, and everyone under `NoPrompt`, do not),
 * and its look on the pages of an authorization request that names it.
 */
describe("an organization's MFA requirement and look at sign-in", () => {
  const { world, newSignIn, createUser, signInWithApi } = experienceWorld('organization-mfa');
  let server: TestServer;

  beforeAll(async () => {
    ({ server } = world);
    const strict = await server.create('/api/organizations', { name: 'Strict Bank', isMfaRequired: true });
    const lax = await server.create('/api/organizations', { name: 'Lax Club' });
    const member = await createUser({ username: 'bank_member', password: strong });
    const other = await createUser({ username: 'club_member', password: strong });
    await server.create(`/api/organizations/${strict.id}/users`, { userIds: [member.id] });
    await server.create(`/api/organizations/${lax.id}/users`, { userIds: [other.id] });
  });

  const settings = (organizationRequiredMfaPolicy?: string) =>
    server.api('PATCH', '/api/sign-in-exp', {
      body: { mfa: { factors: ['Totp'], policy: 'NoPrompt', ...(organizationRequiredMfaPolicy && { organizationRequiredMfaPolicy }) } },
    });

  async function submitAs(username: string) {
    const { browser } = await newSignIn();
    const verified = await signInWithApi(browser, { type: 'username', value: username }, strong);
    await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId });
    return browser.json('POST', '/api/experience/submit');
  }

  it('Mandatory: a member of an organization that requires MFA enrols first (422 user.missing_mfa); a member of another does not', async () => {
    expect((await settings('Mandatory')).status).toBe(200);
    const member = await submitAs('bank_member');
    expect({ status: member.status, code: member.body.code }).toEqual({ status: 422, code: 'user.missing_mfa' });
    expect((await submitAs('club_member')).status).toBe(200);
  });

  it('NoPrompt (or unset): nobody is asked; and the policy needs a factor to enrol', async () => {
    expect((await settings('NoPrompt')).status).toBe(200);
    expect((await submitAs('bank_member')).status).toBe(200);
    const unworkable = await server.api('PATCH', '/api/sign-in-exp', {
      body: { mfa: { factors: [], policy: 'NoPrompt', organizationRequiredMfaPolicy: 'Mandatory' } },
    });
    expect({ status: unworkable.status, code: unworkable.body.code }).toEqual({ status: 400, code: 'sign_in_experiences.empty_mfa_factors' });
  });

  it("draws the pages in the organization's look (logo, colours) when the authorization request names it", async () => {
    const logoUrl = 'https://cdn.bank.example/logo.png';
    const branded = await server.create('/api/organizations', {
      name: 'Branded',
      branding: { logoUrl },
      color: { primaryColor: '#123456', isDarkModeEnabled: false },
    });
    expect(branded).toMatchObject({ branding: { logoUrl }, color: { primaryColor: '#123456' } });
    const { html } = await newSignIn({ organization_id: branded.id });
    expect(html).toContain(`<img src="${logoUrl}"`);
    expect(html).toContain('123456');
    // An unknown one changes nothing, and a bad colour is refused where it is set.
    expect((await newSignIn({ organization_id: 'no-such-organization' })).html).not.toContain(logoUrl);
    expect((await server.api('PATCH', `/api/organizations/${branded.id}`, { body: { color: { primaryColor: 'red;}' } } })).status).toBe(400);
  });
});
