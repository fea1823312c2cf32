import { randomBytes } from 'node:crypto';

import { generate } from 'otplib';

import { secondFactorsFor } from '../../experience/state.js';
import type { TestBrowser } from '../support/browser.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from '../experience/world.js';

/** A TOTP code as an authenticator app shows it (otplib). */
const totp = async (secret: string): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
/** A random base32 secret of 160 bits, as an operator brings one to `POST /api/users/:id/mfa-verifications`. */
const newSecret = () => [...randomBytes(32)].map((byte) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[byte % 32]).join('');

describe('a second factor counts only for the account it proved (the rule)', () => {
  it('a proof names its account: for any other it is nothing, and new factors waiting to be bound are not theirs', () => {
    const experience = { mfa: { userId: 'mallory', amr: ['otp'], bind: ['v1'], skipped: true } };
    expect(secondFactorsFor(experience, 'mallory')).toEqual({ amr: ['otp'], bind: ['v1'], skipped: true });
    // Nor a skip of enrolling (where the MFA policy lets one skip).
    expect(secondFactorsFor(experience, 'victim')).toEqual({ amr: [], bind: [], skipped: false });
    expect(secondFactorsFor({}, 'victim')).toEqual({ amr: [], bind: [], skipped: false });
  });
});

/**
 * The outside attack's first finding: with a victim's password and an account of one's own that has a
 * second factor, prove one's own factor while the interaction switches to the victim. Whatever the
 * interleaving, the submit never signs the victim in: a proof is written only while the interaction
 * names the account it proves, identifying another account forgets it in the same write, and the
 * submit counts only the proofs that name the account it signs in.
 */
