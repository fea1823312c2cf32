import { errors, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { exchangeOwnToken, type OwnTokenDeps } from './own-token.js';
import { targetOf } from './target.js';
import { TokenRefused, type UserToken } from './user-token.js';
import { HostAccountsUnavailable, type HostAccount } from '../../impersonation/accounts.js';
import type { ImpersonationQueries } from '../../impersonation/queries.js';
import { sha256 } from '../../lib/ids.js';
import type { SubjectTokenFacts, SubjectTokenSeal } from '../../impersonation/subject-token.js';
import type { RoleLookup } from '../../provider/role-facts.js';
import {
  accessTokenType,
  impersonationTokenType,
  jwtTokenType,
  personalAccessTokenType,
  tokenExchangeGrantType,
  type ActClaim,
} from '../../provider/token-types.js';
import { isProtected, withinCeiling, type ImpersonationPolicy } from '../../impersonation/policy.js';
import { organizationIdClaim, organizationsResource, requestedOrganization } from '../../provider/organization-access.js';

/**
 * RFC 8693 token exchange: a subject token from `POST /api/subject-tokens` becomes an access token
 * for its user (an impersonation); a user's own access token becomes one for another API resource
 * (`own-token.ts`).
 */
export const grantType = tokenExchangeGrantType;
export const parameters = [
  'scope',
  'resource',
  'audience',
  'requested_token_type',
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'organization_id',
];

/** RFC 8693 §2.1 `requested_token_type`s we answer: our access tokens are JWTs, so both describe what we issue. */
const issuableTypes = new Set([accessTokenType, jwtTokenType]);

/** The subject token types: Logto's two names for a subject token, a user's own JWT access token, a personal access token. */
const subjectTypes = [impersonationTokenType, accessTokenType, jwtTokenType, personalAccessTokenType];

export interface TokenExchangeDeps extends OwnTokenDeps {
  /** Subject tokens' records and the impersonation audit, whose record spends a token. */
  impersonation: Pick<ImpersonationQueries, 'audit'>;
  resourceServerInfo(ctx: KoaContextWithOIDC, indicator: string, client: NonNullable<KoaContextWithOIDC['oidc']['client']>): Promise<ResourceServer>;
  /** Reads a user's own access token (`user-token.ts`), as actor or as subject; throws `TokenRefused` when it is not acceptable. */
  readUserToken(token: string, role: 'actor' | 'user'): Promise<UserToken>;
  /** Reads a personal access token; throws `TokenRefused` when it is not acceptable. */
  readPersonalAccessToken(value: string): Promise<UserToken>;
  /** Roles with their permissions (from the roles cache). */
  roles: RoleLookup;
  /** The impersonation policy (from its cache). */
  policy(): Promise<ImpersonationPolicy>;
  /** Opens subject tokens (`impersonation/subject-token.ts`). */
  subjectTokens: Pick<SubjectTokenSeal, 'open'>;
  /** An embedding host's account, for a subject token issued for one (`hostAccounts`): read at every exchange. */
  findHostAccount(id: string): Promise<HostAccount | undefined>;
}

/** The claim that names the impersonation in every token minted from a subject token. */
export const impersonationIdClaim = 'impersonation_id';

function single(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new errors.InvalidTarget(`only one ${name} may be given`);
  return value as string;
}

/**
 * RFC 8693 §2.2.2: a subject or actor token that is invalid or unacceptable is `invalid_request`.
 * The client reads one public description; the reason is kept for the audit.
 */
function refused(description: string, reason = description) {
  const error = new errors.InvalidRequest(description);
  error.error_detail = reason;
  return error;
}
const subjectRefused = (reason?: string) => refused('the subject token is invalid, expired or already used', reason);
const actorRefused = (reason: unknown) =>
  refused('the actor token is not acceptable', reason instanceof TokenRefused ? reason.message : 'the actor token could not be verified');

/** The host's account lookup failed: `temporarily_unavailable` (503), which the client retries, never a refusal. */
function hostAccountsUnavailable(cause: HostAccountsUnavailable) {
  const error = new errors.TemporarilyUnavailable("the host's account lookup failed; retry later", { cause });
  Object.assign(error, { status: 503, statusCode: 503, expose: true });
  error.error_detail = cause.message;
  return error;
}

/** The host's account lookup failing is a 503 the client retries; anything else goes on as it is. */
const unavailableOr = (error: unknown) => (error instanceof HostAccountsUnavailable ? hostAccountsUnavailable(error) : error);

const reasonOf = (error: unknown) =>
  // oidc-provider keeps the public description generic; the detail is for the audit.
  (error as { error_detail?: string }).error_detail ?? (error as { error_description?: string }).error_description ?? (error as Error).message;

/** A subject token as the exchange knows it: what it was sealed with, and the hash its record is stored under. */
type Subject = SubjectTokenFacts & { _id: string };

/** What the subject token carries into every audit record of its impersonation. */
const termsOf = ({ impersonationId, actorId, reason, ticketId }: Subject) => ({
  impersonationId,
  ...(actorId !== undefined && { boundActorId: actorId }),
  ...(reason !== undefined && { reason }),
  ...(ticketId !== undefined && { ticketId }),
});

/** What one exchange learnt, for its audit record should it fail. */
interface Attempt {
  subject?: Subject;
  /** The audit record that spent the subject token, once written. */
  claimed?: string;
  /** A user's own access token was exchanged: no impersonation, nothing to audit. */
  own?: true;
  /** Why the subject token, sealed by no one here, was not taken as a user's own access token either. */
  notOwn?: string;
}

/**
 * One database round trip per exchange: the audit record that spends the subject token. The
 * token is sealed with what the exchange needs (its user, the user's role ids, its terms), and
 * whatever would make that untrue voids it first (`voidingOf`); resources, roles and their
 * permissions come from caches that changes clear.
 */
export function buildHandler(deps: TokenExchangeDeps) {
  const impersonations = deps.impersonation.audit;

  /** Every attempt is audited, success or failure with its reason, before the client hears of it. */
  return async function auditedTokenExchange(ctx: KoaContextWithOIDC) {
    const params = ctx.oidc.params as Record<string, unknown>;
    const audit = { clientId: ctx.oidc.client!.clientId, ...(typeof params.resource === 'string' && { resource: params.resource }) };
    const attempt: Attempt = {};
    try {
      await tokenExchange(ctx, audit, attempt);
    } catch (error) {
      if (attempt.own) throw error;
      if (attempt.claimed) {
        await impersonations.markFailed(attempt.claimed, reasonOf(error));
      } else {
        const { subject } = attempt;
        await impersonations.record({
          kind: 'exchange.failed',
          ...audit,
          failureReason: reasonOf(error),
          ...(subject && {
            targetUserId: subject.userId,
            subjectTokenId: subject._id,
            context: subject.context,
            issuerClientId: subject.clientId,
            ...termsOf(subject),
          }),
        });
      }
      throw error;
    }
  };

  async function tokenExchange(ctx: KoaContextWithOIDC, audit: { clientId: string; resource?: string }, attempt: Attempt) {
    const provider = ctx.oidc.provider as Provider;
    const client = ctx.oidc.client!;
    const params = ctx.oidc.params as Record<string, unknown>;

    if (!params.subject_token) throw new errors.InvalidRequest('missing required parameter subject_token');
    if (!subjectTypes.includes(params.subject_token_type as string)) {
      throw new errors.InvalidRequest(`subject_token_type must be one of ${subjectTypes.join(', ')}`);
    }
    if (params.actor_token !== undefined && params.actor_token_type !== accessTokenType) {
      throw new errors.InvalidRequest(`actor_token_type must be ${accessTokenType}`);
    }
    if (params.actor_token === undefined && params.actor_token_type !== undefined) {
      throw new errors.InvalidRequest('actor_token_type given without actor_token');
    }
    const requestedType = params.requested_token_type ?? accessTokenType;
    if (typeof requestedType !== 'string' || !issuableTypes.has(requestedType)) {
      throw new errors.InvalidRequest(`requested_token_type ${String(requestedType)} is not supported; ask for ${accessTokenType} or ${jwtTokenType}`);
    }
    // RFC 8693 §2.1: `audience` names where the token is to be used, logically; here a name is an
    // API resource's indicator, so it stands for `resource` (and must agree with one given too).
    const audience = single(params.audience, 'audience');
    const resource = single(params.resource, 'resource') ?? audience;
    // Logto's organization token (`organization_id`): for the organization itself, or with `resource` for the resource within it.
    const organizationId = requestedOrganization(ctx);
    if (!resource && organizationId === undefined) {
      throw new errors.InvalidTarget('resource (or audience) is required: the token is bound to one API resource, or to an organization (organization_id)');
    }
    if (audience !== undefined && audience !== resource) throw new errors.InvalidTarget('audience and resource name different API resources');
    const info = resource ? await deps.resourceServerInfo(ctx, resource, client) : undefined;

    const requested = typeof params.scope === 'string' ? [...new Set(params.scope.split(' ').filter(Boolean))] : [];

    // Everything that can fail without spending the subject token is checked first. The actor
    // token's signature is checked while the policy is fetched.
    const sealed = params.subject_token as string;
    if (params.subject_token_type === personalAccessTokenType) {
      attempt.own = true;
      const own = await deps.readPersonalAccessToken(sealed).catch((error: unknown) => {
        throw error instanceof TokenRefused ? subjectRefused(error.message) : unavailableOr(error);
      });
      return exchangeOwnToken(ctx, deps, own, { subjectToken: sealed, requestedType, scope: requested, resource, info, organizationId });
    }
    const facts = params.subject_token_type === jwtTokenType ? undefined : deps.subjectTokens.open(sealed);
    // Not a subject token of ours: a user's own access token, unless that is refused too.
    if (!facts && params.subject_token_type !== impersonationTokenType) {
      const own = await deps.readUserToken(sealed, 'user').catch((error: unknown) => {
        if (!(error instanceof TokenRefused)) throw unavailableOr(error);
        attempt.notOwn = error.message;
        return undefined;
      });
      if (own) {
        attempt.own = true;
        return exchangeOwnToken(ctx, deps, own, { subjectToken: sealed, requestedType, scope: requested, resource, info, organizationId });
      }
    }
    const subject: Subject | undefined = facts && { ...facts, _id: sha256(sealed) };
    attempt.subject = subject;
    const [actor, policy, hostAccount] = await Promise.allSettled([
      typeof params.actor_token === 'string'
        ? deps.readUserToken(params.actor_token, 'actor').then(({ sub, act }) => ({ sub, ...(act && { act }) }))
        : undefined,
      deps.policy(),
      subject?.hostAccount ? deps.findHostAccount(subject.userId) : undefined,
    ]);
    if (policy.status === 'rejected') throw policy.reason;
    for (const settled of [actor, hostAccount]) {
      if (settled.status === 'rejected' && settled.reason instanceof HostAccountsUnavailable) throw hostAccountsUnavailable(settled.reason);
    }
    if (hostAccount.status === 'rejected') throw hostAccount.reason;
    if (actor.status === 'rejected') throw actorRefused(actor.reason);
    const act: ActClaim | undefined = actor.value;
    // Not sealed here (forged, altered, another deployment's), or expired: one answer, as for a used one.
    if (!subject || subject.expiresAt <= Date.now()) throw subjectRefused(attempt.notOwn);
    // A host's account is asked again: nothing the host changes voids its token.
    if (subject.hostAccount) {
      const account = hostAccount.value;
      if (!account) throw subjectRefused('the user no longer exists');
      if (account.suspended) throw subjectRefused('the user is suspended');
      if (account.protected) throw subjectRefused('the impersonation policy protects this user');
    }
    const { userId, roleIds } = subject;
    // Acting as oneself is no impersonation, and would let a user launder its own token.
    if (act?.sub === userId) throw actorRefused(new TokenRefused("the actor is the subject token's own user"));
    // RFC 8693 §4.4: a token bound to an actor goes only with that actor's token; the policy may ask an actor of every exchange.
    if (subject.actorId !== undefined && act?.sub !== subject.actorId) {
      throw actorRefused(
        new TokenRefused(
          act
            ? 'the actor token names another user than the one the subject token is bound to'
            : 'the subject token is bound to an actor: its actor token is required',
        ),
      );
    }
    if (!act && policy.value.requireActorToken) throw actorRefused(new TokenRefused('the impersonation policy requires an actor token'));
    // The policy as it is now, on the roles the user holds: any change to them voided the token.
    if (isProtected(policy.value, roleIds)) throw subjectRefused('the impersonation policy protects this user');

    // Within an organization, only what the user's roles there give; refused as Logto refuses (not a member, MFA required without a factor).
    const organizationRoles = organizationId === undefined ? undefined : await deps.organizations.ofUser(organizationId, client.clientId, userId);
    const roles = await deps.roles(roleIds);
    const target = await targetOf(provider, deps, { resource, info, organizationId, roles, organizationRoles });
    // What was asked, within what the user's roles give there, and then within the policy's
    // ceiling: permissions an impersonated token never carries, whatever the user holds.
    const scope = withinCeiling(
      policy.value,
      resource ?? organizationsResource,
      requested.filter((name) => target.grantable.has(name)),
    ).join(' ');
    // No longer than the resource or organization allows, nor than the policy does.
    const resourceServer = target.server(Math.min(target.ttl ?? policy.value.maxTokenTtl, policy.value.maxTokenTtl));

    const token = new provider.AccessToken({
      accountId: userId,
      client,
      // No provider Grant stands behind this token: the spent subject token is its grant.
      grantId: subject._id,
      gty: grantType,
      ...(scope && { scope }),
      resourceServer,
    });
    // Chosen now, not at save, so that the audit record that spends the subject token names it.
    token.jti = token.generateTokenId();

    // Spend the subject token: the audit record of this exchange is the one write that decides.
    attempt.claimed = await impersonations.claimExchange({
      ...audit,
      targetUserId: userId,
      subjectTokenId: subject._id,
      context: subject.context,
      issuerClientId: subject.clientId,
      tokenId: token.jti,
      scope,
      ...termsOf(subject),
      ...(act && { actorUserId: act.sub }),
    });
    if (!attempt.claimed) throw subjectRefused(await impersonations.whyVoided(subject._id));

    deps.minted.set(token, {
      claims: {
        ...(act && { act }),
        [impersonationIdClaim]: subject.impersonationId,
        ...(resource && organizationId !== undefined && { [organizationIdClaim]: organizationId }),
      },
      // The user itself is read by custom claims only, when a script wants it.
      facts: { type: grantType, subjectTokenContext: subject.context, roles },
    });
    ctx.oidc.entity('AccessToken', token);
    const value = await token.save();

    // RFC 8693 §2.2.1; never a refresh token, never an ID token. `scope` always: RFC 6749 §5.1
    // wants it whenever it differs from the request's, and an empty one is said too.
    ctx.body = {
      access_token: value,
      issued_token_type: requestedType,
      token_type: 'Bearer',
      expires_in: token.expiration,
      scope,
    };
  }
}
