import { createHash, randomBytes } from 'node:crypto';

import type { Database } from '../../lib/store/database.js';
import { startEmbeddedHost, type EmbeddedHost } from '../support/embedded.js';
import { deliveriesSettled } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Interaction events from a host's own sign-in: this embeds oidc-identity, without its sign-in
 * experience, in a provider with oidc-provider's development interactions on (a real
 * authorization-code flow whose login form takes any account id). The experience's own events
 * are tested in spec/experience/.
 */
describe('interaction events', () => {
  let host: EmbeddedHost;
  let database: Database;
  let base: string;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    host = await startEmbeddedHost(
      'interactions',
      { hooks: { allowedHosts: ['127.0.0.1'], pollMs: 50 } },
      { features: { devInteractions: { enabled: true } } },
    );
    ({ database, base } = host);
  });
  afterAll(async () => {
    await host.close();
    await receiver.close();
  });

  const api = (method: string, path: string, body?: unknown) => host.api(method, path, body);

  /** A browser's authorization-code flow through the development login form, as `accountId`. */
  async function signIn(clientId: string, accountId: string) {
    const cookies = new Map<string, string>();
    const go = async (url: string, init: RequestInit = {}) => {
      const response = await fetch(new URL(url, base), {
        ...init,
        redirect: 'manual',
        headers: {
          ...(init.headers as Record<string, string>),
          cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          'user-agent': 'interaction-test-browser',
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, value] = pair!.split('=');
        cookies.set(name!, value!);
      }
      return response;
    };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${base}/oidc/auth`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1/callback',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    let response = await go(authorize.href);
    for (let step = 0; step < 10; step += 1) {
      const location = response.headers.get('location');
      if (!location) throw new Error(`the flow stopped with ${response.status}: ${await response.text()}`);
      if (location.startsWith('http://127.0.0.1/callback')) return new URL(location);
      const interaction = /\/oidc\/interaction\/([^/?]+)$/.exec(new URL(location, base).pathname);
      if (interaction) {
        // The development form: log in as the account, then consent.
        const page = await (await go(location)).text();
        const prompt: Record<string, string> = page.includes('name="login"')
          ? { prompt: 'login', login: accountId, password: 'unused' }
          : { prompt: 'consent' };
        response = await go(`/oidc/interaction/${interaction[1]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(prompt).toString(),
        });
      } else {
        response = await go(location);
      }
    }
    throw new Error('too many redirects');
  }

  it('announces PostSignIn once when the provider finishes a login, with the user, application, session and IP', async () => {
    const hook = await api('POST', '/api/hooks', {
      name: 'sign-ins',
      events: ['PostSignIn', 'PostRegister', 'PostResetPassword'],
      config: { url: receiver.url },
    });
    receiver.keys.push(hook.body.signingKey);
    const { body: user } = await api('POST', '/api/users', { username: 'signs_in', password: 'a password never sent' });
    const { body: application } = await api('POST', '/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['http://127.0.0.1/callback'], postLogoutRedirectUris: [] },
    });

    const callback = await signIn(application.id, user.id);
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    await deliveriesSettled(database.db);

    expect(receiver.received.map(({ body }) => body.event)).toEqual(['PostSignIn']);
    const { body } = receiver.received[0]!;
    expect(body).toEqual({
      id: expect.any(String),
      hookId: hook.body.id,
      event: 'PostSignIn',
      createdAt: expect.any(String),
      interactionEvent: 'SignIn',
      sessionId: expect.any(String),
      userAgent: 'interaction-test-browser',
      userIp: expect.stringMatching(/127\.0\.0\.1$/),
      userId: user.id,
      user: expect.objectContaining({ id: user.id, username: 'signs_in', applicationId: null }),
      applicationId: application.id,
      application: { id: application.id, type: 'Traditional', name: 'Web app', description: null },
      // Beyond Logto's: the event's place in the one order, and among the user's events.
      entity: { type: 'User', id: user.id },
      sequence: expect.any(Number),
      version: expect.any(Number),
    });
    expect(JSON.stringify(body)).not.toMatch(/passwordHash|a password never sent|secret/i);
  });

  it('announces what sign-up and reset code reports through reportInteractionEvent', async () => {
    const before = receiver.received.length;
    const { body: user } = await api('POST', '/api/users', { username: 'registers' });
    await host.identity.reportInteractionEvent({ event: 'PostRegister', userId: user.id, ip: '203.0.113.9', userAgent: 'ua', sessionId: 'sess' });
    await host.identity.reportInteractionEvent({ event: 'PostResetPassword', userId: user.id });
    await deliveriesSettled(database.db);
    expect(receiver.received.slice(before).map(({ body }) => [body.event, body.interactionEvent, body.userId, body.userIp])).toEqual([
      ['PostRegister', 'Register', user.id, '203.0.113.9'],
      ['PostResetPassword', 'ForgotPassword', user.id, undefined],
    ]);
    await expect(host.identity.reportInteractionEvent({ event: 'PostExploded' as never, userId: user.id })).rejects.toThrow(TypeError);
  });
});