describe('second factors cannot be carried from one account to another (Experience API, concurrent)', () => {
  const { world, newSignIn, createUser, idTokenClaims } = experienceWorld('second-factors');
  let server: TestServer;
  let victimId: string;
  const rounds = 10;
  /** A race of `rounds` sign-ins takes a while on a busy machine. */
  const raceTimeout = 240_000;

  beforeAll(async () => {
    ({ server } = world);
    const mfa = { factors: ['Totp', 'WebAuthn', 'BackupCode'], policy: 'NoPrompt' };
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa } })).status).toBe(200);
    victimId = (await createUser({ username: 'mfa_race_victim', password: strong })).id;
    const factor = await server.api('POST', `/api/users/${victimId}/mfa-verifications`, { body: { type: 'Totp' } });
    expect(factor.status).toBe(200);
  });

  /** An interaction identified as `username`, and a verified password of the victim's in it. */
  async function attackerWithVictimsPassword(username: string) {
    const signIn = await newSignIn();
    const { browser } = signIn;
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    const own = await browser.json('POST', '/api/experience/verification/password', { identifier: { type: 'username', value: username }, password: strong });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: own.body.verificationId })).status).toBe(204);
    const victims = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'mfa_race_victim' },
      password: strong,
    });
    expect(victims.status).toBe(200);
    return { ...signIn, victimsPassword: victims.body.verificationId as string };
  }

  /** Submits; when it signs someone in, who (the ID token's `sub` and `amr`). */
  async function outcomeOf(signIn: { browser: TestBrowser; verifier: string }) {
    const submitted = await signIn.browser.json('POST', '/api/experience/submit');
    if (submitted.status !== 200) return { status: submitted.status, code: submitted.body?.code as string };
    const claims = await idTokenClaims(signIn, submitted.body.redirectTo);
    return { status: 200, sub: claims.sub, amr: claims.amr };
  }

  /** What proves the attacker's factor in the race: armed while the interaction names the attacker, then sent. */
  type Proof = (browser: TestBrowser) => Promise<() => Promise<{ status: number }>>;

  /**
   * Runs the race `rounds` times, each with an attacker account of its own: the attacker's own
   * factor proved at the same moment as the victim is identified. Answers each round's outcome.
   */
  async function race(prepare: (round: number, username: string, userId: string) => Promise<Proof>) {
    const outcomes = [];
    const proofs: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const username = `${prepare.name}_attacker_${round}`;
      const { id } = await createUser({ username, password: strong });
      const arm = await prepare(round, username, id);
      const signIn = await attackerWithVictimsPassword(username);
      const prove = await arm(signIn.browser);
      // Both orders of sending, so that either request may reach the database first.
      const identify = () => signIn.browser.json('POST', '/api/experience/identification', { verificationId: signIn.victimsPassword });
      const proveFirst = round % 2 === 0;
      const answers = await Promise.all(proveFirst ? [prove(), identify()] : [identify(), prove()]);
      const proof = answers[proveFirst ? 0 : 1];
      // Accepted while the interaction named the attacker; or checked for the attacker and then refused
      // because the interaction changed under it (409); or already checked against the victim (400, 404).
      expect([200, 400, 404, 409]).toContain(proof!.status);
      proofs.push(proof!.status);
      const outcome = await outcomeOf(signIn);
      outcomes.push(outcome);
      // Never the victim: at most the attacker's own account, proved by the attacker's own factor.
      expect(outcome.status === 200 ? outcome.sub : undefined).not.toBe(victimId);
      if (outcome.status === 200) expect(outcome.sub).toBe(id);
      else expect(outcome).toEqual({ status: 403, code: 'session.mfa.require_mfa_verification' });
    }
    // The race reached its window: some proofs were checked for the attacker's own account, while the
    // victim was being identified (the old code counted these for the victim).
    expect(proofs.filter((status) => status === 200 || status === 409).length).toBeGreaterThan(0);
    return outcomes;
  }

  it(
    'an authenticator app code of the attacker’s own never signs the victim in',
    async () => {
      const outcomes = await race(async function totpRace(_round, _username, userId) {
        const secret = newSecret();
        expect((await server.api('POST', `/api/users/${userId}/mfa-verifications`, { body: { type: 'Totp', secret } })).status).toBe(200);
        return async (browser) => {
          const code = await totp(secret);
          return () => browser.json('POST', '/api/experience/verification/totp/verify', { code });
        };
      });
      expect(outcomes).toHaveLength(rounds);
    },
    raceTimeout,
  );

  it(
    'a backup code of the attacker’s own never signs the victim in',
    async () => {
      const outcomes = await race(async function backupRace(_round, _username, userId) {
        expect((await server.api('POST', `/api/users/${userId}/mfa-verifications`, { body: { type: 'Totp' } })).status).toBe(200);
        const codes = await server.api('POST', `/api/users/${userId}/mfa-verifications`, { body: { type: 'BackupCode' } });
        expect(codes.status).toBe(200);
        return async (browser) => () => browser.json('POST', '/api/experience/verification/backup-code/verify', { code: codes.body.codes[0] });
      });
      expect(outcomes).toHaveLength(rounds);
    },
    raceTimeout,
  );

  it(
    'a passkey of the attacker’s own never signs the victim in',
    async () => {
      const outcomes = await race(async function passkeyRace(_round, username) {
        // The attacker registers a passkey through a sign-in of their own (no factor yet: nothing to prove first).
        const authenticator = new SoftAuthenticator(server.url);
        const enrol = await newSignIn();
        expect((await enrol.browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
        const verified = await enrol.browser.json('POST', '/api/experience/verification/password', {
          identifier: { type: 'username', value: username },
          password: strong,
        });
        expect((await enrol.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
        const registration = await enrol.browser.json('POST', '/api/experience/verification/web-authn/registration');
        const registered = await enrol.browser.json('POST', '/api/experience/verification/web-authn/registration/verify', {
          verificationId: registration.body.verificationId,
          payload: authenticator.register(registration.body.registrationOptions),
        });
        expect(registered.status).toBe(200);
        expect(
          (await enrol.browser.json('POST', '/api/experience/profile/mfa', { type: 'WebAuthn', verificationId: registration.body.verificationId })).status,
        ).toBe(204);
        expect((await outcomeOf(enrol)).status).toBe(200);
        // The challenge is asked for while the interaction names the attacker; answered during the race.
        return async (browser) => {
          const challenge = (await browser.json('POST', '/api/experience/verification/web-authn/authentication')).body;
          const payload = authenticator.authenticate(challenge.authenticationOptions);
          return () =>
            browser.json('POST', '/api/experience/verification/web-authn/authentication/verify', { verificationId: challenge.verificationId, payload });
        };
      });
      expect(outcomes).toHaveLength(rounds);
    },
    raceTimeout,
  );

  it(
    'a factor made for the attacker’s account never joins another account, whoever signs in',
    async () => {
      // A second victim without a factor, whose password the attacker holds: signing in as them is no
      // breach, but the attacker's authenticator app must not become theirs (a way back in after a reset).
      const { id: plainVictim } = await createUser({ username: 'mfa_bind_victim', password: strong });
      await createUser({ username: 'mfa_bind_attacker', password: strong });
      const bound: number[] = [];
      for (let round = 0; round < rounds; round += 1) {
        const signIn = await attackerWithVictimsPassword('mfa_bind_attacker');
        const { browser } = signIn;
        const victims = await browser.json('POST', '/api/experience/verification/password', {
          identifier: { type: 'username', value: 'mfa_bind_victim' },
          password: strong,
        });
        const secret = await browser.json('POST', '/api/experience/verification/totp/secret');
        const proved = await browser.json('POST', '/api/experience/verification/totp/verify', {
          code: await totp(secret.body.secret),
          verificationId: secret.body.verificationId,
        });
        expect(proved.status).toBe(200);
        const bind = () => browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: secret.body.verificationId });
        const identify = () => browser.json('POST', '/api/experience/identification', { verificationId: victims.body.verificationId });
        const bindFirst = round % 2 === 0;
        const answers = await Promise.all(bindFirst ? [bind(), identify()] : [identify(), bind()]);
        bound.push(answers[bindFirst ? 0 : 1]!.status);
        const outcome = await outcomeOf(signIn);
        expect([plainVictim, undefined]).toContain(outcome.status === 200 ? outcome.sub : undefined);
        expect((await server.api('GET', `/api/users/${plainVictim}/mfa-verifications`)).body).toEqual([]);
      }
      // The race reached its window: some binds were checked for the attacker while the victim was identified.
      expect(bound.filter((status) => status === 204 || status === 409).length).toBeGreaterThan(0);
    },
    raceTimeout,
  );

  it('in order too: the attacker’s own proof, then the victim identified, is refused with 403', async () => {
    await createUser({ username: 'mfa_in_order', password: strong });
    const secret = newSecret();
    const { id } = (await server.api('GET', '/api/users?search=mfa_in_order')).body[0] as { id: string };
    expect((await server.api('POST', `/api/users/${id}/mfa-verifications`, { body: { type: 'Totp', secret } })).status).toBe(200);
    const signIn = await attackerWithVictimsPassword('mfa_in_order');
    expect((await signIn.browser.json('POST', '/api/experience/verification/totp/verify', { code: await totp(secret) })).status).toBe(200);
    expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: signIn.victimsPassword })).status).toBe(204);
    // A proof sent for the attacker after the victim is named counts for nobody.
    expect(await outcomeOf(signIn)).toEqual({ status: 403, code: 'session.mfa.require_mfa_verification' });
  });
});

