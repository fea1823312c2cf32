import * as oauth from 'openid-client';

import { TestBrowser, csrfOf, startAuthorization } from './browser.js';
import type { TestServer } from './server.js';

/** What an authorization code flow through the real pages ends with. */
export interface CodeFlowResult {
  /** Where the provider sent the browser back: the callback URL with `code`, or with `error`. */
  callback: URL;
  verifier: string;
}

/**
 * Runs the authorization code flow (PKCE) in `browser` with the sign-in page: the browser signs in
 * with `identifier` and `password`, and, for a third-party application, answers the consent page
 * with `consent`. Answers the callback URL the provider redirected to.
 */
export async function codeFlow(
  browser: TestBrowser,
  options: {
    clientId: string;
    redirectUri: string;
    scope: string;
    identifier: string;
    password: string;
    resource?: string | string[];
    prompt?: string;
    /** More authorization request parameters. */
    extra?: Record<string, string>;
    consent?: 'allow' | 'deny';
    /** More fields of the consent form (the organizations chosen). */
    consentFields?: Record<string, string | string[]>;
    onConsentPage?: (html: string) => void;
  },
): Promise<CodeFlowResult> {
  const { clientId, redirectUri, scope, resource, prompt } = options;
  const auth = await startAuthorization(browser, clientId, redirectUri, scope, { ...(resource && { resource }), ...(prompt && { prompt }), ...options.extra });
  const signedIn = await browser.form(`${auth.page}/sign-in`, { csrf: auth.csrf, identifier: options.identifier, password: options.password });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${(await signedIn.text()).slice(0, 300)}`);
  let { response, url } = await browser.follow(signedIn.headers.get('location')!, redirectUri);
  if (!url.href.startsWith(redirectUri) && url.pathname.startsWith('/interaction/')) {
    const html = await response.text();
    options.onConsentPage?.(html);
    const answered = await browser.form(`${url.pathname}/consent`, { csrf: csrfOf(html), decision: options.consent ?? 'allow', ...options.consentFields });
    ({ url } = await browser.follow(answered.headers.get('location')!, redirectUri));
  }
  return { callback: url, verifier: auth.verifier };
}

/** Redeems the code of a `codeFlow` with openid-client, as a relying party would (a public client without a secret). */
export async function redeem(server: TestServer, client: { clientId: string; clientSecret?: string | undefined }, flow: CodeFlowResult, resource?: string) {
  const config = await server.discover(client.clientId, client.clientSecret);
  return oauth.authorizationCodeGrant(
    config,
    flow.callback,
    {
      pkceCodeVerifier: flow.verifier,
      expectedState: 'state-1',
      expectedNonce: 'nonce-1',
    },
    resource ? { resource } : undefined,
  );
}

/** Signs a new account up through the Experience API (username and password), as anyone who reaches a sign-in page can. */
export async function signUpWithApi(server: TestServer, clientId: string, redirectUri: string, username: string, password: string, ip: string) {
  const browser = new TestBrowser(server.url, ip);
  await startAuthorization(browser, clientId, redirectUri);
  await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
  const verified = await browser.json('POST', '/api/experience/verification/new-password-identity', {
    identifier: { type: 'username', value: username },
    password,
  });
  await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId });
  const submitted = await browser.json('POST', '/api/experience/submit');
  if (submitted.status !== 200) throw new Error(`sign-up answered ${submitted.status}: ${JSON.stringify(submitted.body)}`);
  const users = await server.api('GET', `/api/users?search.username=${username}`);
  return users.body[0] as { id: string };
}

/** A user with a password, holding `roleIds`, made through the Management API; answers its id. */
export async function userWith(server: TestServer, username: string, password: string, roleIds: string[] = []): Promise<string> {
  const user = await server.create('/api/users', { username, password });
  if (roleIds.length > 0) await server.create(`/api/users/${user.id}/roles`, { roleIds });
  return user.id as string;
}
