import type { Context } from 'koa';

import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import { socialClientOf } from '../social/upstream.js';
import { assertIdentitiesFree, withIdentity, withoutIdentity, type SocialIdentity } from '../lib/store/identities.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { userResponse } from './schemas/users.js';

/** A connector's target, as connectors name theirs: it is part of an identity's unique key, so nothing else. */
const target = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]*$' } as const;
const userId = { type: 'string', minLength: 1, maxLength: 64 } as const;
const identitiesResponse = { type: 'object', additionalProperties: true } as const;
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 && value.length <= 4096 ? value : undefined);

/**
 * Logto's user identity routes (admin-user/social.ts): link an upstream account by connector data
 * (the code an integrator's own authorization request obtained, exchanged here), set one as the
 * administrator states it, or unlink one. Each is a `User.updated` change naming
 * `identities.<target>`; an upstream account another user holds is 422 `user.identity_already_in_use`.
 */
export function userIdentityRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { users } = deps.queries;

  /** Changes one user's identities in a unit of work, announced; answers the user before and after. */
  const change = (ctx: Context, id: string, next: (user: UserDocument) => Partial<UserDocument>) =>
    deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'User', action: 'updated', id });
      const before = await users.findByIdOrThrow(id);
      const changes = next(before);
      await assertIdentitiesFree(users.collection, id, changes.identityKeys ?? []);
      const updated = await users.update(id, { ...changes, updatedAt: Date.now() });
      record({ entity: 'User', action: 'updated', id, data: userToApi(updated), changes: userChanges(before, updated) });
      return { before, updated };
    });

  router.post(
    '/users/:userId/identities',
    guard({
      params: { type: 'object', properties: { userId }, required: ['userId'] },
      body: {
        type: 'object',
        properties: {
          connectorId: { type: 'string', minLength: 1, maxLength: 64 },
          connectorData: { type: 'object', additionalProperties: true },
        },
        required: ['connectorId', 'connectorData'],
      },
      response: identitiesResponse,
    }),
    async (ctx) => {
      const { connectorId, connectorData } = ctx.guard.body;
      await users.findByIdOrThrow(ctx.guard.params.userId);
      const connector = await deps.connectors.get(connectorId);
      // The callback's parameters and what the integrator's authorization request sent (its PKCE verifier, nonce and state).
      const code = text(connectorData.code);
      const redirectUri = text(connectorData.redirectUri);
      assertThat(
        code && redirectUri,
        () =>
          new ApiError('guard.invalid_input', 'connectorData needs the `code` the provider returned and the `redirectUri` it was sent to', {
            field: 'body.connectorData',
          }),
      );
      assertThat(
        URL.canParse(redirectUri!),
        () => new ApiError('guard.invalid_input', 'connectorData.redirectUri is not a URL', { field: 'body.connectorData.redirectUri' }),
      );
      const parameters = Object.fromEntries(
        (['code', 'state', 'iss'] as const).flatMap((key) => (text(connectorData[key]) ? [[key, text(connectorData[key])!]] : [])),
      );
      const person = await deps.upstream.verify(socialClientOf(connector, deps.connectors), parameters, {
        redirectUri: redirectUri!,
        ...(text(connectorData.state) && { state: text(connectorData.state)! }),
        ...(text(connectorData.codeVerifier) && { codeVerifier: text(connectorData.codeVerifier)! }),
        ...(text(connectorData.nonce) && { nonce: text(connectorData.nonce)! }),
      });
      const { claimedEmail: _unverified, ...details } = person;
      const identity: SocialIdentity = { target: connector.metadata.target, id: person.id, details };
      const { updated } = await change(ctx, ctx.guard.params.userId, (user) => withIdentity(user, identity));
      ctx.body = updated.identities;
    },
  );

  // As Logto's: 201 when the user had no identity of `target`, 200 when it replaced one.
  router.put(
    '/users/:userId/identities/:target',
    guard({
      params: { type: 'object', properties: { userId, target }, required: ['userId', 'target'] },
      body: {
        type: 'object',
        properties: { userId: { type: 'string', minLength: 1, maxLength: 256 }, details: { type: 'object', additionalProperties: true } },
        required: ['userId'],
      },
      response: identitiesResponse,
    }),
    async (ctx) => {
      const { params, body } = ctx.guard;
      const identity = { target: params.target, id: body.userId, details: body.details ?? {} };
      const { before, updated } = await change(ctx, params.userId, (user) => withIdentity(user, identity));
      ctx.status = Object.hasOwn(before.identities, params.target) ? 200 : 201;
      ctx.body = updated.identities;
    },
  );

  router.delete(
    '/users/:userId/identities/:target',
    guard({
      params: { type: 'object', properties: { userId, target: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['userId', 'target'] },
      response: userResponse,
      status: 200,
    }),
    async (ctx) => {
      const { params } = ctx.guard;
      const { updated } = await change(ctx, params.userId, (user) => {
        assertThat(
          Object.hasOwn(user.identities, params.target),
          () => new ApiError('user.identity_not_exist', `the user has no identity of \`${params.target}\``),
        );
        return withoutIdentity(user, params.target);
      });
      ctx.body = userToApi(updated);
    },
  );
}
