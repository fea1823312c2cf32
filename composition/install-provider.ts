import { createLocalJWKSet, type JWK } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import * as tokenExchange from '../grants/token-exchange/index.js';
import { tokenResponseConformance } from '../grants/token-response.js';
import { createClientAddress, useClientAddress } from '../lib/http/client-address.js';
import type { Metrics } from '../lib/metrics.js';
import { noteRequest, requestIds } from '../lib/request-context.js';
import { installHashedSecretComparison } from '../provider/client-secret.js';
import { formPostEndpoints } from '../provider/form-post-endpoints.js';
import { refuseFraming } from '../provider/framing.js';
import { replaceSigningKeys } from '../provider/internals.js';
import { recordSessionContexts } from '../provider/session-contexts.js';
import { jwtIntrospection } from '../provider/introspection.js';
import { publicJwks } from '../provider/keys.js';
import { answerUnavailability } from '../provider/unavailable.js';
import type { Configured } from './configure.js';
import type { ResolvedOptions } from './options.js';
import type { Parts } from './parts.js';

/**
 * Our middleware on the provider, in the order a request meets it: hashed client secrets, outage
 * answers, framing refused, the database watch, request ids, grant metrics, the client's address,
 * conformant token responses, form posts, JWT introspection with the impersonation kill switch;
 * then key rotation. Answers how tokens are verified (our key ring, or a host's own keys).
 */
export function installProvider(provider: Provider, options: ResolvedOptions, parts: Parts, { configuration, keysManaged }: Configured) {
  const { keyRing, watch, db } = parts;
  installHashedSecretComparison(provider, options.clock);
  answerUnavailability(provider);
  provider.use(refuseFraming);
  provider.use(watch.providerMiddleware);
  // Every request gets an id (the caller's X-Request-Id, or a new one), and says what answered it.
  provider.use(requestIds);
  provider.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      noteRequest({ ...(ctx.oidc?.route && { route: `oidc:${ctx.oidc.route}` }), clientId: ctx.oidc?.client?.clientId });
    }
  });
  if (options.metrics) countGrants(provider, options.metrics);
  const clientAddress = createClientAddress(options.trustProxy);
  provider.use(useClientAddress(clientAddress));
  provider.use(tokenResponseConformance);
  // Where each session began, for the session routes.
  recordSessionContexts(provider, db, options.logger);
  const routes = { authorization: '/auth', end_session: '/session/end', ...configuration.routes };
  provider.use(formPostEndpoints([routes.authorization, routes.end_session]));

  const { keys } = configuration.jwks as { keys: Parameters<typeof publicJwks>[0] };
  const getKey = keysManaged ? keyRing.getKey : createLocalJWKSet(publicJwks(keys));
  // Introspection of our JWT access tokens, and the impersonation kill switch there.
  provider.use(
    jwtIntrospection({
      getKey,
      issuer: () => provider.issuer,
      revoked: async (id) => (await db.collection<{ _id: string }>('impersonation_revocations').countDocuments({ _id: id }, { limit: 1 })) > 0,
    }),
  );
  // Rotation applies to the provider, our token checks and the cookie signers, here at once
  // and in other processes when the ring's generation moves.
  if (keysManaged) {
    keyRing.onChange((jwks) => {
      replaceSigningKeys(provider, jwks);
      // Koa's cookie signer (the provider is a Koa application) reads its keys per request.
      provider.keys = keyRing.cookieKeys;
    });
    parts.caches.registry.watch('oidcKeys', () => {
      keyRing.reload().catch((error: unknown) => options.logger.error('The rotated keys could not be loaded', error));
    });
  }
  return {
    getKey,
    algorithms: [...new Set(keys.map(({ alg }) => alg).filter((alg): alg is string => typeof alg === 'string'))],
    /** The key that signs the audit's checkpoints: the ring's current one, or the host's first. */
    signingKey: () => (keysManaged ? keyRing.jwks().keys : (keys as JWK[]))[0]!,
    /** The public keys the provider publishes (its JWKS): what the checkpoints verify against. */
    publicKeys: () => publicJwks(keysManaged ? keyRing.jwks().keys : keys),
    clientAddress,
  };
}

export type Installed = ReturnType<typeof installProvider>;

/**
 * Token requests by grant and outcome, and the token exchange's own family beside them. The grant
 * label is one of the grant types there are, never what a request made up (labels are kept forever).
 */
function countGrants(provider: Provider, metrics: Metrics) {
  const grants = new Set([
    'authorization_code',
    'refresh_token',
    'client_credentials',
    tokenExchange.grantType,
    'urn:ietf:params:oauth:grant-type:device_code',
    'urn:openid:params:grant-type:ciba',
  ]);
  const grantOf = (ctx: KoaContextWithOIDC) => {
    const given = ctx.oidc?.params?.grant_type;
    return typeof given === 'string' && grants.has(given) ? given : 'other';
  };
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    metrics.tokens.inc({ grant: grantOf(ctx), outcome: 'issued' });
    if (grantOf(ctx) === tokenExchange.grantType) metrics.exchanges.inc({ outcome: 'issued' });
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error?: string }) => {
    metrics.tokens.inc({ grant: grantOf(ctx), outcome: error.error ?? 'server_error' });
    if (grantOf(ctx) === tokenExchange.grantType) metrics.exchanges.inc({ outcome: error.error ?? 'server_error' });
  });
}