/**
 * The outside attack's second finding: a password reset used to end signed in with `amr ["pwd"]`,
 * so whoever reads the mailbox of an account with a second factor took it over. A reset now signs
 * nobody in (as Logto's): the person signs in next, with the new password and the second factor.
 */
describe('a password reset does not skip a second factor', () => {
  const { world, newSignIn, createUser } = experienceWorld('reset-and-mfa');
  let server: TestServer;
  let userId: string;

  beforeAll(async () => {
    ({ server } = world);
    const mfa = { factors: ['Totp', 'BackupCode'], policy: 'NoPrompt' };
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa } })).status).toBe(200);
    userId = (await createUser({ username: 'reset_with_factor', primaryEmail: 'reset.factor@example.com', password: strong })).id;
    expect((await server.api('POST', `/api/users/${userId}/mfa-verifications`, { body: { type: 'Totp' } })).status).toBe(200);
  });

  it('the Experience API: the reset answers 204 with no session; signing in with the new password asks for the factor (403)', async () => {
    const { browser } = await newSignIn();
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' })).status).toBe(204);
    const identifier = { type: 'email', value: 'reset.factor@example.com' };
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' });
    const code = await world.mail.nextCode('reset.factor@example.com');
    expect(
      (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
        .status,
    ).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(204);
    expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'the mailbox is not enough' })).status).toBe(204);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect({ status: submitted.status, body: submitted.body }).toEqual({ status: 204, body: undefined });
    expect(await server.database.db.collection('oidc_Session').countDocuments({ accountId: userId })).toBe(0);
    // The interaction starts over: nobody is identified, and the new password alone is not enough.
    expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('session.invalid_event');
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    const verified = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'reset_with_factor' },
      password: 'the mailbox is not enough',
    });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    const refused = await browser.json('POST', '/api/experience/submit');
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'session.mfa.require_mfa_verification' });
  });

  it('the pages: the reset ends on the sign-in page with a notice, and no redirect to the application', async () => {
    const { browser, page, csrf } = await newSignIn();
    const asked = await browser.form(`${page}/forgot-password`, { csrf, identifier: 'reset.factor@example.com' });
    const form = await asked.text();
    const verificationId = /name="verificationId" value="([^"]+)"/.exec(form)![1]!;
    const reset = await browser.form(`${page}/forgot-password/reset`, {
      csrf,
      email: 'reset.factor@example.com',
      verificationId,
      code: await world.mail.nextCode('reset.factor@example.com'),
      password: 'a reset is not a sign-in',
    });
    expect(reset.status).toBe(200);
    const html = await reset.text();
    expect(html).toContain('Your password has been changed. Sign in with it to continue.');
    expect(html).toContain(`action="${page}/sign-in"`);
    expect(await server.database.db.collection('oidc_Session').countDocuments({ accountId: userId })).toBe(0);
    // Signing in with it leads to the second factor's page, not to the application.
    const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'reset_with_factor', password: 'a reset is not a sign-in' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(`${page}/mfa`);
  });
});
