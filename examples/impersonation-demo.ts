/**
 * Impersonation end to end against a running standalone server (`npm start`), from nothing:
 *
 *   MANAGEMENT_CLIENT_ID=... MANAGEMENT_CLIENT_SECRET=... npm run example:impersonation
 *   (the credentials `npm start` printed; IDENTITY_URL, default http://localhost:3001)
 *
 * It sets up what an integrator has (through the Management API): its support backend's API with
 * the permission `impersonate:users`, an Orders API, a support engineer who holds that permission,
 * a customer, the backend's machine-to-machine application (the Management API's `impersonation`
 * scope only) and the support console (a first-party web application allowed to exchange tokens).
 * Then the engineer signs in to the console (the authorization code flow, through the sign-in page:
 * here a few plain HTTP requests stand in for the browser), the console asks the backend
 * (`integrator-backend.ts`) for an impersonation of the customer, and exchanges the subject token
 * (`impersonation-flow.ts`) with the engineer's own token as actor. It prints the impersonated
 * token's claims: `sub` the customer, `act.sub` the engineer, `impersonation_id`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';

import { decodeJwt } from 'jose';
import * as oauth from 'openid-client';

import { impersonate } from './impersonation-flow.js';
import { startIntegratorBackend } from './integrator-backend.js';

export interface DemoOptions {
  identityUrl: string;
  managementClientId: string;
  managementClientSecret: string;
}

const insecureIfHttp = (url: string) => ({ execute: url.startsWith('http:') ? [oauth.allowInsecureRequests] : [] });

/**
 * The engineer signing in to the console as a browser would, in plain HTTP: the authorization
 * request (PKCE), the sign-in page's form, the redirects back with the code, and the code
 * redeemed by the console. A real console sends the engineer's browser through the same steps.
 */
async function signIn(
  identityUrl: string,
  app: { id: string; secret: string; redirectUri: string },
  username: string,
  password: string,
  resource: string,
  scope: string,
) {
  const cookies = new Map<string, string>();
  const go = async (url: URL, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  /** Follows redirects until the console's callback (answered with its URL) or a page (answered with its response). */
  const follow = async (start: URL) => {
    let url = start;
    for (let step = 0; step < 10; step += 1) {
      if (url.href.startsWith(app.redirectUri)) return { url };
      const response = await go(url);
      const location = response.headers.get('location');
      if (!location) return { url, html: await response.text() };
      url = new URL(location, url);
    }
    throw new Error('too many redirects');
  };

  const config = await oauth.discovery(new URL(`${identityUrl}/oidc`), app.id, app.secret, undefined, insecureIfHttp(identityUrl));
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = oauth.buildAuthorizationUrl(config, {
    redirect_uri: app.redirectUri,
    scope,
    resource,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await follow(authorize);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html ?? '')?.[1];
  if (!csrf) throw new Error(`no sign-in page at ${page.url.href}`);
  const signedIn = await go(new URL(`${page.url.pathname}/sign-in`, page.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, identifier: username, password }).toString(),
  });
  const back = await follow(new URL(signedIn.headers.get('location') ?? '', page.url));
  if (!back.url.href.startsWith(app.redirectUri)) throw new Error(`the sign-in did not come back to the console (${back.url.href})`);
  return oauth.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state }, { resource });
}

