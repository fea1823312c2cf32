import { assertThat, ApiError } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import type { ApiRouter, ManagementDeps, OidcKeyType, SigningKeyFamily } from './deps.js';
import { originOf } from './origin.js';

/** Logto's two kinds of keys, and the families a signing key may be of (`OKP` is EdDSA's). */
const oidcKeyTypes: OidcKeyType[] = ['private-keys', 'cookie-keys'];
const signingKeyFamilies: SigningKeyFamily[] = ['EC', 'OKP', 'RSA'];
/** The longest grace period a staged rotation may ask for: 30 days, in seconds. */
const maxRotationGracePeriod = 30 * 24 * 60 * 60;

const keyTypeParam = { type: 'object', properties: { keyType: { enum: oidcKeyTypes } }, required: ['keyType'] } as const;
const keyResponse = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      createdAt: { type: 'number' },
      signingKeyAlgorithm: { enum: signingKeyFamilies },
      alg: { type: 'string' },
      keys: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, alg: { type: 'string' } }, required: ['id', 'alg'] } },
      status: { enum: ['next', 'current', 'previous'] },
      activatesAt: { type: 'number' },
    },
    required: ['id', 'createdAt', 'status'],
  },
};

/**
 * The provider's signing keys and cookie keys, as Logto's `/configs/oidc/:keyType` routes show and
 * change them: ids, algorithms and dates, never key material. A rotation makes a key that signs
 * from now on and keeps the one it replaces for verification; deleting that one ends it. A
 * private key is a key set, one key per algorithm (`provider/oidc-keys.ts`), so that clients
 * asking for RS256, ES256 or EdDSA ID tokens keep getting them whatever family it was made for.
 */
export function oidcKeyRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { keyRing } = deps;
  const managed = () =>
    assertThat(keyRing, () => new ApiError('oidc.keys_managed_by_host', "this deployment's host gives the provider its own keys; rotate them there"));
  const changed = async (ctx: Parameters<typeof originOf>[0], keyType: OidcKeyType, action: 'rotated' | 'deleted', data: Record<string, unknown>) => {
    // The change record names what changed, never key material; other processes pick it up from the generation.
    await deps.write(originOf(ctx), async ({ record }) => {
      record({ entity: 'OidcKey', action, id: keyType, data });
    });
  };

  router.get('/configs/oidc/:keyType', guard({ params: keyTypeParam, response: keyResponse }), async (ctx) => {
    managed();
    ctx.body = await keyRing!.list(ctx.guard.params.keyType);
  });

  router.post(
    '/configs/oidc/:keyType/rotate',
    guard({
      params: keyTypeParam,
      body: {
        type: 'object',
        properties: {
          signingKeyAlgorithm: { enum: signingKeyFamilies },
          rotationGracePeriod: { type: 'integer', minimum: 0, maximum: maxRotationGracePeriod },
        },
        additionalProperties: false,
      },
      bodyOptional: true,
      response: keyResponse,
    }),
    async (ctx) => {
      managed();
      const {
        params: { keyType },
        body: { signingKeyAlgorithm, rotationGracePeriod },
      } = ctx.guard;
      for (const [field, value] of Object.entries({ signingKeyAlgorithm, rotationGracePeriod })) {
        assertThat(
          keyType === 'private-keys' || value === undefined,
          () => new ApiError('guard.invalid_input', `body.${field} is for private keys only`, { field: `body.${field}` }),
        );
      }
      const keys = await keyRing!.rotate(keyType, signingKeyAlgorithm, rotationGracePeriod);
      await changed(ctx, keyType, 'rotated', { keys: keys.map(({ id, alg, status }) => ({ id, alg, status })) });
      ctx.body = keys;
    },
  );

  router.delete(
    '/configs/oidc/:keyType/:keyId',
    guard({
      params: {
        ...keyTypeParam,
        properties: { ...keyTypeParam.properties, keyId: { type: 'string', minLength: 1, maxLength: 128 } },
        required: ['keyType', 'keyId'],
      },
    }),
    async (ctx) => {
      managed();
      const { keyType, keyId } = ctx.guard.params;
      await keyRing!.remove(keyType, keyId);
      await changed(ctx, keyType, 'deleted', { id: keyId });
      ctx.status = 204;
    },
  );
}
