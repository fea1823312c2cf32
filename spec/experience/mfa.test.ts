import { decodeJwt } from 'jose';
import jsQRModule from 'jsqr';
import { generate } from 'otplib';
import { PNG } from 'pngjs';

import { snapshot } from '../support/db.js';
import { eventsDuring } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import type { TestBrowser } from '../support/browser.js';
import { experienceWorld, redirectUri, strong } from './world.js';

const mfaOn = (policy: 'NoPrompt' | 'Mandatory', factors = ['Totp', 'WebAuthn', 'BackupCode']) => ({ mfa: { factors, policy } });
/** A TOTP code as an authenticator app shows it, from otplib, at `at` (ms; now unless pinned). */
const totp = (secret: string, at = Date.now()) => generate({ secret, epoch: Math.floor(at / 1000) });
// jsqr is CommonJS whose types declare a default export: under NodeNext the import is the function itself.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;
/** What a camera reads from a `data:image/png` QR code, as an authenticator app scans it. */
const scan = (dataUrl: string) => {
  const image = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
};

/**
 * MFA in the Experience API, as Logto's (packages/core/src/routes/experience/verification-routes/
 * totp-verification.ts, backup-code-verification.ts, classes/mfa.ts, profile-routes.ts `/profile/mfa`):
 * factors made and bound in an interaction, proved at sign-in before the submit goes ahead, and
 * announced without any secret.
 */
