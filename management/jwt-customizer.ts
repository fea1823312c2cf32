import { Script } from 'node:vm';

import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import {
  customizerCollection,
  customizerId,
  customizerKeys,
  customizerTypes,
  type CustomizerType,
  type JwtCustomizer,
} from '../lib/store/queries/jwt-customizer.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { freeFormObject } from './schemas/common.js';
import { inUnit } from '../lib/store/session.js';

const script = { type: 'string', minLength: 1, maxLength: 65536 } as const;
/** A stored script may be empty, as Logto's: the customizer then adds no claim. */
const storedScript = { type: 'string', maxLength: 65536 } as const;
const environmentVariables = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: { type: 'string', maxLength: 4096 },
  propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
} as const;
/** Logto's fields of a customizer (its `jwtCustomizerGuard`). */
const fields = { script, environmentVariables, tokenSample: freeFormObject, contextSample: freeFormObject, blockIssuanceOnError: { type: 'boolean' } } as const;
const customizerResponse = {
  type: 'object',
  properties: {
    script: { type: 'string' },
    environmentVariables: { type: 'object', additionalProperties: true },
    tokenSample: { type: 'object', additionalProperties: true },
    contextSample: { type: 'object', additionalProperties: true },
    blockIssuanceOnError: { type: 'boolean' },
  },
  required: ['script', 'environmentVariables'],
};
const typeParams = { type: 'object', properties: { tokenTypePath: { enum: customizerTypes } }, required: ['tokenTypePath'] } as const;

/** Compiles without running, so that a script with a syntax error is refused when it is stored. */
function assertCompiles(source: string) {
  try {
    new Script(source, { filename: 'getCustomJwtClaims.js' });
  } catch (error) {
    throw new ApiError('guard.invalid_input', `body.script does not compile: ${(error as Error).message}`, { field: 'body.script' });
  }
}

/** The customizer as the API shows it (Logto's value): without our id and time. */
const shown = ({ _id: _id, updatedAt: _updatedAt, ...value }: JwtCustomizer) => value;

/**
 * Logto's JWT customizers (packages/core/src/routes/logto-config/jwt-customizer.ts): `getCustomJwtClaims`
 * for user tokens (`access-token`) and for a machine's own (`client-credentials`), with a dry run.
 */
export function jwtCustomizerRoutes(router: ApiRouter, deps: ManagementDeps) {
  const collection = customizerCollection(deps.database.db);
  const path = '/configs/jwt-customizer/:tokenTypePath';

  /** Stores the customizer and records the change (the script's variables by name only: their values are secrets). */
  const save = (ctx: Parameters<typeof originOf>[0], type: CustomizerType, document: JwtCustomizer) =>
    deps.write(originOf(ctx), async ({ record }) => {
      await collection.replaceOne({ _id: document._id }, document, { upsert: true });
      record({
        entity: 'JwtCustomizer',
        action: 'updated',
        id: type,
        data: {
          script: document.script,
          environmentVariableNames: Object.keys(document.environmentVariables),
          blockIssuanceOnError: document.blockIssuanceOnError,
        },
      });
    });

  router.get(
    '/configs/jwt-customizer',
    guard({
      response: {
        type: 'array',
        items: { type: 'object', properties: { key: { type: 'string' }, value: customizerResponse }, required: ['key', 'value'] },
      },
    }),
    async (ctx) => {
      const stored = await collection.find({ _id: { $in: customizerTypes.map(customizerId) } }).toArray();
      ctx.body = customizerTypes.flatMap((type) => {
        const found = stored.find(({ _id }) => _id === customizerId(type));
        return found ? [{ key: customizerKeys[type], value: shown(found) }] : [];
      });
    },
  );

  router.get(path, guard({ params: typeParams, response: customizerResponse }), async (ctx) => {
    const type = ctx.guard.params.tokenTypePath;
    const stored = await collection.findOne({ _id: customizerId(type) });
    assertThat(stored, () => notFound('jwt customizer', type));
    ctx.body = shown(stored);
  });

  // As Logto's: 201 when it creates the customizer, 200 when it replaces one.
  router.put(
    path,
    guard({
      params: typeParams,
      body: { type: 'object', properties: { ...fields, script: storedScript }, required: ['script'], additionalProperties: false },
      response: customizerResponse,
    }),
    async (ctx) => {
      const type = ctx.guard.params.tokenTypePath;
      const { script: source, environmentVariables: variables = {}, ...rest } = ctx.guard.body;
      assertCompiles(source);
      const existed = (await collection.countDocuments({ _id: customizerId(type) })) > 0;
      const document: JwtCustomizer = { _id: customizerId(type), script: source, environmentVariables: variables, ...rest, updatedAt: Date.now() };
      await save(ctx, type, document);
      ctx.status = existed ? 200 : 201;
      ctx.body = shown(document);
    },
  );

  // A partial update of a stored customizer (404 when there is none), as Logto's.
  router.patch(
    path,
    guard({ params: typeParams, body: { type: 'object', properties: fields, additionalProperties: false }, response: customizerResponse }),
    async (ctx) => {
      const type = ctx.guard.params.tokenTypePath;
      const stored = await collection.findOne({ _id: customizerId(type) });
      assertThat(stored, () => notFound('jwt customizer', type));
      if (ctx.guard.body.script !== undefined) assertCompiles(ctx.guard.body.script);
      const document: JwtCustomizer = { ...stored, ...ctx.guard.body, updatedAt: Date.now() };
      await save(ctx, type, document);
      ctx.body = shown(document);
    },
  );

  router.delete(path, guard({ params: typeParams }), async (ctx) => {
    const type = ctx.guard.params.tokenTypePath;
    await deps.write(originOf(ctx), async ({ record }) => {
      const { deletedCount } = await collection.deleteOne({ _id: customizerId(type) }, inUnit());
      assertThat(deletedCount === 1, () => notFound('jwt customizer', type));
      record({ entity: 'JwtCustomizer', action: 'deleted', id: type, data: {} });
    });
    ctx.status = 204;
  });

  // Dry run: the script against a sample token and context, in a sandbox like the tokens' own but apart from it.
  // A failure is Logto's 422 jwt_customizer.general, its reason in `data.message`.
  router.post(
    '/configs/jwt-customizer/test',
    guard({
      body: {
        type: 'object',
        properties: { tokenType: { enum: customizerTypes }, script, environmentVariables, token: freeFormObject, context: freeFormObject },
        required: ['script'],
        additionalProperties: false,
      },
      response: { type: 'object', additionalProperties: true },
    }),
    async (ctx) => {
      const { script: source, environmentVariables: variables = {}, token = {}, context = {} } = ctx.guard.body;
      assertCompiles(source);
      const outcome = await deps.dryRunCustomClaims(source, { token, context, environmentVariables: variables });
      if ('failure' in outcome && outcome.failure.code === 'access_denied') {
        // The script refused the token (`api.denyAccess`): 403 with its message, as a real token request would be
        // refused; Logto's code, `jwt_customizer.general` (its integration-tests api/logto-config/jwt-customizer.test.ts).
        throw new ApiError('jwt_customizer.general', outcome.failure.message, { message: outcome.failure.message }, 403);
      }
      if ('failure' in outcome) {
        const message = `the script failed (${outcome.failure.code}): ${outcome.failure.message}`;
        throw new ApiError('jwt_customizer.general', message, { message });
      }
      ctx.body = outcome.claims;
    },
  );
}
