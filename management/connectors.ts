import { Ajv } from 'ajv';

import { addWebUrlFormats } from '../lib/http/web-origin.js';

import { ApiError, assertThat, isDuplicateKeyError } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { connectorToApi, type ConnectorDocument } from '../social/connectors.js';
import { connectorFactories, factoryById, factoryToApi } from '../social/factories.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams } from './schemas/common.js';
import { inUnit } from '../lib/store/session.js';

const ajv = addWebUrlFormats(new Ajv({ allErrors: false, strict: false }));
const anyObject = { type: 'object', additionalProperties: true } as const;
const metadata = {
  type: 'object',
  properties: {
    target: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]*$' },
    name: {
      anyOf: [
        { type: 'string', maxLength: 128 },
        { type: 'object', properties: { en: { type: 'string', maxLength: 128 } } },
      ],
    },
    logo: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$' },
  },
  additionalProperties: false,
} as const;

/** A factory's configuration checked against its schema: 400 `connector.invalid_config` naming the problem. */
function checkConfig(connectorId: string, config: Record<string, unknown>) {
  const factory = factoryById(connectorId)!;
  const validate = ajv.compile(factory.configSchema);
  const merged = { ...factory.defaults, ...config };
  if (!validate(merged)) {
    const errors = validate.errors ?? [];
    // An OpenID Connect connector is configured one of two ways; say both.
    if (errors.some(({ keyword }) => keyword === 'anyOf')) {
      throw new ApiError(
        'connector.invalid_config',
        'config needs `issuer` (its discovery), or `authorizationEndpoint`, `tokenEndpoint` and `idTokenVerificationConfig: {jwksUri, issuer}`',
      );
    }
    const [first] = errors;
    throw new ApiError('connector.invalid_config', `config${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  return merged;
}

const nameOf = (name: string | { en?: string } | undefined) => (typeof name === 'string' ? name : name?.en);

/**
 * Logto's social connectors (`/api/connector-factories`, `/api/connectors`): made from a factory
 * with its configuration; the client secret is write-only (sealed, never answered). One connector
 * per `target` (422 `connector.multiple_target_with_same_platform`), as Logto allows.
 */
export function connectorRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { connectors } = deps;

  router.get('/connector-factories', guard({ response: { type: 'array', items: anyObject } }), async (ctx) => {
    ctx.body = connectorFactories.map(factoryToApi);
  });
  router.get('/connector-factories/:id', guard({ params: idParams('id'), response: anyObject }), async (ctx) => {
    const factory = factoryById(ctx.guard.params.id);
    assertThat(factory, () => new ApiError('connector.not_found', `no connector factory has id \`${ctx.guard.params.id}\``));
    ctx.body = factoryToApi(factory!);
  });

  router.get('/connectors', guard({ response: { type: 'array', items: anyObject } }), async (ctx) => {
    ctx.body = (await connectors.collection.find({}).sort({ createdAt: 1, _id: 1 }).toArray()).map(connectorToApi);
  });
  router.get('/connectors/:id', guard({ params: idParams('id'), response: anyObject }), async (ctx) => {
    ctx.body = connectorToApi(await connectors.get(ctx.guard.params.id));
  });

  // Asked first for the answer; the unique index on the target decides between two at once.
  const targetTaken = (target: string) => (error: unknown) => {
    if (isDuplicateKeyError(error)) throw new ApiError('connector.multiple_target_with_same_platform', `a connector for \`${target}\` exists already`);
    throw error;
  };
  const assertTargetFree = async (target: string, except?: string) => {
    const other = await connectors.collection.findOne({ 'metadata.target': target, ...(except && { _id: { $ne: except } }) });
    assertThat(!other, () => new ApiError('connector.multiple_target_with_same_platform', `a connector for \`${target}\` exists already`));
  };

  router.post(
    '/connectors',
    guard({
      body: {
        type: 'object',
        properties: { connectorId: { type: 'string', minLength: 1, maxLength: 64 }, config: anyObject, metadata, syncProfile: { type: 'boolean' } },
        required: ['connectorId', 'config'],
        additionalProperties: false,
      } as const,
      response: anyObject,
    }),
    async (ctx) => {
      const { connectorId, config, metadata: given = {}, syncProfile = false } = ctx.guard.body;
      const factory = factoryById(connectorId);
      assertThat(factory, () => new ApiError('connector.not_found', `no connector factory has id \`${connectorId}\``));
      const checked = checkConfig(connectorId, config);
      const made = connectors.make(
        factory!,
        checked,
        { ...(given.target && { target: given.target }), ...(nameOf(given.name) && { name: nameOf(given.name)! }), ...(given.logo && { logo: given.logo }) },
        syncProfile,
      );
      await assertTargetFree(made.metadata.target);
      await deps.write(originOf(ctx), async ({ intend, record }) => {
        await intend({ entity: 'Connector', action: 'created', id: made._id });
        await connectors.collection.insertOne(made, inUnit()).catch(targetTaken(made.metadata.target));
        record({ entity: 'Connector', action: 'created', id: made._id, data: connectorToApi(made) });
      });
      ctx.body = connectorToApi(made);
    },
  );

  router.patch(
    '/connectors/:id',
    guard({
      params: idParams('id'),
      body: {
        type: 'object',
        properties: { config: anyObject, metadata, syncProfile: { type: 'boolean' } },
        additionalProperties: false,
        minProperties: 1,
      } as const,
      response: anyObject,
    }),
    async (ctx) => {
      const current = await connectors.get(ctx.guard.params.id);
      const { config, metadata: given, syncProfile } = ctx.guard.body;
      const next: ConnectorDocument = { ...current, updatedAt: Date.now() };
      if (config) {
        // The secret stays unless a new one is given: it is never read back to be sent again.
        const { clientSecret, ...rest } = checkConfig(current.connectorId, { ...current.config, clientSecret: 'kept', ...config }) as Record<string, unknown>;
        next.config = rest;
        if (typeof config.clientSecret === 'string') next.sealedSecret = connectors.seal(current._id, clientSecret as string);
      }
      if (given) {
        next.metadata = {
          ...current.metadata,
          ...(given.target && { target: given.target }),
          ...(nameOf(given.name) && { name: nameOf(given.name)! }),
          ...(given.logo && { logo: given.logo }),
        };
        if (given.target) await assertTargetFree(given.target, current._id);
      }
      if (syncProfile !== undefined) next.syncProfile = syncProfile;
      await deps.write(originOf(ctx), async ({ intend, record }) => {
        await intend({ entity: 'Connector', action: 'updated', id: current._id });
        await connectors.collection.replaceOne({ _id: current._id }, next, inUnit()).catch(targetTaken(next.metadata.target));
        record({ entity: 'Connector', action: 'updated', id: current._id, data: connectorToApi(next) });
      });
      ctx.body = connectorToApi(next);
    },
  );

  router.delete('/connectors/:id', guard({ params: idParams('id') }), async (ctx) => {
    const current = await connectors.get(ctx.guard.params.id);
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'Connector', action: 'deleted', id: current._id });
      await connectors.collection.deleteOne({ _id: current._id }, inUnit());
      record({ entity: 'Connector', action: 'deleted', id: current._id, data: connectorToApi(current) });
    });
    ctx.status = 204;
  });
}
