import { decodeJwt } from 'jose';

import { hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startSmsCatcher, type SmsCatcher } from '../support/sms.js';
import { TestBrowser, startAuthorization } from '../support/browser.js';

export const redirectUri = 'http://127.0.0.1:9/callback';
export const strong = 'correct horse battery staple';

export interface ExperienceWorld {
  server: TestServer;
  receiver: Receiver;
  mail: MailCatcher;
  sms: SmsCatcher;
  clientId: string;
  clientSecret: string;
}

/**
 * A server with the sign-in experience, an SMTP catcher, a webhook receiver subscribed to the
 * user and interaction events, and a web application; set up before the suite's tests, closed after.
 */
export function experienceWorld(label: string) {
  const world = {} as ExperienceWorld;
  let ipCounter = 10;
  /** A client address of its own: limits count per address. */
  const nextAddress = () => `198.51.100.${(ipCounter += 1)}`;

  beforeAll(async () => {
    world.receiver = await startReceiver();
    world.mail = await startMailCatcher();
    world.sms = await startSmsCatcher();
    world.server = await startTestServer(label, {
      ...hookTestEnv,
      ...world.sms.env,
      TRUST_PROXY: 'true',
      SMTP_URL: world.mail.url,
      EMAIL_FROM: 'Identity <no-reply@id.test>',
    });
    await subscribe(world.server, world.receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn', 'PostResetPassword']);
    const application = await world.server.create('/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    world.clientId = application.id;
    world.clientSecret = application.secret;
  });
  afterAll(async () => {
    await world.server.close();
    await world.receiver.close();
    await world.mail.close();
    await world.sms.close();
  });
  /** A new browser, from an address of its own (limits count per address), on the sign-in page. */
  async function newSignIn(extra: Record<string, string> = {}) {
    const browser = new TestBrowser(world.server.url, nextAddress());
    const authorization = await startAuthorization(browser, world.clientId, redirectUri, undefined, extra);
    return { browser, ...authorization };
  }

  async function createUser(body: Record<string, unknown>) {
    return world.server.create('/api/users', body) as Promise<{ id: string }>;
  }

  /** Follows a submit's redirect back to the application; answers the authorization code. */
  async function codeFrom(browser: TestBrowser, redirectTo: string) {
    const { url } = await browser.follow(redirectTo, redirectUri);
    expect(url.href.startsWith(redirectUri)).toBe(true);
    return url.searchParams.get('code');
  }

  /** Follows a submit's redirect and redeems the code as the web application would: the ID token's claims. */
  async function idTokenClaims(signIn: { browser: TestBrowser; verifier: string }, redirectTo: string) {
    const code = await codeFrom(signIn.browser, redirectTo);
    const tokens = await fetch(`${world.server.url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${world.clientId}:${world.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: signIn.verifier }),
    }).then((response) => response.json() as Promise<{ id_token: string }>);
    return decodeJwt(tokens.id_token);
  }

  async function signInWithApi(browser: TestBrowser, identifier: { type: string; value: string }, password: string) {
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    return browser.json('POST', '/api/experience/verification/password', { identifier, password });
  }

  return { world, nextAddress, newSignIn, createUser, codeFrom, idTokenClaims, signInWithApi };
}
