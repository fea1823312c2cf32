import { snapshot } from '../support/db.js';
import { eventsDuring } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import type { SmsCatcher } from '../support/sms.js';
import type { TestBrowser } from '../support/browser.js';
import { experienceWorld, strong } from './world.js';

/**
 * Phone numbers in the Experience API, as Logto's (packages/core/src/routes/experience/**): a code by
 * text for `{type: "phone"}` (sent through the SMS connector, here the HTTP one to a local gateway),
 * sign-up with a verified phone, a password sign-in by phone, and a reset by phone. A number is the
 * same however it is typed.
 */
describe('sign-in experience: phone numbers (Experience API, SMS through the HTTP connector)', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('experience-phone');
  let server: TestServer;
  let receiver: Receiver;
  let sms: SmsCatcher;
  beforeAll(() => {
    ({ server, receiver, sms } = world);
  });

  /** Asks a code for `value` in this interaction; answers the verification id. */
  async function askCode(browser: TestBrowser, value: string, interactionEvent: string) {
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier: { type: 'phone', value }, interactionEvent });
    expect(sent.status).toBe(200);
    return sent.body.verificationId as string;
  }
  const verify = (browser: TestBrowser, value: string, verificationId: string, code: string) =>
    browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier: { type: 'phone', value }, verificationId, code });

  it('signs up with a phone number and a texted code, announcing User.Created with the number and PostRegister', async () => {
    const { browser } = await newSignIn();
    const events = await eventsDuring(server, receiver, async () => {
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const verificationId = await askCode(browser, '+61 412 345 670', 'Register');
      const code = await sms.nextCode('+61412345670');
      // The same number, typed another way (the national 0 after the country code).
      expect((await verify(browser, '610412345670', verificationId, code)).status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId })).status).toBe(201);
      expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      // PostRegister is announced once the provider has the result.
      expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(events[0]!.body.data).toMatchObject({ primaryPhone: '61412345670', primaryEmail: null, username: null });
    expect(events[0]!.body).toMatchObject({ interactionEvent: 'Register', sessionId: expect.any(String) });

    // And signs in with that number and the password, typed yet another way.
    const next = await newSignIn();
    const verified = await signInWithApi(next.browser, { type: 'phone', value: '+61 412-345-670' }, strong);
    expect(verified.status).toBe(200);
    expect((await next.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    expect(await codeFrom(next.browser, (await next.browser.json('POST', '/api/experience/submit')).body.redirectTo)).toEqual(expect.any(String));
  });

  it('a code verifies only the number it was sent to, and an impossible number is 422 user.invalid_phone', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const verificationId = await askCode(browser, '+44 20 7946 0001', 'Register');
    const code = await sms.nextCode('+442079460001');
    // Logto's libraries/passcode.ts: a code sent to another number is `phone_mismatch`.
    expect((await verify(browser, '+44 20 7946 0002', verificationId, code)).body.code).toBe('verification_code.phone_mismatch');
    const impossible = await browser.json('POST', '/api/experience/verification/verification-code', {
      identifier: { type: 'phone', value: '123' },
      interactionEvent: 'Register',
    });
    expect({ status: impossible.status, code: impossible.body.code }).toEqual({ status: 422, code: 'user.invalid_phone' });
    expect((await verify(browser, '+44 20 7946 0001', verificationId, code)).status).toBe(200);
  });

  it('a number that has an account cannot be registered again, and says so only once a code proved it', async () => {
    await createUser({ username: 'has_phone', primaryPhone: '+1 212 555 0111', password: strong });
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const verificationId = await askCode(browser, '12125550111', 'Register');
    const before = await snapshot(server.database.db);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId })).body.code).toBe('session.verification_failed');
    expect((await verify(browser, '12125550111', verificationId, await sms.nextCode('+12125550111'))).status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId })).body.code).toBe('user.phone_already_in_use');
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('resets a password by phone: the code goes to the number on file, and to none for a number without an account', async () => {
    const user = await createUser({ username: 'resets_by_phone', primaryPhone: '+61 412 345 671', password: strong });
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
    const verificationId = await askCode(browser, '610412345671', 'ForgotPassword');
    expect((await verify(browser, '+61412345671', verificationId, await sms.nextCode('+61412345671'))).status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId })).status).toBe(204);
    expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'a brand new passphrase 9' })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/submit')).status).toBe(204);
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'a brand new passphrase 9' } })).status).toBe(204);

    // Nobody has this number: the answer is the same, and nothing is sent.
    const other = await newSignIn();
    await other.browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
    const sentBefore = sms.texts.length;
    expect(await askCode(other.browser, '+61 412 345 679', 'ForgotPassword')).toEqual(expect.any(String));
    // No timer: a code then asked for the number on file arrives, and nothing went to the other.
    await askCode(other.browser, '+61 412 345 671', 'ForgotPassword');
    await sms.nextCode('+61412345671');
    expect(sms.texts.slice(sentBefore).filter(({ to }) => to !== '+61412345671')).toEqual([]);
  });

  it('limits the codes texted to one number (5 an hour): the 6th is 429 and is not sent', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    for (let i = 0; i < 5; i += 1) await askCode(browser, '+61 412 345 672', 'Register');
    const sixth = await browser.json('POST', '/api/experience/verification/verification-code', {
      identifier: { type: 'phone', value: '61412345672' },
      interactionEvent: 'Register',
    });
    expect({ status: sixth.status, code: sixth.body.code }).toEqual({ status: 429, code: 'request.message_rate_limited' });
    for (let i = 0; i < 5; i += 1) await sms.nextCode('+61412345672');
    expect(sms.texts.filter(({ to }) => to === '+61412345672')).toHaveLength(5);
  });
});
