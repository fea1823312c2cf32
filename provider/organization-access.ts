import { errors, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';

import { organizationsScope } from './organization-claims.js';

import type { OrganizationCaches, OrganizationRoleFacts } from './organization-facts.js';

/** Logto's reserved resource of organization permissions (its `ReservedResource.Organization`). */
export const organizationsResource = 'urn:logto:resource:organizations';
/** The audience of an organization token, as Logto's `buildOrganizationUrn`. */
export const organizationAudience = (organizationId: string) => `urn:logto:organization:${organizationId}`;
/** The claim that names the organization in an API resource's token asked for with `organization_id`. */
export const organizationIdClaim = 'organization_id';
/** How long an organization token lives, in seconds (Logto's, for its reserved resources). */
export const organizationTokenTtl = 3600;

/** The organization a token request names (`organization_id`), if it names one; an empty value names none, as in Logto. */
export function requestedOrganization(ctx: KoaContextWithOIDC): string | undefined {
  const value = ctx.oidc.params?.organization_id;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Whether the request is for an organization token itself (its audience the organization): `organization_id` without `resource`. */
export const wantsOrganizationToken = (ctx: KoaContextWithOIDC) =>
  ctx.oidc.route === 'token' && requestedOrganization(ctx) !== undefined && !ctx.oidc.params?.resource;

/** Logto's refusal for organization access: `access_denied`, answered 403. */
function accessDenied(description: string) {
  const error = new errors.AccessDenied(description);
  error.status = 403;
  error.statusCode = 403;
  return error;
}

export interface OrganizationAccessDeps {
  organizations: OrganizationCaches;
  /** Whether the application is a third-party one (from the applications cache). */
  isThirdParty(applicationId: string): Promise<boolean>;
  /** Whether the user let this third-party application act in this organization. */
  consented(applicationId: string, userId: string, organizationId: string): Promise<boolean>;
  /** Whether the user has a second factor (TOTP, a passkey, backup codes). */
  hasSecondFactor(userId: string): Promise<boolean>;
}

/**
 * Who may get a token for an organization, read at every issuance from the caches that the
 * recorded changes clear, so that a member removed, a role taken away or an MFA requirement set
 * holds from the next token on.
 */
export function createOrganizationAccess(deps: OrganizationAccessDeps) {
  return {
    /**
     * Logto's refusals for a user, in its order: not a member; a third-party application the user
     * has not let into this organization; an organization that requires MFA from a user without a
     * second factor. Answers the roles the user holds there.
     */
    async ofUser(organizationId: string, applicationId: string, userId: string): Promise<OrganizationRoleFacts[]> {
      const roles = await deps.organizations.userRoles(organizationId, userId);
      if (!roles) throw accessDenied('user is not a member of the organization');
      if ((await deps.isThirdParty(applicationId)) && !(await deps.consented(applicationId, userId, organizationId))) {
        throw accessDenied('organization access is not granted to the application');
      }
      const organization = await deps.organizations.organization(organizationId);
      if (organization?.isMfaRequired && !(await deps.hasSecondFactor(userId))) {
        throw accessDenied('organization requires MFA but user has no MFA configured');
      }
      return roles;
    },
    /** A machine-to-machine application's roles in the organization; refused when it is not a member. */
    async ofApplication(organizationId: string, applicationId: string): Promise<OrganizationRoleFacts[]> {
      const roles = await deps.organizations.applicationRoles(organizationId, applicationId);
      if (!roles) throw accessDenied('app has not associated with the organization');
      return roles;
    },
  };
}

export type OrganizationAccess = ReturnType<typeof createOrganizationAccess>;

/** A refresh token as oidc-provider hands it to `findAccount`. */
interface FoundRefreshToken {
  kind?: string;
  consumed?: unknown;
  scopes: Set<string>;
}

/**
 * oidc-provider's `findAccount`, checking an organization token's request once the refresh grant
 * has found the account of its refresh token: after every check of the token and its grant, and
 * before the grant spends the token, so that a refusal leaves the client its refresh token. A
 * refresh token already spent is left to the grant, which treats it as a replay. The refusals are
 * Logto's: access for the organization first (`organization-access.ts`), then `insufficient_scope`
 * for a refresh token without `urn:logto:scope:organizations`.
 */
export function checkingOrganizationAccess(findAccount: FindAccount, access: () => OrganizationAccess): FindAccount {
  return async (ctx, sub, token) => {
    const account = await findAccount(ctx, sub, token);
    const organizationId = requestedOrganization(ctx);
    const refreshToken = token as FoundRefreshToken | undefined;
    if (
      account &&
      organizationId !== undefined &&
      ctx.oidc.route === 'token' &&
      ctx.oidc.params?.grant_type === 'refresh_token' &&
      refreshToken?.kind === 'RefreshToken' &&
      !refreshToken.consumed
    ) {
      await access().ofUser(organizationId, ctx.oidc.client!.clientId, account.accountId);
      if (!refreshToken.scopes.has(organizationsScope)) throw new errors.InsufficientScope('refresh token missing required scope', organizationsScope);
    }
    return account;
  };
}
