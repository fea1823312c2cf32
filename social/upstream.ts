import * as client from 'openid-client';

import { ApiError } from '../lib/errors.js';
import type { UpstreamUser } from '../lib/store/identities.js';
import type { ConnectorDocument, ConnectorStore } from './connectors.js';
import { factoryById, type UpstreamKind } from './factories.js';

/**
 * An upstream provider as this module talks to it: a social connector or an enterprise OIDC
 * connector. `key` changes whenever its configuration does (its discovery is kept under it).
 */
export interface UpstreamClient {
  key: string;
  kind: UpstreamKind;
  config: Record<string, unknown>;
  secret: () => string;
}

/** A social connector as an upstream client. */
export function socialClientOf(connector: ConnectorDocument, connectors: ConnectorStore): UpstreamClient {
  return {
    key: `social:${connector._id}:${connector.updatedAt}`,
    kind: factoryById(connector.connectorId)!.kind,
    config: connector.config,
    secret: () => connectors.secretOf(connector),
  };
}

/** What one authorization request to the provider is checked against when it comes back. */
export interface AuthorizationChecks {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * The checks of a code obtained by someone else's authorization request (the Management API
 * links an identity from connector data): what that request sent, where it sent any.
 */
export type CallbackChecks = Pick<AuthorizationChecks, 'redirectUri'> & Partial<Omit<AuthorizationChecks, 'redirectUri'>>;

const loopback = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Plain http is for a provider on this machine only (development, tests); anything else is https. */
const insecureAllowed = (url: string) => {
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && loopback.has(parsed.hostname);
};

const failed = (reason: string) => new ApiError('connector.general', `the sign-in with the provider failed: ${reason}`);

/** openid-client's reason, with what it wraps (the check that failed, or the provider's error): never a token. */
function reasonOf(error: unknown): string {
  const {
    message,
    code,
    error: providerError,
    error_description: description,
  } = error as Error & { code?: string; error?: string; error_description?: string };
  const cause = (error as { cause?: unknown }).cause;
  const detail = providerError ? `${providerError}${description ? `: ${description}` : ''}` : cause instanceof Error ? cause.message : undefined;
  return [message, code && `(${code})`, detail && `- ${detail}`].filter(Boolean).join(' ');
}

/** How this service authenticates at the provider's token endpoint (Logto's `tokenEndpointAuthMethod`; a POSTed secret unless set). */
function clientAuthOf(method: string | undefined, secret: string): client.ClientAuth {
  if (method === 'client_secret_basic') return client.ClientSecretBasic(secret);
  if (method === 'client_secret_jwt') return client.ClientSecretJwt(secret);
  return client.ClientSecretPost(secret);
}

/**
 * A fetch that reads a form-encoded answer of `tokenEndpoint` as the JSON openid-client expects
 * (Logto's `tokenEndpointResponseType: "query-string"`); every other answer as it is.
 */
function formTokenResponses(fetch: typeof globalThis.fetch, tokenEndpoint: string): typeof globalThis.fetch {
  const endpoint = new URL(tokenEndpoint).href;
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input)).href;
    if (url !== endpoint || (response.headers.get('content-type') ?? '').includes('json')) return response;
    const fields = Object.fromEntries(new URLSearchParams(await response.text()));
    if (typeof fields.expires_in === 'string' && /^\d+$/.test(fields.expires_in)) (fields as Record<string, unknown>).expires_in = Number(fields.expires_in);
    const headers = new Headers(response.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    return new Response(JSON.stringify(fields), { status: response.status, statusText: response.statusText, headers });
  };
}

/** Logto's `authRequestOptionalConfig` names, as the authorization request spells them (OpenID Connect Core §3.1.2.1). */
const optionalParameterNames: Record<string, string> = {
  display: 'display',
  prompt: 'prompt',
  maxAge: 'max_age',
  uiLocales: 'ui_locales',
  idTokenHint: 'id_token_hint',
  loginHint: 'login_hint',
  acrValues: 'acr_values',
};

/** The authorization request parameters a configuration adds: Logto's `authRequestOptionalConfig` and `customConfig`. */
function extraParametersOf(config: Record<string, unknown>): Record<string, string> {
  const optional = (config.authRequestOptionalConfig ?? {}) as Record<string, string>;
  const named = Object.entries(optional).flatMap(([name, value]) => (optionalParameterNames[name] ? [[optionalParameterNames[name], value]] : []));
  return { ...Object.fromEntries(named), ...((config.customConfig ?? {}) as Record<string, string>) };
}