describe('sign-in experience: MFA (TOTP and backup codes)', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('experience-mfa');
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    ({ server, receiver } = world);
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: mfaOn('NoPrompt') })).status).toBe(200);
  });

  /** Signs in by username and password, up to identification. */
  async function identified(username: string) {
    const signIn = await newSignIn();
    const verified = await signInWithApi(signIn.browser, { type: 'username', value: username }, strong);
    expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    return signIn;
  }

  /** Submits, follows the redirect back, and redeems the code: the ID token's claims. */
  async function finish({ browser, verifier }: { browser: TestBrowser; verifier: string }) {
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    const code = await codeFrom(browser, submitted.body.redirectTo);
    const tokens = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${world.clientId}:${world.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: verifier }),
    }).then((response) => response.json() as Promise<{ id_token: string }>);
    return decodeJwt(tokens.id_token);
  }

  /** Enrols TOTP and backup codes for `username` through a sign-in; answers the secret and the codes. */
  async function enrol(username: string) {
    const signIn = await identified(username);
    const { browser } = signIn;
    const secret = await browser.json('POST', '/api/experience/verification/totp/secret');
    expect(secret.body).toEqual({
      verificationId: expect.any(String),
      secret: expect.stringMatching(/^[A-Z2-7]+$/),
      secretQrCode: expect.stringMatching(/^data:image\/png;base64,/),
    });
    const scanned = new URL(scan(secret.body.secretQrCode)!);
    expect([scanned.protocol, scanned.host, scanned.searchParams.get('secret')]).toEqual(['otpauth:', 'totp', secret.body.secret]);
    const verified = await browser.json('POST', '/api/experience/verification/totp/verify', {
      code: await totp(secret.body.secret),
      verificationId: secret.body.verificationId,
    });
    expect(verified.status).toBe(200);
    expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId })).status).toBe(204);
    const backup = await browser.json('POST', '/api/experience/verification/backup-code/generate');
    expect(backup.body.codes).toHaveLength(10);
    expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'BackupCode', verificationId: backup.body.verificationId })).status).toBe(204);
    return { signIn, secret: secret.body.secret as string, codes: backup.body.codes as string[] };
  }

  it('enrols TOTP and backup codes at sign-in: bound at submit, announced once with changes, no secret anywhere', async () => {
    const user = await createUser({ username: 'mfa_enrols', password: strong });
    let enrolled: Awaited<ReturnType<typeof enrol>> | undefined;
    const events = await eventsDuring(server, receiver, async () => {
      enrolled = await enrol('mfa_enrols');
      // Nothing is written before the submit.
      expect((await server.api('GET', `/api/users/${user.id}/mfa-verifications`)).body).toEqual([]);
      expect(await finish(enrolled.signIn)).toMatchObject({ sub: user.id, amr: ['pwd'] });
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['lastSignInAt', 'mfaVerifications']],
      ['PostSignIn', undefined],
    ]);
    expect(events[0]!.body).toMatchObject({ interactionEvent: 'SignIn', applicationId: world.clientId });
    const { secret, codes } = enrolled!;
    for (const { raw } of events) {
      expect(raw).not.toContain(secret);
      for (const code of codes) expect(raw).not.toContain(code);
    }
    const listed = await server.api('GET', `/api/users/${user.id}/mfa-verifications`);
    expect(listed.body).toEqual([
      { id: expect.any(String), type: 'Totp', createdAt: expect.any(String) },
      { id: expect.any(String), type: 'BackupCode', createdAt: expect.any(String), remainCodes: 10 },
    ]);
    // At rest: the TOTP secret sealed, the codes hashed; the user's own answer carries neither.
    const stored = JSON.stringify(await server.database.db.collection('users').findOne({ _id: user.id as never }));
    expect(stored).not.toContain(secret);
    for (const code of codes) expect(stored).not.toContain(code);
    expect(JSON.stringify((await server.api('GET', `/api/users/${user.id}`)).body)).not.toMatch(/mfaVerifications|"key"/);
  });

  /** A six-digit code that is not right for `secret` in the steps around now. */
  async function wrongCode(secret: string) {
    const right = new Set(await Promise.all([-30_000, 0, 30_000].map((offset) => totp(secret, Date.now() + offset))));
    for (let candidate = 0; ; candidate += 1) {
      const code = String(candidate).padStart(6, '0');
      if (!right.has(code)) return code;
    }
  }

  it('asks a user with a factor for it (403) until a TOTP code is proved; a code is accepted once; amr names both factors', async () => {
    const user = await createUser({ username: 'mfa_challenged', password: strong });
    const first = await enrol('mfa_challenged');
    await finish(first.signIn);

    const signIn = await identified('mfa_challenged');
    const { browser } = signIn;
    const refused = await browser.json('POST', '/api/experience/submit');
    expect({ status: refused.status, code: refused.body.code, data: refused.body.data }).toEqual({
      status: 403,
      code: 'session.mfa.require_mfa_verification',
      data: { availableFactors: ['Totp', 'BackupCode'] },
    });
    // Nor can a new factor be bound before one is proved: a stolen password does not enrol the thief's app.
    const secret = await browser.json('POST', '/api/experience/verification/totp/secret');
    const attacker = await browser.json('POST', '/api/experience/verification/totp/verify', {
      code: await totp(secret.body.secret),
      verificationId: secret.body.verificationId,
    });
    expect(attacker.status).toBe(200);
    expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId })).status).toBe(403);

    const wrong = await browser.json('POST', '/api/experience/verification/totp/verify', { code: await wrongCode(first.secret) });
    expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 400, code: 'session.mfa.invalid_totp_code' });
    const code = await totp(first.secret);
    expect((await browser.json('POST', '/api/experience/verification/totp/verify', { code })).status).toBe(200);
    expect(await finish(signIn)).toMatchObject({ sub: user.id, amr: ['pwd', 'otp', 'mfa'] });

    // The same code again, in another sign-in: its time step was used.
    const again = await identified('mfa_challenged');
    const replayed = await again.browser.json('POST', '/api/experience/verification/totp/verify', { code });
    expect({ status: replayed.status, code: replayed.body.code }).toEqual({ status: 400, code: 'session.mfa.invalid_totp_code' });
  });

  it('a factor proved for one account is nothing to another identified later in the same interaction', async () => {
    await createUser({ username: 'mfa_attacker', password: strong });
    await createUser({ username: 'mfa_victim', password: strong });
    const attacker = await enrol('mfa_attacker');
    await finish(attacker.signIn);
    const victim = await enrol('mfa_victim');
    await finish(victim.signIn);
    // The attacker proves their own second factor, then identifies as the victim, whose password they hold.
    const { browser } = await identified('mfa_attacker');
    expect((await browser.json('POST', '/api/experience/verification/totp/verify', { code: await totp(attacker.secret) })).status).toBe(200);
    const password = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'mfa_victim' },
      password: strong,
    });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: password.body.verificationId })).status).toBe(204);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect({ status: submitted.status, code: submitted.body.code }).toEqual({ status: 403, code: 'session.mfa.require_mfa_verification' });
  });

  it('a backup code signs in once; a second use is refused, and the count goes down', async () => {
    const user = await createUser({ username: 'mfa_backup', password: strong });
    const { signIn, codes } = await enrol('mfa_backup');
    await finish(signIn);
    const first = await identified('mfa_backup');
    expect((await first.browser.json('POST', '/api/experience/verification/backup-code/verify', { code: codes[3] })).status).toBe(200);
    expect(await finish(first)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
    const second = await identified('mfa_backup');
    const reused = await second.browser.json('POST', '/api/experience/verification/backup-code/verify', { code: codes[3] });
    expect({ status: reused.status, code: reused.body.code }).toEqual({ status: 400, code: 'session.mfa.invalid_backup_code' });
    const listed = (await server.api('GET', `/api/users/${user.id}/mfa-verifications`)).body as Array<{ type: string; remainCodes?: number }>;
    expect(listed.find(({ type }) => type === 'BackupCode')?.remainCodes).toBe(9);
  });

  it('counts wrong second-factor codes toward the account’s lockout: after five, even the right code waits (Logto’s 400 lockout)', async () => {
    await createUser({ username: 'mfa_guessed', password: strong });
    const { signIn, secret } = await enrol('mfa_guessed');
    await finish(signIn);
    const { browser } = await identified('mfa_guessed');
    const wrong = await wrongCode(secret);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect((await browser.json('POST', '/api/experience/verification/totp/verify', { code: wrong })).status).toBe(400);
    }
    const locked = await browser.json('POST', '/api/experience/verification/totp/verify', { code: await totp(secret) });
    expect({ status: locked.status, code: locked.body.code }).toEqual({ status: 400, code: 'session.verification_blocked_too_many_attempts' });
  });

  it('refuses another interaction’s verification (404), and one of the wrong type', async () => {
    await createUser({ username: 'mfa_other_one', password: strong });
    await createUser({ username: 'mfa_other_two', password: strong });
    const one = await identified('mfa_other_one');
    const two = await identified('mfa_other_two');
    const secret = await one.browser.json('POST', '/api/experience/verification/totp/secret');
    const code = await totp(secret.body.secret);
    const stolen = await two.browser.json('POST', '/api/experience/verification/totp/verify', { code, verificationId: secret.body.verificationId });
    expect({ status: stolen.status, code: stolen.body.code }).toEqual({ status: 404, code: 'session.verification_session_not_found' });
    const bound = await two.browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId });
    expect(bound.status).toBe(404);
    const backup = await one.browser.json('POST', '/api/experience/verification/backup-code/generate');
    expect((await one.browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: backup.body.verificationId })).status).toBe(404);
    // Backup codes alone are no second factor.
    const alone = await one.browser.json('POST', '/api/experience/profile/mfa', { type: 'BackupCode', verificationId: backup.body.verificationId });
    expect({ status: alone.status, code: alone.body.code }).toEqual({ status: 422, code: 'session.mfa.backup_code_can_not_be_alone' });
  });

  describe('mandatory MFA', () => {
    beforeAll(async () => {
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: mfaOn('Mandatory', ['Totp', 'BackupCode']) })).status).toBe(200);
    });
    afterAll(async () => {
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: mfaOn('NoPrompt') })).status).toBe(200);
    });

    it('enrols a factor, and the backup codes offered, before a sign-in completes (422 user.missing_mfa, then backup_code_required)', async () => {
      await createUser({ username: 'mfa_mandatory', password: strong });
      const signIn = await identified('mfa_mandatory');
      const { browser } = signIn;
      const missing = await browser.json('POST', '/api/experience/submit');
      expect({ status: missing.status, code: missing.body.code, data: missing.body.data }).toEqual({
        status: 422,
        code: 'user.missing_mfa',
        data: { availableFactors: ['Totp'] },
      });
      const secret = await browser.json('POST', '/api/experience/verification/totp/secret');
      await browser.json('POST', '/api/experience/verification/totp/verify', {
        code: await totp(secret.body.secret),
        verificationId: secret.body.verificationId,
      });
      expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId })).status).toBe(204);
      expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('session.mfa.backup_code_required');
      const backup = await browser.json('POST', '/api/experience/verification/backup-code/generate');
      expect((await browser.json('POST', '/api/experience/profile/mfa', { type: 'BackupCode', verificationId: backup.body.verificationId })).status).toBe(204);
      expect(await finish(signIn)).toMatchObject({ amr: ['pwd'] });
    });

    it('registers with the factor it requires: the new account is created with it', async () => {
      const signUp = await newSignIn();
      const { browser } = signUp;
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const made = await browser.json('POST', '/api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: 'mfa_newcomer' },
        password: strong,
      });
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: made.body.verificationId })).status).toBe(201);
      expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('user.missing_mfa');
      const secret = await browser.json('POST', '/api/experience/verification/totp/secret');
      await browser.json('POST', '/api/experience/verification/totp/verify', {
        code: await totp(secret.body.secret),
        verificationId: secret.body.verificationId,
      });
      await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId });
      const backup = await browser.json('POST', '/api/experience/verification/backup-code/generate');
      await browser.json('POST', '/api/experience/profile/mfa', { type: 'BackupCode', verificationId: backup.body.verificationId });
      const events = await eventsDuring(server, receiver, async () => {
        const claims = await finish(signUp);
        const listed = (await server.api('GET', `/api/users/${String(claims.sub)}/mfa-verifications`)).body as Array<{ type: string }>;
        expect(listed.map(({ type }) => type)).toEqual(['Totp', 'BackupCode']);
      });
      expect(events.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
      expect(events[0]!.raw).not.toContain(secret.body.secret);
    });
  });

  it('the Management API lists, adds (secret or codes answered once) and removes factors, each announced; a sign-in then uses them', async () => {
    const user = await createUser({ username: 'mfa_by_operator', password: strong });
    const path = `/api/users/${user.id}/mfa-verifications`;
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const events = await eventsDuring(server, receiver, async () => {
      const added = await server.api('POST', path, { body: { type: 'Totp', secret } });
      expect(added.body).toEqual({ type: 'Totp', secret, secretQrCode: expect.stringMatching(/^data:image\/png/) });
      expect(new URL(scan(added.body.secretQrCode)!).searchParams.get('secret')).toBe(secret);
      expect((await server.api('POST', path, { body: { type: 'Totp' } })).body.code).toBe('user.totp_already_in_use');
      const codes = await server.api('POST', path, { body: { type: 'BackupCode' } });
      expect(codes.body.codes).toHaveLength(10);
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['mfaVerifications']],
      ['User.Data.Updated', ['mfaVerifications']],
    ]);
    for (const { raw } of events) expect(raw).not.toContain(secret);

    const signIn = await identified('mfa_by_operator');
    expect((await signIn.browser.json('POST', '/api/experience/verification/totp/verify', { code: await totp(secret) })).status).toBe(200);
    expect(await finish(signIn)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });

    const before = await snapshot(server.database.db);
    // A secret that will not do is Logto's 422 `user.totp_secret_invalid`, an 80-bit one too (it takes those; RFC 4226 §4 asks for 128).
    expect((await server.api('POST', path, { body: { type: 'Totp', secret: 'not base32!' } })).body.code).toBe('user.totp_secret_invalid');
    expect((await server.api('POST', path, { body: { type: 'Totp', secret: 'JBSWY3DPEHPK3PXP' } })).status).toBe(422);
    expect((await server.api('POST', path, { body: { type: 'BackupCode', secret } })).status).toBe(400);
    expect((await server.api('POST', path, { body: { type: 'Sms' } })).status).toBe(400);
    expect((await server.api('DELETE', `${path}/no-such-factor`)).status).toBe(404);
    expect((await server.api('GET', '/api/users/no-such-user/mfa-verifications')).status).toBe(404);
    expect(await snapshot(server.database.db)).toBe(before);
    const [totpFactor] = (await server.api('GET', path)).body as Array<{ id: string }>;
    expect((await server.api('DELETE', `${path}/${totpFactor!.id}`)).status).toBe(204);
    expect(((await server.api('GET', path)).body as Array<{ type: string }>).map(({ type }) => type)).toEqual(['BackupCode']);
  });

  it('refuses a TOTP secret under 128 bits or not base32 with Logto’s 422 user.totp_secret_invalid, writing nothing', async () => {
    const user = await createUser({ username: 'mfa_short_secret', password: strong });
    const before = await snapshot(server.database.db);
    for (const secret of ['JBSWY3DPEHPK3PXP', 'JBSWY3DPEHPK3PXPJBSWY3DPE', 'not-base32-at-all-but-long-enough', 'JBSWY3DPEHPK3PXPJBSWY3DPE1']) {
      const refused = await server.api('POST', `/api/users/${user.id}/mfa-verifications`, { body: { type: 'Totp', secret } });
      expect({ secret, status: refused.status, code: refused.body.code, field: refused.body.data?.field }).toEqual({
        secret,
        status: 422,
        code: 'user.totp_secret_invalid',
        field: 'body.secret',
      });
    }
    expect(await snapshot(server.database.db)).toBe(before);
    const accepted = await server.api('POST', `/api/users/${user.id}/mfa-verifications`, { body: { type: 'Totp', secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEH' } });
    expect(accepted.status).toBe(200);
  });

  it.each([
    ['backup codes alone', mfaOn('NoPrompt', ['BackupCode']), 'sign_in_experiences.backup_code_cannot_be_enabled_alone'],
    ['mandatory without a factor', mfaOn('Mandatory', []), 'sign_in_experiences.empty_mfa_factors'],
    [
      'passkey sign-in without WebAuthn',
      { ...mfaOn('NoPrompt', ['Totp']), passkeySignIn: { enabled: true } },
      'sign_in_experiences.passkey_sign_in_requires_web_authn',
    ],
  ])('refuses MFA settings with %s (400), writing nothing', async (_name, body, code) => {
    const before = await snapshot(server.database.db);
    const answer = await server.api('PATCH', '/api/sign-in-exp', { body });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code });
    expect(await snapshot(server.database.db)).toBe(before);
  });
});
