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

/**
 * The organization a grant is bound to by an authorization request that named it (`organization_id`
 * at authorization, beyond Logto): kept in the grant itself, as a resource entry of the
 * organization's audience, so that every token endpoint request reads it with the grant it loads anyway.
 */
const boundScope = 'organization';
type GrantResources = { resources?: Record<string, string> | undefined };
export const boundOrganization = (grant: GrantResources | undefined) =>
  Object.keys(grant?.resources ?? {})
    .find((resource) => resource.startsWith(organizationAudience('')))
    ?.slice(organizationAudience('').length);

/** Binds the grant to `organizationId`, or to none; answers whether it changed (and so is to be saved). */
export function bindGrant(grant: GrantResources & { addResourceScope(resource: string, scope: string): void }, organizationId: string | undefined): boolean {
  const bound = boundOrganization(grant);
  if (bound === organizationId) return false;
  if (bound !== undefined) delete grant.resources![organizationAudience(bound)];
  if (organizationId !== undefined) grant.addResourceScope(organizationAudience(organizationId), boundScope);
  return true;
}

/** The organization a token request is for: the one it names, or at the token endpoint the one its grant is bound to. */
export function organizationOf(ctx: KoaContextWithOIDC): string | undefined {
  if (ctx.oidc.route !== 'token') return undefined;
  return requestedOrganization(ctx) ?? boundOrganization(ctx.oidc.entities.Grant as GrantResources | undefined);
}

/** Whether the request is for an organization token itself (its audience the organization): `organization_id` without `resource`. */
export const wantsOrganizationToken = (ctx: KoaContextWithOIDC) =>
  ctx.oidc.route === 'token' && requestedOrganization(ctx) !== undefined && !ctx.oidc.params?.resource;

/** Why organization access was refused, for the pages to say it in the person's language. */
export type OrganizationRefusalReason = 'membership' | 'consent' | 'mfa' | 'application';

/** Logto's refusal for organization access: `access_denied`, answered 403, with why. */
export class OrganizationRefusal extends errors.AccessDenied {
  constructor(
    description: string,
    readonly reason: OrganizationRefusalReason,
  ) {
    super(description);
    this.status = 403;
    this.statusCode = 403;
  }
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
      if (!roles) throw new OrganizationRefusal('user is not a member of the organization', 'membership');
      if ((await deps.isThirdParty(applicationId)) && !(await deps.consented(applicationId, userId, organizationId))) {
        throw new OrganizationRefusal('organization access is not granted to the application', 'consent');
      }
      const organization = await deps.organizations.organization(organizationId);
      if (organization?.isMfaRequired && !(await deps.hasSecondFactor(userId))) {
        throw new OrganizationRefusal('organization requires MFA but user has no MFA configured', 'mfa');
      }
      return roles;
    },
    /** The roles a user holds in the organization now (none once no longer a member), without the checks: for a request already checked. */
    userRoles: async (organizationId: string, userId: string) => (await deps.organizations.userRoles(organizationId, userId)) ?? [],
    /** A machine-to-machine application's roles in the organization; refused when it is not a member. */
    async ofApplication(organizationId: string, applicationId: string): Promise<OrganizationRoleFacts[]> {
      const roles = await deps.organizations.applicationRoles(organizationId, applicationId);
      if (!roles) throw new OrganizationRefusal('app has not associated with the organization', 'application');
      return roles;
    },
  };
}

export type OrganizationAccess = ReturnType<typeof createOrganizationAccess>;

/** A refresh token or code as oidc-provider hands it to `findAccount`. */
interface FoundToken {
  kind?: string;
  consumed?: unknown;
  scopes: Set<string>;
}

/**
 * oidc-provider's `findAccount`, checking a token request for an organization (one that names it,
 * or whose grant is bound to it) once the refresh or code grant has found the account: after every
 * check of the token and its grant, and before a refresh token is spent, so that a refusal leaves
 * the client its refresh token. A refresh token already spent is left to the grant, which treats it
 * as a replay. The refusals are Logto's: access for the organization first, then
 * `insufficient_scope` for a refresh token without `urn:logto:scope:organizations` (asked by name only).
 */
export function checkingOrganizationAccess(findAccount: FindAccount, access: () => OrganizationAccess): FindAccount {
  return async (ctx, sub, token) => {
    const account = await findAccount(ctx, sub, token);
    const grantType = ctx.oidc.params?.grant_type;
    const source = token as FoundToken | undefined;
    const organizationId = organizationOf(ctx);
    if (!account || organizationId === undefined || (grantType !== 'refresh_token' && grantType !== 'authorization_code')) return account;
    // A refresh token already spent is the grant's to treat as a replay; a code is spent before its account is found.
    if (source?.kind === 'RefreshToken' && source.consumed) return account;
    await access().ofUser(organizationId, ctx.oidc.client!.clientId, account.accountId);
    if (requestedOrganization(ctx) !== undefined && !source?.scopes.has(organizationsScope)) {
      throw new errors.InsufficientScope('refresh token missing required scope', organizationsScope);
    }
    return account;
  };
}
