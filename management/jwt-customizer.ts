import { Script } from 'node:vm';

import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { customizerCollection, customizerId, type JwtCustomizer } from '../lib/store/queries/jwt-customizer.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { freeFormObject } from './schemas/common.js';

const path = '/configs/jwt-customizer/access-token';
const script = { type: 'string', minLength: 1, maxLength: 65536 } as const;
const environmentVariables = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: { type: 'string', maxLength: 4096 },
  propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
} as const;
const customizerResponse = {
  type: 'object',
  properties: { script: { type: 'string' }, environmentVariables: { type: 'object', additionalProperties: true } },
  required: ['script', 'environmentVariables'],
};

/** Compiles without running, so that a script with a syntax error is refused when it is stored. */
function assertCompiles(source: string) {
  try {
    new Script(source, { filename: 'getCustomJwtClaims.js' });
  } catch (error) {
    throw new ApiError('guard.invalid_input', `body.script does not compile: ${(error as Error).message}`, { field: 'body.script' });
  }
}

/** The access-token customizer (`getCustomJwtClaims`), stored as Logto stores it, with a dry run. */
export function jwtCustomizerRoutes(router: ApiRouter, deps: ManagementDeps) {
  const collection = customizerCollection(deps.database.db);

  router.get(path, guard({ response: customizerResponse }), async (ctx) => {
    const stored = await collection.findOne({ _id: customizerId });
    assertThat(stored, () => notFound('jwt customizer', 'access-token'));
    ctx.body = { script: stored.script, environmentVariables: stored.environmentVariables };
  });

  router.put(
    path,
    guard({
      body: { type: 'object', properties: { script, environmentVariables }, required: ['script'], additionalProperties: false },
      response: customizerResponse,
    }),
    async (ctx) => {
      const { script: source, environmentVariables: variables = {} } = ctx.guard.body;
      assertCompiles(source);
      const document: JwtCustomizer = { _id: customizerId, script: source, environmentVariables: variables, updatedAt: Date.now() };
      await deps.write(originOf(ctx), async ({ session, record }) => {
        await collection.replaceOne({ _id: customizerId }, document, { upsert: true, session });
        record({ entity: 'JwtCustomizer', action: 'updated', id: 'access-token', data: { script: source, environmentVariableNames: Object.keys(variables) } });
      });
      ctx.body = { script: source, environmentVariables: variables };
    },
  );

  router.delete(path, guard({}), async (ctx) => {
    await deps.write(originOf(ctx), async ({ session, record }) => {
      const { deletedCount } = await collection.deleteOne({ _id: customizerId }, { session });
      assertThat(deletedCount === 1, () => notFound('jwt customizer', 'access-token'));
      record({ entity: 'JwtCustomizer', action: 'deleted', id: 'access-token', data: {} });
    });
    ctx.status = 204;
  });

  // Dry run: the script against a sample token and context, in a sandbox like the tokens' own but apart from it.
  router.post(
    '/configs/jwt-customizer/test',
    guard({
      body: {
        type: 'object',
        properties: { tokenType: { enum: ['access-token'] }, script, environmentVariables, token: freeFormObject, context: freeFormObject },
        required: ['script'],
        additionalProperties: false,
      },
      response: { type: 'object', additionalProperties: true },
    }),
    async (ctx) => {
      const { script: source, environmentVariables: variables = {}, token = {}, context = {} } = ctx.guard.body;
      assertCompiles(source);
      const outcome = await deps.dryRunCustomClaims(source, { token, context, environmentVariables: variables });
      if ('failure' in outcome) throw new ApiError('jwt_customizer.script_failed', `the script failed (${outcome.failure.code}): ${outcome.failure.message}`);
      ctx.body = outcome.claims;
    },
  );
}
