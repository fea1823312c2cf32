import * as client from 'openid-client';

import { ApiError, assertThat } from '../lib/errors.js';
import { exactObject, guard } from '../lib/http/guard.js';
import { canSignIn } from '../sign-in/profile.js';
import { withIdentity, withoutIdentity } from '../lib/store/identities.js';
import { socialClientOf } from '../social/upstream.js';
import { accountPrefix, recordId, verificationsPrefix, type AccountApiDeps, type AccountKit, type AccountRouter } from './context.js';

const scopes = ['identities'];
const notVerified = () => new ApiError('verification_record.not_found', 'no verified social sign-in of this account and application has that id');

/**
 * Logto's Account API for social identities (routes/account/identities.ts and the social
 * verification): a sign-in with a connector made for the signed-in user (PKCE, `state` and `nonce`
 * kept here), then linked behind a step-up; an identity unlinked behind a step-up, unless it is the
 * account's last way to sign in (422 `user.last_sign_in_method_required`). The `identities` scope.
 */
export function accountIdentityRoutes(
  router: AccountRouter,
  kit: AccountKit,
  deps: Pick<AccountApiDeps, 'queries' | 'connectors' | 'upstream' | 'signInSettings'> & { origin: string },
) {
  const { records } = kit;
  const { connectors, upstream } = deps;

  /** Where the provider may send the code: our pages, or an address of the calling application's redirect URIs. */
  const assertOwnRedirect = async (clientId: string, redirectUri: string) => {
    const application = await deps.queries.applications.findById(clientId);
    const origins = new Set([deps.origin, ...(application?.oidcClientMetadata.redirectUris ?? []).map((uri) => new URL(uri).origin)]);
    assertThat(
      URL.canParse(redirectUri) && origins.has(new URL(redirectUri).origin),
      () =>
        new ApiError('guard.invalid_input', 'redirectUri must be on this service or on one of the application’s redirect URIs', { field: 'body.redirectUri' }),
    );
  };

  router.post(
    `${verificationsPrefix}/social`,
    guard({
      scopes,
      body: exactObject({
        connectorId: { type: 'string', minLength: 1, maxLength: 64 },
        redirectUri: { type: 'string', minLength: 1, maxLength: 2048 },
        state: { type: 'string', minLength: 1, maxLength: 512 },
      }),
      status: 201,
      response: {
        type: 'object',
        properties: { verificationRecordId: { type: 'string' }, authorizationUri: { type: 'string' }, expiresAt: { type: 'string' } },
        required: ['verificationRecordId', 'authorizationUri', 'expiresAt'],
      },
    }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const { connectorId, redirectUri, state } = ctx.guard.body;
      await assertOwnRedirect(auth.clientId, redirectUri);
      const connector = await connectors.get(connectorId);
      const social = {
        connectorId,
        target: connector.metadata.target,
        redirectUri,
        state,
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
      };
      const authorizationUri = await upstream.authorizationUri(socialClientOf(connector, connectors), social);
      const record = await records.create(user._id, auth.clientId, 'social', { social });
      ctx.status = 201;
      ctx.body = { verificationRecordId: record.id, authorizationUri, expiresAt: record.expiresAt.toISOString() };
    },
  );

  router.post(
    `${verificationsPrefix}/social/verify`,
    guard({
      scopes,
      body: exactObject({ verificationRecordId: recordId, connectorData: { type: 'object', additionalProperties: true } }),
      response: { type: 'object', properties: { verificationRecordId: { type: 'string' } }, required: ['verificationRecordId'] },
    }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const { verificationRecordId, connectorData } = ctx.guard.body;
      const social = await records.social(verificationRecordId, user._id, auth.clientId);
      assertThat(social, notVerified);
      const done = () => new ApiError('connector.general', 'this sign-in with the provider was completed already');
      assertThat(!social!.upstream, done);
      const parameters = Object.fromEntries(
        Object.entries(connectorData).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string' && ['code', 'state', 'iss', 'error'].includes(entry[0]),
        ),
      );
      const { claimedEmail: _unverified, ...person } = await upstream.verify(
        socialClientOf(await connectors.get(social!.connectorId), connectors),
        parameters,
        social!,
      );
      assertThat(await records.completeSocial(verificationRecordId, person), done);
      ctx.body = { verificationRecordId };
    },
  );

  // Logto's `POST /api/my-account/identities`: a step-up, and the verified social sign-in to link. The account
  // must not have an identity of that connector already, and no other account may hold this one (422 either way).
  router.post(
    `${accountPrefix}/identities`,
    guard({ scopes, body: exactObject({ newIdentifierVerificationRecordId: recordId }), status: 204 }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const stepUp = kit.stepUpOf(ctx);
      const proof = ctx.guard.body.newIdentifierVerificationRecordId;
      const pending = await records.social(proof, user._id, auth.clientId);
      assertThat(pending?.upstream, notVerified);
      await kit.update(
        ctx,
        (current) => {
          assertThat(
            !Object.hasOwn(current.identities, pending!.target),
            () => new ApiError('user.identity_already_in_use', `the account has an identity of \`${pending!.target}\` already`),
          );
          return withIdentity(current, { target: pending!.target, id: pending!.upstream!.id, details: pending!.upstream! });
        },
        async () => {
          await kit.spendStepUp(ctx.state, stepUp);
          assertThat(await records.spendSocial(proof, user._id, auth.clientId), notVerified);
        },
      );
      ctx.status = 204;
    },
  );

  router.delete(
    `${accountPrefix}/identities/:target`,
    guard({ scopes, params: { type: 'object', properties: { target: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['target'] }, status: 204 }),
    async (ctx) => {
      const stepUp = kit.stepUpOf(ctx);
      const { target } = ctx.guard.params;
      const settings = await deps.signInSettings();
      await kit.update(
        ctx,
        (current) => {
          assertThat(Object.hasOwn(current.identities, target), () => new ApiError('user.identity_not_exist', `the account has no identity of \`${target}\``));
          const after = withoutIdentity(current, target);
          assertThat(
            canSignIn({ ...current, ...after }, settings),
            () => new ApiError('user.last_sign_in_method_required', 'this is the account’s last way to sign in: add another before removing it'),
          );
          return after;
        },
        () => kit.spendStepUp(ctx.state, stepUp),
      );
      ctx.status = 204;
    },
  );
}
