import { generate } from 'otplib';

import { redirectUri, experienceWorld, strong } from '../experience/world.js';
import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

const changed = 'a brand new passphrase 42';

/**
 * A proof counts only while the account still has what it proved. A password: whoever changes it (the owner, in another session;
 * an administrator; a reset) locks out a holder of the old one: an unspent Account API step-up made
 * with it, and a sign-in that checked it but was not submitted yet, are both refused. An address: a
 * sign-in or a reset proved by a code to it is refused once the account no longer has it.
 */
describe('a new password or address voids what the old one proved', () => {
  const { world, newSignIn, createUser, codeFrom, idTokenClaims, signInWithApi } = experienceWorld('changed-credentials');
  let ip = 60;

  /** An Account API token of `username`'s, from a sign-in through the pages. */
  async function accountToken(username: string, password: string) {
    const browser = new TestBrowser(world.server.url, `198.51.100.${(ip += 1)}`);
    const client = { clientId: world.clientId, clientSecret: world.clientSecret };
    const flow = await codeFlow(browser, { clientId: world.clientId, redirectUri, scope: 'openid', identifier: username, password });
    return (await redeem(world.server, client, flow)).access_token;
  }
  const stepUp = (token: string, password: string) => world.server.api('POST', '/api/verifications/password', { token, body: { password } });
  const newPassword = (token: string, password: string, verification: string) =>
    world.server.api('POST', '/api/my-account/password', { token, body: { password }, headers: { 'logto-verification-id': verification } });
  const setByAdministrator = (userId: string, password: string) => world.server.api('PATCH', `/api/users/${userId}/password`, { body: { password } });

  describe('the Account API: a step-up made with the old password', () => {
    it('is refused (401) once the owner has set a new password from another session, and changes nothing', async () => {
      const { id } = await createUser({ username: 'stepup_owner', password: strong });
      // Two sessions of the same account: the owner's, and one that learnt the old password.
      const [owners, holders] = [await accountToken('stepup_owner', strong), await accountToken('stepup_owner', strong)];
      const held = await stepUp(holders, strong);
      expect(held.status).toBe(201);

      const own = await stepUp(owners, strong);
      expect((await newPassword(owners, changed, own.body.verificationRecordId)).status).toBe(204);

      const refused = await newPassword(holders, 'the holder wants this one 7', held.body.verificationRecordId);
      expect(refused).toMatchObject({ status: 401, body: { code: 'verification_record.permission_denied' } });
      // The owner's password stands; the holder's step-up was not spent by the refusal, and stays useless.
      expect((await world.server.api('POST', `/api/users/${id}/password/verify`, { body: { password: changed } })).status).toBe(204);
      const record = await world.server.database.db.collection('verification_records').findOne({ userId: id, usedAt: null });
      expect(record).not.toBeNull();
      expect((await newPassword(holders, 'the holder wants this one 7', held.body.verificationRecordId)).status).toBe(401);
    });

    it('raced against an administrator setting a new password, a step-up is spent with its change or refused unspent (concurrent, both orders)', async () => {
      for (let round = 0; round < 4; round += 1) {
        const username = `stepup_raced_${round}`;
        const { id } = await createUser({ username, password: strong });
        const token = await accountToken(username, strong);
        const held = await stepUp(token, strong);
        const spend = () => newPassword(token, `the holder's own ${round} x`, held.body.verificationRecordId);
        const change = () => setByAdministrator(id, changed);
        const [spent, set] = round % 2 === 0 ? await Promise.all([spend(), change()]) : (await Promise.all([change(), spend()])).reverse();
        expect(set!.status).toBe(200);
        expect([204, 401]).toContain(spent!.status);
        // Spent exactly when its change was made: a refusal leaves the record unspent.
        const record = await world.server.database.db.collection('verification_records').findOne({ userId: id });
        expect(record?.usedAt !== null).toBe(spent!.status === 204);
        if (spent!.status === 401) expect(spent!.body.code).toBe('verification_record.permission_denied');
      }
    });

    it('is refused (401) once an administrator has set a new password; a step-up with the new one is accepted', async () => {
      const { id } = await createUser({ username: 'stepup_admin_reset', password: strong });
      const token = await accountToken('stepup_admin_reset', strong);
      const held = await stepUp(token, strong);
      expect((await setByAdministrator(id, changed)).status).toBe(200);

      expect((await newPassword(token, 'the holder wants this one 7', held.body.verificationRecordId)).status).toBe(401);
      expect((await stepUp(token, strong)).status).toBe(422);
      const fresh = await stepUp(token, changed);
      expect(fresh.status).toBe(201);
      expect((await newPassword(token, 'chosen with the new one 9', fresh.body.verificationRecordId)).status).toBe(204);
    });
  });

  describe('the Experience API: a sign-in that checked the old password', () => {
    it('is not submitted once an administrator has set a new password (422), and no one is signed in', async () => {
      const { id } = await createUser({ username: 'inflight_identified', password: strong });
      const { browser } = await newSignIn();
      const verified = await signInWithApi(browser, { type: 'username', value: 'inflight_identified' }, strong);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);

      expect((await setByAdministrator(id, changed)).status).toBe(200);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted).toMatchObject({ status: 422, body: { code: 'session.invalid_credentials' } });
      expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
    });

    it('cannot identify anyone once the password changed after it was checked (422)', async () => {
      const { id } = await createUser({ username: 'inflight_verified', password: strong });
      const { browser } = await newSignIn();
      const verified = await signInWithApi(browser, { type: 'username', value: 'inflight_verified' }, strong);
      expect((await setByAdministrator(id, changed)).status).toBe(200);

      const identified = await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId });
      expect(identified).toMatchObject({ status: 422, body: { code: 'session.invalid_credentials' } });
    });

    it('a password reset by code voids another interaction that checked the old password', async () => {
      const { id } = await createUser({ username: 'inflight_reset', primaryEmail: 'inflight.reset@example.com', password: strong });
      const holder = await newSignIn();
      const verified = await signInWithApi(holder.browser, { type: 'username', value: 'inflight_reset' }, strong);
      expect((await holder.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);

      // The owner resets the password with a code sent to the account's address.
      const owner = await newSignIn();
      expect((await owner.browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' })).status).toBe(204);
      const identifier = { type: 'email', value: 'inflight.reset@example.com' };
      const sent = await owner.browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' });
      expect(sent.status).toBe(200);
      const code = await world.mail.nextCode('inflight.reset@example.com');
      const checked = await owner.browser.json('POST', '/api/experience/verification/verification-code/verify', {
        identifier,
        verificationId: sent.body.verificationId,
        code,
      });
      expect(checked.status).toBe(200);
      expect((await owner.browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(204);
      expect((await owner.browser.json('PUT', '/api/experience/profile/password', { password: changed })).status).toBe(204);
      expect((await owner.browser.json('POST', '/api/experience/submit')).status).toBe(204);

      expect(await holder.browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 422, body: { code: 'session.invalid_credentials' } });
      expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
    });

    it('raced against an administrator setting a new password, a submit signs in or is refused, never half (concurrent, both orders)', async () => {
      for (let round = 0; round < 6; round += 1) {
        const username = `raced_password_${round}`;
        const { id } = await createUser({ username, password: strong });
        const signIn = await newSignIn();
        const verified = await signInWithApi(signIn.browser, { type: 'username', value: username }, strong);
        expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
        const submit = () => signIn.browser.json('POST', '/api/experience/submit');
        const change = () => setByAdministrator(id, changed);
        const [submitted, set] = round % 2 === 0 ? await Promise.all([submit(), change()]) : (await Promise.all([change(), submit()])).reverse();
        expect(set!.status).toBe(200);
        const user = await world.server.database.db.collection('users').findOne({ _id: id as never });
        if (submitted!.status === 200) {
          // Signed in while the account still had the password it checked: the application gets its code.
          expect(await codeFrom(signIn.browser, submitted!.body.redirectTo)).toEqual(expect.any(String));
          expect(user?.lastSignInAt).toEqual(expect.any(Number));
        } else {
          expect(submitted).toMatchObject({ status: 422, body: { code: 'session.invalid_credentials' } });
          expect(user?.lastSignInAt ?? null).toBeNull();
          expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
        }
      }
    });

    it('a sign-in with the password the account has signs in, and names the account with amr pwd', async () => {
      const { id } = await createUser({ username: 'current_password', password: strong });
      const signIn = await newSignIn();
      const verified = await signInWithApi(signIn.browser, { type: 'username', value: 'current_password' }, strong);
      expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      const submitted = await signIn.browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await idTokenClaims(signIn, submitted.body.redirectTo)).toMatchObject({ sub: id, amr: ['pwd'] });
    });
  });

  describe('a code: a sign-in or a reset proved by a code to an address', () => {
    beforeAll(async () => {
      const methods = [
        { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
        { identifier: 'email', password: true, verificationCode: true, isPasswordPrimary: true },
        { identifier: 'phone', password: true, verificationCode: true, isPasswordPrimary: true },
      ];
      expect((await world.server.api('PATCH', '/api/sign-in-exp', { body: { signIn: { methods } } })).status).toBe(200);
    });

    /** An interaction for `event`, identified by a code sent to `email` and verified. */
    async function identifiedByCode(event: 'SignIn' | 'ForgotPassword', email: string) {
      const signIn = await newSignIn();
      const { browser } = signIn;
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: event })).status).toBe(204);
      const identifier = { type: 'email', value: email };
      const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: event });
      expect(sent.status).toBe(200);
      const code = await world.mail.nextCode(email);
      const verificationId = sent.body.verificationId;
      expect((await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId, code })).status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId })).status).toBe(204);
      return signIn;
    }

    it('a sign-in is not submitted once the address left the account (400), and no one is signed in', async () => {
      const { id } = await createUser({ username: 'code_moved', primaryEmail: 'code.moved@example.com', password: strong });
      const { browser } = await identifiedByCode('SignIn', 'code.moved@example.com');
      expect((await world.server.api('PATCH', `/api/users/${id}`, { body: { primaryEmail: 'code.elsewhere@example.com' } })).status).toBe(200);

      expect(await browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 400, body: { code: 'session.verification_failed' } });
      expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
    });

    it('a reset is not submitted once the address left the account (400), and the password stays', async () => {
      const { id } = await createUser({ username: 'reset_moved', primaryEmail: 'reset.moved@example.com', password: strong });
      const { browser } = await identifiedByCode('ForgotPassword', 'reset.moved@example.com');
      expect((await browser.json('PUT', '/api/experience/profile/password', { password: changed })).status).toBe(204);
      expect((await world.server.api('PATCH', `/api/users/${id}`, { body: { primaryEmail: 'reset.elsewhere@example.com' } })).status).toBe(200);

      expect(await browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 400, body: { code: 'session.verification_failed' } });
      expect((await world.server.api('POST', `/api/users/${id}/password/verify`, { body: { password: strong } })).status).toBe(204);
    });

    it('a sign-in by a code to the address the account has signs in', async () => {
      await createUser({ username: 'code_kept', primaryEmail: 'code.kept@example.com', password: strong });
      const signIn = await identifiedByCode('SignIn', 'code.kept@example.com');
      const submitted = await signIn.browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await codeFrom(signIn.browser, submitted.body.redirectTo)).toEqual(expect.any(String));
    });
  });

  describe('a passkey: a sign-in by a passkey removed before it was submitted', () => {
    const authenticator = () => new SoftAuthenticator(world.server.url);

    beforeAll(async () => {
      const body = { mfa: { factors: ['Totp', 'WebAuthn', 'BackupCode'], policy: 'NoPrompt' }, passkeySignIn: { enabled: true } };
      expect((await world.server.api('PATCH', '/api/sign-in-exp', { body })).status).toBe(200);
    });

    /** A user with a passkey, registered through a sign-in of their own. */
    async function userWithPasskey(username: string, passkey: SoftAuthenticator) {
      const { id } = await createUser({ username, password: strong });
      const { browser } = await newSignIn();
      const verified = await signInWithApi(browser, { type: 'username', value: username }, strong);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      const registration = await browser.json('POST', '/api/experience/verification/web-authn/registration');
      const registered = await browser.json('POST', '/api/experience/verification/web-authn/registration/verify', {
        verificationId: registration.body.verificationId,
        payload: passkey.register(registration.body.registrationOptions),
      });
      expect(registered.status).toBe(200);
      expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'WebAuthn', verificationId: registration.body.verificationId })).status).toBe(
        204,
      );
      expect((await browser.json('POST', '/api/experience/submit')).status).toBe(200);
      return id;
    }

    /** An interaction identified by the passkey alone (a passkey sign-in). */
    async function identifiedByPasskey(passkey: SoftAuthenticator) {
      const signIn = await newSignIn();
      const { browser } = signIn;
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
      const challenge = (await browser.json('POST', '/api/experience/verification/web-authn/authentication')).body;
      const payload = passkey.authenticate(challenge.authenticationOptions);
      const answered = await browser.json('POST', '/api/experience/verification/web-authn/authentication/verify', {
        verificationId: challenge.verificationId,
        payload,
      });
      expect(answered.status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: challenge.verificationId })).status).toBe(204);
      return signIn;
    }

    it('is refused (400) once the passkey was removed, and no one is signed in', async () => {
      const passkey = authenticator();
      const id = await userWithPasskey('passkey_removed', passkey);
      const { browser } = await identifiedByPasskey(passkey);
      const [factor] = (await world.server.api('GET', `/api/users/${id}/mfa-verifications`)).body as Array<{ id: string }>;
      expect((await world.server.api('DELETE', `/api/users/${id}/mfa-verifications/${factor!.id}`)).status).toBe(204);
      const sessionsBefore = await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id });

      expect(await browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 400, body: { code: 'session.verification_failed' } });
      expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(sessionsBefore);
    });

    it('signs in with a passkey the account still has', async () => {
      const passkey = authenticator();
      await userWithPasskey('passkey_kept', passkey);
      const signIn = await identifiedByPasskey(passkey);
      const submitted = await signIn.browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await codeFrom(signIn.browser, submitted.body.redirectTo)).toEqual(expect.any(String));
    });
  });

  describe('a second factor: one proved, then removed from the account before the submit', () => {
    it('counts for nothing: the submit asks for a factor the account still has (403), and no one is signed in', async () => {
      const { id } = await createUser({ username: 'factor_removed', password: strong });
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      expect((await world.server.api('POST', `/api/users/${id}/mfa-verifications`, { body: { type: 'Totp', secret } })).status).toBe(200);
      expect((await world.server.api('POST', `/api/users/${id}/mfa-verifications`, { body: { type: 'BackupCode' } })).status).toBe(200);
      const { browser } = await newSignIn();
      const verified = await signInWithApi(browser, { type: 'username', value: 'factor_removed' }, strong);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) });
      expect((await browser.json('POST', '/api/experience/verification/totp/verify', { code })).status).toBe(200);

      // The owner removes the authenticator app (say, as compromised); the backup codes remain.
      const factors = (await world.server.api('GET', `/api/users/${id}/mfa-verifications`)).body as Array<{ id: string; type: string }>;
      const app = factors.find(({ type }) => type === 'Totp')!;
      expect((await world.server.api('DELETE', `/api/users/${id}/mfa-verifications/${app.id}`)).status).toBe(204);

      expect(await browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 403, body: { code: 'session.mfa.require_mfa_verification' } });
      expect(await world.server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
    });
  });
});