export async function runImpersonationDemo({ identityUrl, managementClientId, managementClientSecret }: DemoOptions) {
  const run = randomBytes(3).toString('hex');
  const managementApi = `${identityUrl}/api`;
  const admin = await oauth.discovery(new URL(`${identityUrl}/oidc`), managementClientId, managementClientSecret, undefined, insecureIfHttp(identityUrl));
  const { access_token: adminToken } = await oauth.clientCredentialsGrant(admin, { scope: 'all', resource: managementApi });
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${managementApi}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, string>;
  };

  // What the integrator has: its APIs, roles, people and applications.
  const backendApi = await call('/resources', { name: `Support backend ${run}`, indicator: `https://support-backend.example/${run}` });
  const impersonateUsers = await call(`/resources/${backendApi.id}/scopes`, { name: 'impersonate:users' });
  const ordersApi = await call('/resources', { name: `Orders ${run}`, indicator: `https://orders.example/${run}` });
  const readOrders = await call(`/resources/${ordersApi.id}/scopes`, { name: 'read:orders' });
  const engineerRole = await call('/roles', { name: `Support engineer ${run}`, scopeIds: [impersonateUsers.id] });
  const customerRole = await call('/roles', { name: `Customer ${run}`, scopeIds: [readOrders.id] });
  const password = randomBytes(12).toString('base64url');
  const engineer = await call('/users', { username: `engineer_${run}`, password });
  const customer = await call('/users', { username: `customer_${run}` });
  await call(`/users/${engineer.id}/roles`, { roleIds: [engineerRole.id] });
  await call(`/users/${customer.id}/roles`, { roleIds: [customerRole.id] });
  const backendRole = await call('/roles', { name: `Impersonation backend ${run}`, type: 'MachineToMachine', scopeIds: ['management-api-impersonation'] });
  const backendApp = await call('/applications', { name: `Support backend ${run}`, type: 'MachineToMachine' });
  await call(`/applications/${backendApp.id}/roles`, { roleIds: [backendRole.id] });
  const redirectUri = 'http://127.0.0.1:9/support-console/callback';
  const consoleApp = await call('/applications', {
    name: `Support console ${run}`,
    type: 'Traditional',
    oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    customClientMetadata: { allowTokenExchange: true },
  });
  const supportConsole = { id: consoleApp.id!, secret: consoleApp.secret!, redirectUri };

  const backend = await startIntegratorBackend({
    issuer: `${identityUrl}/oidc`,
    managementApi,
    identityUrl,
    clientId: backendApp.id!,
    clientSecret: backendApp.secret!,
    audience: backendApi.indicator!,
  });
  try {
    // The engineer signs in to the console twice over: a token for the backend's API (to ask for
    // the impersonation), and an openid one (the actor token of the exchange).
    const forBackend = await signIn(identityUrl, supportConsole, `engineer_${run}`, password, backendApi.indicator!, 'openid impersonate:users');
    const own = await signIn(identityUrl, supportConsole, `engineer_${run}`, password, ordersApi.indicator!, 'openid');
    const impersonated = await impersonate({
      issuer: `${identityUrl}/oidc`,
      clientId: supportConsole.id,
      clientSecret: supportConsole.secret,
      backendUrl: backend.url,
      actorAccessToken: forBackend.access_token,
      actorIdentityToken: own.access_token,
      userId: customer.id!,
      reason: 'order stuck at checkout',
      ticketId: `DEMO-${run}`,
      resource: ordersApi.indicator!,
      scope: 'read:orders',
    });
    return { engineerId: engineer.id!, customerId: customer.id!, claims: decodeJwt(impersonated.access_token), expiresIn: impersonated.expires_in };
  } finally {
    await backend.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { MANAGEMENT_CLIENT_ID, MANAGEMENT_CLIENT_SECRET } = process.env;
  if (!MANAGEMENT_CLIENT_ID || !MANAGEMENT_CLIENT_SECRET) {
    console.error(
      'Set MANAGEMENT_CLIENT_ID and MANAGEMENT_CLIENT_SECRET: the credentials `npm start` printed (or BOOTSTRAP_CLIENT_ID / BOOTSTRAP_CLIENT_SECRET).',
    );
    process.exit(1);
  }
  const identityUrl = (process.env.IDENTITY_URL ?? 'http://localhost:3001').replace(/\/+$/, '');
  const result = await runImpersonationDemo({ identityUrl, managementClientId: MANAGEMENT_CLIENT_ID, managementClientSecret: MANAGEMENT_CLIENT_SECRET });
  console.log(`The support engineer ${result.engineerId} now acts as the customer ${result.customerId}, for ${result.expiresIn} s:`);
  console.log(JSON.stringify(result.claims, null, 2));
}
