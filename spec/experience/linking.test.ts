import { snapshot } from '../support/db.js';
import { eventsDuring } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import type { MailCatcher } from '../support/smtp.js';
import type { SmsCatcher } from '../support/sms.js';
import type { TestBrowser } from '../support/browser.js';
import { experienceWorld, strong } from './world.js';

/**
 * Linking an email address or a phone number in an interaction, as Logto's Experience API does it
 * (`POST /api/experience/profile {type, verificationId}`, packages/core/src/routes/experience/profile-routes.ts):
 * proved by a code, added to the signed-in user at submit, and announced as `User.Data.Updated` with
 * the interaction's context and what changed.
 */
describe('sign-in experience: linking an email or a phone (Experience API)', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('experience-linking');
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let sms: SmsCatcher;
  beforeAll(() => {
    ({ server, receiver, mail, sms } = world);
  });

  /** Signs in by username and password, up to identification. */
  async function identified(username: string) {
    const { browser } = await newSignIn();
    const verified = await signInWithApi(browser, { type: 'username', value: username }, strong);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    return browser;
  }

  /** A verified code of this interaction for `identifier`; answers its verification id. */
  async function proved(browser: TestBrowser, identifier: { type: 'email' | 'phone'; value: string }, interactionEvent: string) {
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent });
    expect(sent.status).toBe(200);
    const code = identifier.type === 'email' ? await mail.nextCode(identifier.value) : await sms.nextCode(`+${identifier.value.replace(/\D/g, '')}`);
    const verified = await browser.json('POST', '/api/experience/verification/verification-code/verify', {
      identifier,
      verificationId: sent.body.verificationId,
      code,
    });
    expect(verified.status).toBe(200);
    return sent.body.verificationId as string;
  }

  it.each([
    ['an email address', { type: 'email', value: 'linked@example.com' }, { primaryEmail: 'linked@example.com' }, 'primaryEmail'],
    ['a phone number', { type: 'phone', value: '61412345680' }, { primaryPhone: '61412345680' }, 'primaryPhone'],
  ] as const)('links %s at sign-in: added at submit, announced once with the interaction and what changed', async (_name, identifier, stored, field) => {
    const user = await createUser({ username: `links_${identifier.type}`, password: strong });
    const browser = await identified(`links_${identifier.type}`);
    const events = await eventsDuring(server, receiver, async () => {
      const verificationId = await proved(browser, identifier, 'SignIn');
      expect((await browser.json('POST', '/api/experience/profile', { type: identifier.type, verificationId })).status).toBe(204);
      // Nothing is written before the submit.
      expect((await server.api('GET', `/api/users/${user.id}`)).body).toMatchObject({ primaryEmail: null, primaryPhone: null });
      await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    });
    expect((await server.api('GET', `/api/users/${user.id}`)).body).toMatchObject(stored);
    expect(events.map(({ body }) => body.event)).toEqual(['User.Data.Updated', 'PostSignIn']);
    expect(events[0]!.body).toMatchObject({
      data: { id: user.id, ...stored },
      changes: ['lastSignInAt', field],
      interactionEvent: 'SignIn',
      sessionId: expect.any(String),
      applicationId: world.clientId,
    });
  });

  it('refuses an address another account has (422 naming it), and writes nothing', async () => {
    await createUser({ username: 'owns_address', primaryEmail: 'taken@example.com', password: strong });
    await createUser({ username: 'wants_address', password: strong });
    const browser = await identified('wants_address');
    const verificationId = await proved(browser, { type: 'email', value: 'taken@example.com' }, 'SignIn');
    const before = await snapshot(server.database.db);
    const linked = await browser.json('POST', '/api/experience/profile', { type: 'email', verificationId });
    expect({ status: linked.status, code: linked.body.code }).toEqual({ status: 422, code: 'user.email_already_in_use' });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('links nothing before identification, with a verification of another type, or with one spent already', async () => {
    await createUser({ username: 'careful_linker', password: strong });
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    const early = await proved(browser, { type: 'email', value: 'early@example.com' }, 'SignIn');
    expect((await browser.json('POST', '/api/experience/profile', { type: 'email', verificationId: early })).body.code).toBe('session.identifier_not_found');

    const signedIn = await identified('careful_linker');
    const phone = await proved(signedIn, { type: 'phone', value: '61412345681' }, 'SignIn');
    expect((await signedIn.json('POST', '/api/experience/profile', { type: 'email', verificationId: phone })).status).toBe(400);
    const email = await proved(signedIn, { type: 'email', value: 'careful@example.com' }, 'SignIn');
    expect((await signedIn.json('POST', '/api/experience/profile', { type: 'email', verificationId: email })).status).toBe(204);
    expect((await signedIn.json('POST', '/api/experience/profile', { type: 'email', verificationId: email })).body.code).toBe('session.verification_failed');
  });

  it('adds a proved email to an account registered with a username', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const identity = await browser.json('POST', '/api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: 'registers_and_links' },
      password: strong,
    });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: identity.body.verificationId })).status).toBe(201);
    const verificationId = await proved(browser, { type: 'email', value: 'registered@example.com' }, 'Register');
    expect((await browser.json('POST', '/api/experience/profile', { type: 'email', verificationId })).status).toBe(204);
    await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    const [user] = (await server.api('GET', '/api/users?search.username=registers_and_links')).body;
    expect(user).toMatchObject({ username: 'registers_and_links', primaryEmail: 'registered@example.com' });
  });
});
