import { eventsDuring, subscribe } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * Logto's exception events (packages/core/src/routes/experience/classes/libraries/sentinel-guard.ts and
 * its hooks library): `Identifier.Lockout` when repeated failures lock an identifier, and
 * `Message.RateLimited` when a code send is refused by a limit, each with the interaction behind it.
 */
describe('sign-in experience: exception events', () => {
  const { world, newSignIn, createUser, signInWithApi } = experienceWorld('experience-exceptions');
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    ({ server, receiver } = world);
    await subscribe(server, receiver, ['Identifier.Lockout', 'Message.RateLimited'], 'exceptions');
  });

  it('announces Identifier.Lockout once, at the failure that locks, with the identifier as typed', async () => {
    await createUser({ username: 'locked_out', password: strong });
    const { browser } = await newSignIn();
    const events = await eventsDuring(server, receiver, async () => {
      for (let attempt = 0; attempt < 6; attempt += 1) await signInWithApi(browser, { type: 'username', value: 'locked_out' }, `wrong ${attempt}`);
    });
    const lockouts = events.filter(({ body }) => body.event === 'Identifier.Lockout');
    expect(lockouts).toHaveLength(1);
    expect(lockouts[0]!.body).toMatchObject({
      event: 'Identifier.Lockout',
      type: 'username',
      value: 'locked_out',
      interactionEvent: 'SignIn',
      sessionId: expect.any(String),
      ip: expect.any(String),
      userAgent: 'experience-test-browser',
    });
    expect(lockouts[0]!.raw).not.toMatch(/wrong \d/);
  });

  it('announces Message.RateLimited for a code send a limit refuses, naming the recipient', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const ask = () =>
      browser.json('POST', '/api/experience/verification/verification-code', {
        identifier: { type: 'email', value: 'flooded@example.com' },
        interactionEvent: 'Register',
      });
    for (let i = 0; i < 5; i += 1) expect((await ask()).status).toBe(200);
    const events = await eventsDuring(server, receiver, async () => {
      expect((await ask()).status).toBe(429);
    });
    expect(events.map(({ body }) => body)).toEqual([
      expect.objectContaining({ event: 'Message.RateLimited', action: 'VerificationCodeSend', recipient: 'flooded@example.com', interactionEvent: 'Register' }),
    ]);
  });
});
