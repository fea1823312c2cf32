import { createHash, randomBytes } from 'node:crypto';

import { TestBrowser, csrfOf } from '../../spec/support/browser.js';
import { basic } from './management-client.js';

/**
 * One authorization request (code with PKCE) in `browser`, as a person would make it: the sign-in
 * page the first time (with `username` and `password`), the consent page when asked. A browser
 * already signed in gets its code without a page. Answers the code and its verifier.
 */
export async function authorizationCode(
  browser: TestBrowser,
  {
    clientId,
    redirectUri,
    username,
    password,
    params = {},
  }: {
    clientId: string;
    redirectUri: string;
    username: string;
    password: string;
    /** More parameters; one given as a list is repeated (several `resource`s). */
    params?: Record<string, string | string[]>;
  },
) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${browser.base}/oidc/auth`);
  const search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  for (const [name, value] of Object.entries(params)) search.set(name, [value].flat()[0]!);
  for (const [name, value] of Object.entries(params)) for (const each of [value].flat().slice(1)) search.append(name, each);
  url.search = search.toString();
  let { response, url: at } = await browser.follow(url, redirectUri);
  for (let step = 0; step < 3 && !at.href.startsWith(redirectUri); step += 1) {
    const html = await response.text();
    const answered = html.includes('name="decision"')
      ? await browser.form(`${at.pathname}/consent`, { csrf: csrfOf(html), decision: 'allow' })
      : await browser.form(`${at.pathname}/sign-in`, { csrf: csrfOf(html), identifier: username, password });
    ({ response, url: at } = await browser.follow(answered.headers.get('location')!, redirectUri));
  }
  const code = at.searchParams.get('code');
  if (!code) throw new Error(`no code: ${at.href}`);
  return { code, verifier };
}

/**
 * A person's sign-in to a confidential web application with `offline_access`, consented: answers
 * the refresh token the code is exchanged for (the refresh benchmarks start from it).
 */
export async function refreshTokenOf(
  browser: TestBrowser,
  tokenRequest: (body: Record<string, string>, authorization?: string) => Promise<{ refresh_token?: string }>,
  {
    clientId,
    clientSecret,
    redirectUri,
    username,
    password,
  }: { clientId: string; clientSecret: string; redirectUri: string; username: string; password: string },
): Promise<string> {
  const { code, verifier } = await authorizationCode(browser, {
    clientId,
    redirectUri,
    username,
    password,
    params: { scope: 'openid offline_access', prompt: 'consent' },
  });
  const { refresh_token: refreshToken } = await tokenRequest(
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri },
    basic(clientId, clientSecret),
  );
  if (!refreshToken) throw new Error('no refresh token');
  return refreshToken;
}