/** A dotted path of an upstream profile (`id`, `data.login`). */
const pick = (profile: Record<string, unknown>, path: string | undefined) =>
  path
    ?.split('.')
    .reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), profile);
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : typeof value === 'number' ? String(value) : undefined);

/**
 * Upstream sign-in on openid-client: the authorization URL (PKCE S256, `state` and, for OpenID
 * Connect, `nonce`, always), and the callback checked (state, the code exchanged with its
 * verifier, the ID token's signature, issuer, audience and nonce) before the profile is read.
 * Every request goes through the outbound guard (`fetch`).
 */
export function createUpstream({ fetch }: { fetch: typeof globalThis.fetch }) {
  const configurations = new Map<string, Promise<client.Configuration>>();

  function configurationOf(upstream: UpstreamClient): Promise<client.Configuration> {
    const { key } = upstream;
    let made = configurations.get(key);
    if (!made) {
      made = build(upstream);
      // A failed discovery is not kept: the next sign-in tries again.
      made.catch(() => configurations.delete(key));
      configurations.set(key, made);
    }
    return made;
  }

  async function build(upstream: UpstreamClient): Promise<client.Configuration> {
    const config = upstream.config as Record<string, string>;
    const auth = clientAuthOf(config.tokenEndpointAuthMethod, upstream.secret());
    if (upstream.kind === 'oidc' && !config.issuer) return configured(upstream, auth);
    if (upstream.kind === 'oidc') {
      return client
        .discovery(new URL(config.issuer!), config.clientId!, undefined, auth, {
          [client.customFetch]: fetch,
          ...(insecureAllowed(config.issuer!) && { execute: [client.allowInsecureRequests] }),
        })
        .catch((error: unknown) => {
          throw failed(`the provider's discovery failed (${(error as Error).message})`);
        });
    }
    // Saved configurations are checked (`web-url`); one saved before that check may still hold a URL that does not parse.
    if (![config.authorizationEndpoint, config.tokenEndpoint, config.userInfoEndpoint].every((url) => url && URL.canParse(url))) {
      throw failed("the connector's endpoints are not all URLs; correct its configuration");
    }
    const configuration = new client.Configuration(
      { issuer: new URL(config.authorizationEndpoint!).origin, authorization_endpoint: config.authorizationEndpoint!, token_endpoint: config.tokenEndpoint! },
      config.clientId!,
      undefined,
      auth,
    );
    configuration[client.customFetch] = config.tokenEndpointResponseType === 'query-string' ? formTokenResponses(fetch, config.tokenEndpoint!) : fetch;
    if ([config.authorizationEndpoint!, config.tokenEndpoint!, config.userInfoEndpoint!].every(insecureAllowed)) client.allowInsecureRequests(configuration);
    return configuration;
  }

  /**
   * Logto's OpenID Connect connector configured by hand: its endpoints and the keys and issuer its
   * ID tokens are checked with (signature, issuer, audience, nonce: as after discovery).
   */
  function configured(upstream: UpstreamClient, auth: client.ClientAuth): client.Configuration {
    const config = upstream.config as Record<string, string> & { idTokenVerificationConfig: { jwksUri: string; issuer: string; algorithms?: string[] } };
    const { jwksUri, issuer, algorithms } = config.idTokenVerificationConfig;
    const urls = [config.authorizationEndpoint!, config.tokenEndpoint!, jwksUri, ...(config.userInfoEndpoint ? [config.userInfoEndpoint] : [])];
    if (!urls.every((url) => URL.canParse(url))) throw failed("the connector's endpoints are not all URLs; correct its configuration");
    const configuration = new client.Configuration(
      {
        issuer,
        authorization_endpoint: config.authorizationEndpoint!,
        token_endpoint: config.tokenEndpoint!,
        jwks_uri: jwksUri,
        ...(config.userInfoEndpoint && { userinfo_endpoint: config.userInfoEndpoint }),
      },
      config.clientId!,
      algorithms?.[0] ? { id_token_signed_response_alg: algorithms[0] } : undefined,
      auth,
    );
    configuration[client.customFetch] = fetch;
    if (urls.every(insecureAllowed)) client.allowInsecureRequests(configuration);
    return configuration;
  }

  return {
    /** The provider's authorization URL for one sign-in. */
    async authorizationUri(upstream: UpstreamClient, checks: AuthorizationChecks): Promise<string> {
      const configuration = await configurationOf(upstream);
      const configured = (upstream.config.scope as string | undefined) ?? '';
      // OpenID Connect Core §3.1.2.1: an OpenID Connect request MUST ask for `openid` (added, as Logto adds it).
      const scope = upstream.kind === 'oidc' && !configured.split(/[ +]/).includes('openid') ? `${configured} openid`.trim() : configured;
      return client
        .buildAuthorizationUrl(configuration, {
          // The configuration's own parameters first: the per-sign-in ones below always win.
          ...extraParametersOf(upstream.config),
          redirect_uri: checks.redirectUri,
          ...(scope && { scope }),
          state: checks.state,
          ...(upstream.kind === 'oidc' && { nonce: checks.nonce }),
          code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
          code_challenge_method: 'S256',
        })
        .toString();
    },

    /** The person the callback names, once every check passed; 400 `connector.general` (with the reason) otherwise. */
    async verify(upstream: UpstreamClient, callbackParameters: Record<string, string>, checks: CallbackChecks): Promise<UpstreamUser> {
      const configuration = await configurationOf(upstream);
      const callback = new URL(checks.redirectUri);
      for (const [key, value] of Object.entries(callbackParameters)) callback.searchParams.set(key, value);
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(configuration, callback, {
          ...(checks.codeVerifier && { pkceCodeVerifier: checks.codeVerifier }),
          expectedState: checks.state ?? client.skipStateCheck,
          ...(upstream.kind === 'oidc' && { ...(checks.nonce && { expectedNonce: checks.nonce }), idTokenExpected: true }),
        });
      } catch (error) {
        throw failed(reasonOf(error));
      }
      // Logto's `trustUnverifiedEmail` (false unless the operator says so): an email the provider did not say it verified counts as verified.
      const trustUnverified = upstream.config.trustUnverifiedEmail === true;
      if (upstream.kind === 'oidc') {
        const claims = tokens.claims()!;
        // openid-client checks that the UserInfo's `sub` is the ID token's (OIDC Core §5.3.2).
        const info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub).catch(() => ({}) as Record<string, unknown>);
        const merged = { ...info, ...claims } as Record<string, unknown>;
        // An email and whether it was verified are read from one place, never one from each: the ID
        // token when it names an email, else the UserInfo answer.
        const source: Record<string, unknown> = text(claims.email) ? claims : info;
        const email = text(source.email);
        const verified = source.email_verified === true || trustUnverified;
        return {
          id: claims.sub,
          ...(text(merged.name) && { name: text(merged.name)! }),
          ...(email && verified && { email }),
          ...(email && !verified && { claimedEmail: email }),
          ...(text(merged.picture) && { avatar: text(merged.picture)! }),
        };
      }
      const config = upstream.config as Record<string, unknown> & { profileMap?: Record<string, string> };
      const read = async (endpoint: string) => {
        const response = await client.fetchProtectedResource(configuration, tokens.access_token, new URL(endpoint), 'GET');
        if (!response.ok) throw failed(`the provider's ${endpoint} answered ${response.status}`);
        return response.json() as Promise<unknown>;
      };
      const profile = (await read(config.userInfoEndpoint as string)) as Record<string, unknown>;
      const map = { id: 'id', name: 'name', email: 'email', avatar: 'picture', ...config.profileMap };
      const id = text(pick(profile, map.id));
      if (!id) throw failed('the profile has no id');
      // A profile's email is not known to be verified (unless the operator trusts it); a provider's list of verified addresses is.
      let email = trustUnverified ? text(pick(profile, map.email)) : undefined;
      if (typeof config.emailsEndpoint === 'string') {
        const emails = (await read(config.emailsEndpoint)) as Array<{ email?: string; primary?: boolean; verified?: boolean }>;
        email = (Array.isArray(emails) ? emails.find((entry) => entry.primary && entry.verified)?.email : undefined) ?? email;
      }
      const claimedEmail = email ? undefined : text(pick(profile, map.email));
      return {
        id,
        ...(text(pick(profile, map.name)) && { name: text(pick(profile, map.name))! }),
        ...(email && { email }),
        ...(claimedEmail && { claimedEmail }),
        ...(text(pick(profile, map.avatar)) && { avatar: text(pick(profile, map.avatar))! }),
      };
    },
  };
}

export type Upstream = ReturnType<typeof createUpstream>;
