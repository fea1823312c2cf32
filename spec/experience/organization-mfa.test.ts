import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * An organization's MFA requirement at sign-in (issue 39, point 6): Logto's sign-in settings
 * `mfa.organizationRequiredMfaPolicy`. With `Mandatory`, a member of an organization that requires
 * MFA enrols a factor before the sign-in completes; others, and everyone under `NoPrompt`, do not.
 */
describe("an organization's MFA requirement at sign-in", () => {
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
      body: { mfa: { factors: ['Totp'], policy: 'UserControlled', ...(organizationRequiredMfaPolicy && { organizationRequiredMfaPolicy }) } },
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
      body: { mfa: { factors: [], policy: 'UserControlled', organizationRequiredMfaPolicy: 'Mandatory' } },
    });
    expect({ status: unworkable.status, code: unworkable.body.code }).toEqual({ status: 400, code: 'sign_in_experiences.empty_mfa_factors' });
  });
});
