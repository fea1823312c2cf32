import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import Provider from 'oidc-provider';
import { lastingServer } from './http-server.js';

/** An upstream account: its subject and the claims the provider gives. */
export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  /** What the ID token says instead, when it is to disagree with UserInfo (a hostile or broken provider). */
  idToken?: { email?: string; email_verified?: boolean };
}

export interface UpstreamIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next sign-in at this provider is (the provider signs them in without a page). */
  signInAs(account: UpstreamAccount): void;
  close(): Promise<void>;
}

const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
  const server = lastingServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};

/**
 * A second oidc-provider, in the test process, as the upstream OpenID Connect provider: one
 * confidential client (ours, PKCE required), and a sign-in that needs no page: the account
 * `signInAs` named is signed in, and consents, as soon as the interaction starts.
 */
export async function startUpstreamIdp(redirectUris: string | (() => string[])): Promise<UpstreamIdp> {
  let current: UpstreamAccount = { sub: 'nobody' };
  const accounts = new Map<string, UpstreamAccount>();
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const { server, port } = await listen((req, res) => handler(req, res));
  const issuer = `http://localhost:${port}`;
  const client = { clientId: 'identity-service', clientSecret: randomBytes(24).toString('base64url') };
  // Made at the first request, so that a test may register the redirect URI once it knows it (a connector's id is in it).
  const make = () =>
    new Provider(issuer, {
      clients: [
        {
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uris: typeof redirectUris === 'string' ? [redirectUris] : redirectUris(),
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      findAccount: (_ctx, id) => {
        const account = accounts.get(id);
        if (!account) return undefined;
        const { idToken, ...claims } = account;
        return { accountId: id, claims: (use: string) => (use === 'id_token' && idToken ? { sub: account.sub, ...idToken } : claims) };
      },
      // The scopes' claims in the ID token too (as many providers send them), so that a test can make the two disagree.
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      // The user consented once and for all: no consent prompt.
      loadExistingGrant: async (ctx) => {
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      // Its own key and lifetimes, as a real provider has them (oidc-provider otherwise uses development keys and says so).
      jwks: { keys: [generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })] },
      ttl: { AccessToken: 3600, IdToken: 3600, Interaction: 3600, Session: 3600, Grant: 3600 },
    });
  let made: { provider: Provider; callback: ReturnType<Provider['callback']> } | undefined;
  handler = (req, res) => {
    if (!made) {
      const provider = make();
      made = { provider, callback: provider.callback() };
    }
    const { provider, callback } = made;
    if (req.url?.startsWith('/interaction/')) {
      accounts.set(current.sub, current);
      provider.interactionFinished(req, res, { login: { accountId: current.sub } }, { mergeWithLastSubmission: false }).catch(() => res.writeHead(400).end());
      return;
    }
    callback(req, res);
  };
  return {
    issuer,
    ...client,
    signInAs(account) {
      current = account;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface GitHubLike {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who the next sign-in is, with the emails `/user/emails` lists. */
  signInAs(user: { id: number; login: string; name: string }, emails: Array<{ email: string; primary: boolean; verified: boolean }>): void;
  /** How the token endpoint answers: JSON (the default), or a form-encoded body, as GitHub does for a client that does not ask for JSON. */
  answerTokensAs(format: 'json' | 'form'): void;
  close(): Promise<void>;
}

/**
 * An OAuth 2.0 server shaped like GitHub's: `/login/oauth/authorize` (answering at once for the
 * user `signInAs` named), `/login/oauth/access_token` (a code once, with its PKCE verifier; the
 * client's secret in the body or by HTTP Basic), `/user` and `/user/emails` with the bearer token.
 */
export async function startGitHubLike(): Promise<GitHubLike> {
  const clientId = 'Iv1.identity';
  const clientSecret = randomBytes(20).toString('hex');
  let user = { id: 0, login: 'nobody', name: 'Nobody' };
  let emails: Array<{ email: string; primary: boolean; verified: boolean }> = [];
  const codes = new Map<string, { challenge: string; redirectUri: string; user: typeof user; emails: typeof emails }>();
  const tokens = new Map<string, { user: typeof user; emails: typeof emails }>();
  let tokenFormat: 'json' | 'form' = 'json';
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const { server, port } = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const code = randomBytes(10).toString('hex');
      codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '', redirectUri: url.searchParams.get('redirect_uri') ?? '', user, emails });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const proved = grant && createHash('sha256').update(verifier).digest('base64url') === grant.challenge;
        const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
        const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [];
        if (
          (basic ? basicId : form.get('client_id')) !== clientId ||
          (basic ? basicSecret : form.get('client_secret')) !== clientSecret ||
          !grant ||
          !proved ||
          form.get('redirect_uri') !== grant.redirectUri
        ) {
          json(res, 400, { error: 'bad_verification_code' });
          return;
        }
        const token = randomBytes(20).toString('hex');
        tokens.set(token, { user: grant.user, emails: grant.emails });
        const answer = { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' };
        if (tokenFormat === 'form') res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' }).end(new URLSearchParams(answer).toString());
        else json(res, 200, answer);
      });
      return;
    }
    const holder = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
    if (!holder) {
      json(res, 401, { message: 'Bad credentials' });
      return;
    }
    if (url.pathname === '/user') json(res, 200, { ...holder.user, avatar_url: `https://avatars.example/${holder.user.id}`, email: null });
    else if (url.pathname === '/user/emails') json(res, 200, holder.emails);
    else json(res, 404, { message: 'Not Found' });
  });
  return {
    url: `http://localhost:${port}`,
    clientId,
    clientSecret,
    signInAs(next, nextEmails) {
      user = next;
      emails = nextEmails;
    },
    answerTokensAs(format) {
      tokenFormat = format;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ForgingIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the next ID tokens say differently from an honest provider's (another audience, another issuer). */
  forge(claims: { aud?: string; iss?: string }): void;
  close(): Promise<void>;
}

/**
 * A minimal OpenID Connect provider that signs, with its own published key, ID tokens whose claims
 * a test chooses: what a compromised or confused provider would send. Discovery, JWKS, an
 * authorization endpoint that answers at once, and a token endpoint (PKCE checked).
 */
export async function startForgingIdp(): Promise<ForgingIdp> {
  const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'forging-key', alg: 'ES256', use: 'sig' };
  const clientId = 'forged-client';
  const clientSecret = randomBytes(20).toString('hex');
  let forged: { aud?: string; iss?: string } = {};
  const codes = new Map<string, { nonce: string; challenge: string }>();
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  let issuer = '';
  const { server, port } = await listen((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      });
    } else if (url.pathname === '/jwks') {
      json(res, 200, { keys: [jwk] });
    } else if (url.pathname === '/authorize') {
      const code = randomBytes(10).toString('hex');
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '', challenge: url.searchParams.get('code_challenge') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', issuer);
      res.writeHead(302, { location: back.href }).end();
    } else if (url.pathname === '/token' && req.method === 'POST') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const proved =
          grant &&
          createHash('sha256')
            .update(form.get('code_verifier') ?? '')
            .digest('base64url') === grant.challenge;
        if (!grant || !proved || form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
          json(res, 400, { error: 'invalid_grant' });
          return;
        }
        new SignJWT({ nonce: grant.nonce })
          .setProtectedHeader({ alg: 'ES256', kid: jwk.kid })
          .setSubject('forged-subject')
          .setIssuer(forged.iss ?? issuer)
          .setAudience(forged.aud ?? clientId)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey)
          .then((idToken) => json(res, 200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken }))
          .catch(() => json(res, 500, { error: 'server_error' }));
      });
    } else {
      json(res, 404, { error: 'not_found' });
    }
  });
  issuer = `http://localhost:${port}`;
  return {
    issuer,
    clientId,
    clientSecret,
    forge(claims) {
      forged = claims;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
