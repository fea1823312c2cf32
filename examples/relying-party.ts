/**
 * A small web application that signs people in through oidc-identity: openid-client, the
 * authorization code flow with PKCE, an ID token checked by the library, and RP-initiated logout.
 *
 *   npm start                                          # terminal 1: the identity server (prints admin credentials)
 *   MANAGEMENT_CLIENT_ID=... MANAGEMENT_CLIENT_SECRET=... npm run example:rp   # terminal 2
 *   open http://localhost:3002
 *
 * With MANAGEMENT_* it registers itself ("Example web app") through the Management API; with
 * CLIENT_ID and CLIENT_SECRET it uses an application registered already.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

import * as oauth from 'openid-client';

export interface RelyingPartyOptions {
  /** The identity server's base URL, e.g. `http://localhost:3001`. */
  identityUrl: string;
  clientId: string;
  clientSecret: string;
  port?: number;
}

export interface RelyingParty {
  url: string;
  server: Server;
  close(): Promise<void>;
}

interface Visit {
  /** Between the sign-in button and the callback. */
  pending?: { verifier: string; state: string; nonce: string };
  tokens?: { idToken: string; accessToken: string; claims: Record<string, unknown>; profile: Record<string, unknown> };
}

const escape = (value: string) => value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

function page(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Example web app</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d2129}
a.button{display:inline-block;padding:.6rem 1.2rem;border-radius:8px;background:#1d2129;color:#fff;text-decoration:none;font-weight:600}
pre{background:#f4f5f7;padding:1rem;border-radius:8px;overflow:auto}</style></head><body><h1>Example web app</h1>${body}</body></html>`;
}

/** The redirect URIs to register for an application served at `url`. */
export const relyingPartyUris = (url: string) => ({ redirectUris: [`${url}/callback`], postLogoutRedirectUris: [`${url}/`] });

export async function startRelyingParty({ identityUrl, clientId, clientSecret, port = 3002 }: RelyingPartyOptions): Promise<RelyingParty> {
  const issuer = new URL(`${identityUrl.replace(/\/+$/, '')}/oidc`);
  const config = await oauth.discovery(issuer, clientId, clientSecret, oauth.ClientSecretBasic(clientSecret), {
    ...(issuer.protocol === 'http:' && { execute: [oauth.allowInsecureRequests] }),
  });
  const visits = new Map<string, Visit>();
  let url = '';

  function visitOf(req: IncomingMessage, res: ServerResponse): Visit {
    const id = /(?:^|;\s*)rp_visit=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (id && visits.has(id)) return visits.get(id)!;
    const fresh = randomBytes(16).toString('base64url');
    res.setHeader('Set-Cookie', `rp_visit=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
    visits.set(fresh, {});
    return visits.get(fresh)!;
  }

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, visit: Visit) => Promise<void>> = {
    async '/'(_req, res, visit) {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (!visit.tokens) {
        res.end(page('<p>You are not signed in.</p><p><a class="button" href="/login">Sign in</a></p>'));
        return;
      }
      const { claims, profile } = visit.tokens;
      const name = String(profile.username ?? profile.email ?? claims.sub);
      res.end(
        page(`<p>Signed in as <strong id="who">${escape(name)}</strong>.</p>
<p>ID token claims:</p><pre id="claims">${escape(JSON.stringify(claims, null, 2))}</pre>
<p>From the userinfo endpoint:</p><pre id="profile">${escape(JSON.stringify(profile, null, 2))}</pre>
<p><a class="button" href="/logout">Sign out</a></p>`),
      );
    },

    async '/login'(_req, res, visit) {
      const pending = { verifier: oauth.randomPKCECodeVerifier(), state: oauth.randomState(), nonce: oauth.randomNonce() };
      visit.pending = pending;
      const target = oauth.buildAuthorizationUrl(config, {
        redirect_uri: `${url}/callback`,
        scope: 'openid profile email',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: 'S256',
      });
      res.writeHead(302, { location: target.href }).end();
    },

    async '/callback'(req, res, visit) {
      const { pending } = visit;
      if (!pending) {
        res.writeHead(302, { location: '/' }).end();
        return;
      }
      delete visit.pending;
      const tokens = await oauth.authorizationCodeGrant(config, new URL(req.url!, url), {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = { ...tokens.claims()! };
      // The profile claims come from userinfo, for the subject the ID token named.
      const profile = await oauth.fetchUserInfo(config, tokens.access_token, claims.sub);
      visit.tokens = { idToken: tokens.id_token!, accessToken: tokens.access_token, claims, profile: { ...profile } };
      res.writeHead(302, { location: '/' }).end();
    },

    async '/logout'(_req, res, visit) {
      const idToken = visit.tokens?.idToken;
      delete visit.tokens;
      const target = idToken ? oauth.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${url}/` }).href : '/';
      res.writeHead(302, { location: target }).end();
    },
  };

  const server = createServer((req, res) => {
    const route = routes[new URL(req.url!, 'http://rp').pathname];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    route(req, res, visitOf(req, res)).catch((error: unknown) => {
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page(`<p>Sign-in failed: ${escape(error instanceof Error ? error.message : String(error))}</p><p><a href="/">Back</a></p>`));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  url = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Registers the example application through the Management API (once: it is found by name later). */
async function registerApplication(identityUrl: string, managementId: string, managementSecret: string, url: string) {
  const tokenResponse = await fetch(`${identityUrl}/oidc/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${managementId}:${managementSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: `${identityUrl}/api`, scope: 'all' }),
  });
  if (!tokenResponse.ok) throw new Error(`the Management API credentials were refused (${tokenResponse.status})`);
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  /** A Management API call; `T` is the part of its JSON answer the set-up reads. */
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${identityUrl}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} /api${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<T>;
  };
  const name = 'Example web app';
  const existing = (await call<Array<{ id: string; name: string }>>('GET', '/applications?types=Traditional&page_size=100')).find(
    (application) => application.name === name,
  );
  const application = existing
    ? await call<{ id: string }>('PATCH', `/applications/${existing.id}`, { oidcClientMetadata: relyingPartyUris(url) })
    : await call<{ id: string }>('POST', '/applications', { name, type: 'Traditional', oidcClientMetadata: relyingPartyUris(url) });
  // Secrets are shown once: each start makes a new one for itself.
  const secret = await call<{ value: string }>('POST', `/applications/${application.id}/secrets`, { name: `example-${Date.now()}` });
  return { clientId: application.id, clientSecret: secret.value };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const identityUrl = (process.env.IDENTITY_URL ?? 'http://localhost:3001').replace(/\/+$/, '');
  const port = Number(process.env.RP_PORT ?? 3002);
  const { CLIENT_ID, CLIENT_SECRET, MANAGEMENT_CLIENT_ID, MANAGEMENT_CLIENT_SECRET } = process.env;
  const credentials =
    CLIENT_ID && CLIENT_SECRET
      ? { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }
      : MANAGEMENT_CLIENT_ID && MANAGEMENT_CLIENT_SECRET
        ? await registerApplication(identityUrl, MANAGEMENT_CLIENT_ID, MANAGEMENT_CLIENT_SECRET, `http://localhost:${port}`)
        : undefined;
  if (!credentials) {
    console.error('Set MANAGEMENT_CLIENT_ID and MANAGEMENT_CLIENT_SECRET (printed by `npm start`), or CLIENT_ID and CLIENT_SECRET.');
    process.exit(1);
  }
  const rp = await startRelyingParty({ identityUrl, port, ...credentials });
  console.log(`Example web app on ${rp.url} (client ${credentials.clientId}); open it and press "Sign in".`);
}
