import { calculateJwkThumbprint, type JWK } from 'jose';

import { activeKeyPairs, generateSigningKey, generateSigningKeyPair, publicKeyObject } from '../../hooks/signing.js';
import { ApiError, assertThat } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams } from '../schemas/common.js';
import { hookResponse, jwksResponse } from '../schemas/hooks.js';

import { hookToApi } from './shapes.js';

/**
 * The public half of each hook's `v1a` key pairs, as a JWKS (RFC 7517; OKP keys, RFC 8037), without a
 * token: what a receiver verifies with holds no secret, and reading it from here lets a receiver
 * follow a rotation on its own. A hook that does not sign with `v1a` (or does not exist) is 404.
 */
export function hookKeysRoute(router: ApiRouter, deps: ManagementDeps) {
  router.get('/hooks/:id/jwks', guard({ params: idParams('id'), public: true, response: jwksResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const hook = await deps.hooks.queries.hooks.findById(id);
    const pairs = hook?.config.signatures?.includes('v1a') ? activeKeyPairs(hook.signingKeyPairs, deps.hooks.clock.now()) : [];
    assertThat(pairs.length > 0, () => new ApiError('entity.not_exists_with_id', `no hook with id \`${id}\` signs with v1a`));
    const keys = await Promise.all(
      pairs.map(async ({ publicKey }) => {
        const jwk = publicKeyObject(publicKey).export({ format: 'jwk' });
        return { ...jwk, kid: await calculateJwkThumbprint(jwk as JWK), use: 'sig', alg: 'EdDSA' };
      }),
    );
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = { keys };
  });
}

/**
 * Rotation: the new key (or `v1a` key pair) signs from now on; the old one keeps signing beside it
 * for the overlap (HOOKS_KEY_OVERLAP), so that receivers can switch keys without dropping a message.
 */
export function hookRotationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { hooks } = deps;
  const { hooks: hookQueries } = hooks.queries;

  router.patch('/hooks/:id/signing-key', guard({ params: idParams('id'), response: hookResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const signingKey = generateSigningKey();
    const updated = await deps.write(originOf(ctx), async ({ record }) => {
      const hook = await hookQueries.findByIdOrThrow(id);
      // The worker's clock, which decides when the old key stops signing.
      const now = hooks.clock.now();
      const until = new Date(now.getTime() + hooks.keyOverlapMs);
      const kept = hook.signingKeys
        .filter(({ expiresAt }) => expiresAt === null || expiresAt > now)
        .map((key) => ({ ...key, expiresAt: key.expiresAt && key.expiresAt < until ? key.expiresAt : until }));
      const result = await hookQueries.update(id, {
        signingKeys: [{ key: signingKey, createdAt: now, expiresAt: null }, ...kept],
        updatedAt: now.getTime(),
      });
      record({ entity: 'Hook', action: 'signing_key.rotated', id, data: hookToApi(result) });
      return result;
    });
    ctx.body = { ...hookToApi(updated), signingKey };
  });

  // The same for the `v1a` key pair: the new pair signs from now on, the old one beside it for the overlap.
  router.patch('/hooks/:id/signing-key-pair', guard({ params: idParams('id'), response: hookResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const pair = generateSigningKeyPair();
    const updated = await deps.write(originOf(ctx), async ({ record }) => {
      const hook = await hookQueries.findByIdOrThrow(id);
      assertThat(
        hook.config.signatures?.includes('v1a'),
        () =>
          new ApiError('hook.v1a_not_enabled', 'the hook does not sign with `v1a`; set `config.signatures` to include it first', {
            field: 'config.signatures',
          }),
      );
      const now = hooks.clock.now();
      const until = new Date(now.getTime() + hooks.keyOverlapMs);
      const kept = activeKeyPairs(hook.signingKeyPairs, now).map((kept) => ({
        ...kept,
        expiresAt: kept.expiresAt && kept.expiresAt < until ? kept.expiresAt : until,
      }));
      const result = await hookQueries.update(id, { signingKeyPairs: [{ ...pair, createdAt: now, expiresAt: null }, ...kept], updatedAt: now.getTime() });
      record({ entity: 'Hook', action: 'signing_key_pair.rotated', id, data: hookToApi(result, now) });
      return result;
    });
    ctx.body = hookToApi(updated, hooks.clock.now());
  });
}
