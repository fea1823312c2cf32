import { refusingDuplicates } from '../lib/store/entities.js';
import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId, generateSecret, sha256 } from '../lib/ids.js';
import type { PersonalAccessTokenDocument } from '../lib/store/queries/personal-access-tokens.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, idSchema, timestamp } from './schemas/common.js';

const name = { type: 'string', minLength: 1, maxLength: 256 } as const;
const fields = { userId: { type: 'string' }, name: { type: 'string' }, createdAt: timestamp, expiresAt: { type: ['number', 'null'] } } as const;
const tokenResponse = { type: 'object', properties: fields, required: ['userId', 'name', 'createdAt', 'expiresAt'] } as const;
const tokenWithValueResponse = {
  type: 'object',
  properties: { ...fields, value: { type: 'string' } },
  required: [...tokenResponse.required, 'value'],
} as const;
const nameParams = { type: 'object', properties: { userId: idSchema, name }, required: ['userId', 'name'] } as const;
const renameBody = { type: 'object', properties: { name }, required: ['name'], additionalProperties: false } as const;

const shown = ({ userId, name: tokenName, createdAt, expiresAt }: PersonalAccessTokenDocument) => ({ userId, name: tokenName, createdAt, expiresAt });
const nameTaken = (tokenName: string) => () =>
  new ApiError('user.personal_access_token_name_exists', `a personal access token named \`${tokenName}\` exists already`);

/**
 * Personal access tokens, as Logto's (routes/admin-user/personal-access-token.ts): named, per
 * user, optionally expiring, exchanged at the token endpoint for the user's tokens
 * (`urn:logto:token-type:personal_access_token`, docs/impersonation.md). Unlike Logto, a token is
 * kept only as its SHA-256 and shown once, in the answer that makes it; lists name it without it.
 */
export function personalAccessTokenRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const tokens = queries.personalAccessTokens;
  const path = '/users/:userId/personal-access-tokens';
  const record = (added: string[], removed: string[]) => ({
    entity: 'User' as const,
    action: 'personalAccessTokens.updated' as const,
    data: { added, removed },
  });

  router.get(path, guard({ params: idParams('userId'), response: { type: 'array', items: tokenResponse } }), async (ctx) => {
    const { userId } = ctx.guard.params;
    await queries.users.findByIdOrThrow(userId);
    ctx.body = (await tokens.listFor(userId)).map(shown);
  });

  router.post(
    path,
    guard({
      params: idParams('userId'),
      body: { type: 'object', properties: { name, expiresAt: { type: ['integer', 'null'], minimum: 0 } }, required: ['name'], additionalProperties: false },
      response: tokenWithValueResponse,
      status: 201,
    }),
    async (ctx) => {
      const {
        params: { userId },
        body,
      } = ctx.guard;
      await queries.users.findByIdOrThrow(userId);
      // As Logto: an expiry in the past is refused.
      assertThat(
        !body.expiresAt || body.expiresAt > Date.now(),
        new ApiError('request.invalid_input', 'body.expiresAt must be in the future', { field: 'body.expiresAt' }),
      );
      const value = `pat_${generateSecret()}`;
      const document: PersonalAccessTokenDocument = {
        _id: generateId(),
        userId,
        name: body.name,
        hash: sha256(value),
        createdAt: Date.now(),
        expiresAt: body.expiresAt ?? null,
      };
      await refusingDuplicates(
        () =>
          deps.write(originOf(ctx), async ({ record: write }) => {
            await tokens.insert(document);
            write({ ...record([document.name], []), id: userId });
          }),
        nameTaken(body.name),
      );
      ctx.body = { ...shown(document), value };
    },
  );

  async function rename(origin: ReturnType<typeof originOf>, userId: string, currentName: string, newName: string) {
    await queries.users.findByIdOrThrow(userId);
    const renamed = await refusingDuplicates(
      () =>
        deps.write(origin, async ({ record: write }) => {
          const after = await tokens.rename(userId, currentName, newName);
          assertThat(after, notFound('personal access token', currentName));
          if (newName !== currentName) write({ ...record([newName], [currentName]), id: userId });
          return after!;
        }),
      nameTaken(newName),
    );
    return shown(renamed);
  }

  // Logto's rename by the body (names in a path need encoding), and its older one by the path.
  router.patch(
    path,
    guard({
      params: idParams('userId'),
      body: { type: 'object', properties: { currentName: name, name }, required: ['currentName', 'name'], additionalProperties: false },
      response: tokenResponse,
    }),
    async (ctx) => {
      ctx.body = await rename(originOf(ctx), ctx.guard.params.userId, ctx.guard.body.currentName, ctx.guard.body.name);
    },
  );
  router.patch(`${path}/:name`, guard({ params: nameParams, body: renameBody, response: tokenResponse }), async (ctx) => {
    ctx.body = await rename(originOf(ctx), ctx.guard.params.userId, ctx.guard.params.name, ctx.guard.body.name);
  });

  async function remove(origin: ReturnType<typeof originOf>, userId: string, tokenName: string) {
    await queries.users.findByIdOrThrow(userId);
    await deps.write(origin, async ({ record: write }) => {
      assertThat(await tokens.delete(userId, tokenName), notFound('personal access token', tokenName));
      write({ ...record([], [tokenName]), id: userId });
    });
  }

  // Logto's deletion by the body, and its older one by the path.
  router.post(`${path}/delete`, guard({ params: idParams('userId'), body: renameBody, status: 204 }), async (ctx) => {
    await remove(originOf(ctx), ctx.guard.params.userId, ctx.guard.body.name);
    ctx.status = 204;
  });
  router.delete(`${path}/:name`, guard({ params: nameParams }), async (ctx) => {
    await remove(originOf(ctx), ctx.guard.params.userId, ctx.guard.params.name);
    ctx.status = 204;
  });
}
