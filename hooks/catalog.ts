/**
 * The events a hook can subscribe to, named as Logto names them so that receivers written for
 * it keep working.
 */

/**
 * The one table of interactions and their events: each interaction event, and the kind of
 * interaction it belongs to (Logto's `interactionEvent`), which announces it when it ends with a
 * sign-in.
 */
export const interactionEvents = {
  PostRegister: 'Register',
  PostSignIn: 'SignIn',
  PostResetPassword: 'ForgotPassword',
} as const;

export type InteractionEvent = keyof typeof interactionEvents;
export type InteractionKind = (typeof interactionEvents)[InteractionEvent];

/** The kinds, in the order Logto's Experience API lists them. */
export const interactionKinds = ['SignIn', 'Register', 'ForgotPassword'] as const satisfies readonly InteractionKind[];
// Every kind is listed: a kind added to the table and not here fails to compile.
const allKindsListed: Exclude<InteractionKind, (typeof interactionKinds)[number]> extends never ? true : never = true;
void allKindsListed;

/** The table read the other way: the event each kind announces. */
export const announcedEvent = Object.fromEntries(Object.entries(interactionEvents).map(([event, kind]) => [kind, event])) as {
  readonly [E in InteractionEvent as (typeof interactionEvents)[E]]: E;
};

import type { ChangeNameOf } from '../lib/store/changes.js';

/**
 * Every change the service records, as `Entity.action`: the vocabulary of the write path. The
 * Management API and the sign-in experience record only these (their writers are typed with
 * it), and the tables keyed by change (the events below, the caches a change makes stale) can
 * name no other.
 */
export const recordedChanges = [
  'Application.created',
  'Application.updated',
  'Application.deleted',
  'Application.secrets.updated',
  'Application.roles.updated',
  'Application.consentOrganizations.updated',
  'Resource.created',
  'Resource.updated',
  'Resource.deleted',
  'Scope.created',
  'Scope.updated',
  'Scope.deleted',
  'Role.created',
  'Role.updated',
  'Role.deleted',
  'Role.scopes.updated',
  'Role.users.updated',
  'Role.applications.updated',
  'User.created',
  'User.updated',
  'User.deleted',
  'User.suspension.updated',
  'User.roles.updated',
  'User.personalAccessTokens.updated',
  'Organization.created',
  'Organization.updated',
  'Organization.deleted',
  'Organization.membership.updated',
  'Organization.membership.roles.updated',
  'Organization.applications.updated',
  'Organization.applications.roles.updated',
  'Organization.jit.roles.updated',
  'Organization.jit.emailDomains.updated',
  'Organization.jit.ssoConnectors.updated',
  'OrganizationRole.created',
  'OrganizationRole.updated',
  'OrganizationRole.deleted',
  'OrganizationRole.scopes.updated',
  'OrganizationRole.resourceScopes.updated',
  'OneTimeToken.created',
  'OneTimeToken.updated',
  'OneTimeToken.deleted',
  'OrganizationInvitation.created',
  'OrganizationInvitation.updated',
  'OrganizationInvitation.deleted',
  'OrganizationScope.created',
  'OrganizationScope.updated',
  'OrganizationScope.deleted',
  'Hook.created',
  'Hook.updated',
  'Hook.deleted',
  'Hook.signing_key.rotated',
  'Hook.signing_key_pair.rotated',
  'Impersonation.subject_token.issued',
  'Impersonation.revoked',
  'ImpersonationPolicy.updated',
  'JwtCustomizer.updated',
  'SignInExperience.updated',
  'JwtCustomizer.deleted',
  'OidcKey.rotated',
  'OidcKey.deleted',
  'Connector.created',
  'Connector.updated',
  'Connector.deleted',
  'SsoConnector.created',
  'SsoConnector.updated',
  'SsoConnector.deleted',
] as const;
export type ChangeKey = (typeof recordedChanges)[number];

const recorded = new Set<string>(recordedChanges);
/**
 * An entity and action named at run time (a table of relations), checked against the vocabulary
 * once, when the table is read at start: a misspelt one stops the server from starting.
 */
export function recordedChange(entity: string, action: string): ChangeNameOf<ChangeKey> {
  if (!recorded.has(`${entity}.${action}`)) throw new TypeError(`\`${entity}.${action}\` is not a recorded change (hooks/catalog.ts)`);
  return { entity, action } as ChangeNameOf<ChangeKey>;
}

interface DataEventRule {
  event: string;
  /** For a change of a relation: the top-level key under which the payload names the owner (`roleId`), as Logto's. */
  ownerKey?: string;
  /**
   * What a relation's event carries besides its owner, as Logto's: the owner's permissions as they
   * now are in `data` (`scopes`: a role's; `organizationScopes`: an organization role's), or the
   * ids added and removed as top-level fields, each omitted when empty (`delta`); a user, exactly
   * Logto's user fields (`user`).
   */
  carries?: 'scopes' | 'organizationScopes' | 'delta' | 'user' | 'memberRoles';
  /** For `delta`: what the ids added and removed are of (`addedUserIds`, `removedUserIds`); users by default. */
  deltaOf?: 'UserIds' | 'RoleIds' | 'ApplicationIds';
}

/**
 * What each recorded change announces, keyed by `<entity>.<action>` as the write path records
 * it. Keyed by change rather than by route so that every write that makes a change, through any
 * route or flow (a sign-up creates a user, a password reset updates one), announces it; a
 * change without a row here (applications, resources, role assignments) announces nothing.
 */
const changeEventTable = {
  'User.created': { event: 'User.Created', carries: 'user' },
  'User.deleted': { event: 'User.Deleted', carries: 'user' },
  'User.updated': { event: 'User.Data.Updated', carries: 'user' },
  'User.suspension.updated': { event: 'User.SuspensionStatus.Updated', carries: 'user' },
  // Beyond Logto (its users ask for it, logto#6750): a user's roles given or taken through `/api/users/:id/roles` or at sign-up.
  'User.roles.updated': { event: 'User.Roles.Updated', ownerKey: 'userId', carries: 'delta', deltaOf: 'RoleIds' },
  'Role.created': { event: 'Role.Created' },
  'Role.deleted': { event: 'Role.Deleted' },
  'Role.updated': { event: 'Role.Data.Updated' },
  'Role.scopes.updated': { event: 'Role.Scopes.Updated', ownerKey: 'roleId', carries: 'scopes' },
  'Scope.created': { event: 'Scope.Created' },
  'Scope.deleted': { event: 'Scope.Deleted' },
  'Scope.updated': { event: 'Scope.Data.Updated' },
  'Organization.created': { event: 'Organization.Created' },
  'Organization.deleted': { event: 'Organization.Deleted' },
  'Organization.updated': { event: 'Organization.Data.Updated' },
  'Organization.membership.updated': { event: 'Organization.Membership.Updated', ownerKey: 'organizationId', carries: 'delta' },
  // Logto announces machine-to-machine members with the same event (`addedApplicationIds`, `removedApplicationIds`).
  'Organization.applications.updated': { event: 'Organization.Membership.Updated', ownerKey: 'organizationId', carries: 'delta', deltaOf: 'ApplicationIds' },
  // Beyond Logto: a member's organization roles given or taken (`userId`, `addedRoleIds`, `removedRoleIds`).
  'Organization.membership.roles.updated': { event: 'Organization.Membership.Roles.Updated', ownerKey: 'organizationId', carries: 'memberRoles' },
  'OrganizationRole.created': { event: 'OrganizationRole.Created' },
  'OrganizationRole.deleted': { event: 'OrganizationRole.Deleted' },
  'OrganizationRole.updated': { event: 'OrganizationRole.Data.Updated' },
  'OrganizationRole.scopes.updated': { event: 'OrganizationRole.Scopes.Updated', ownerKey: 'organizationRoleId', carries: 'organizationScopes' },
  // Logto announces a change of an organization role's API permissions with the same event.
  'OrganizationRole.resourceScopes.updated': { event: 'OrganizationRole.Scopes.Updated', ownerKey: 'organizationRoleId', carries: 'organizationScopes' },
  'OrganizationScope.created': { event: 'OrganizationScope.Created' },
  'OrganizationScope.deleted': { event: 'OrganizationScope.Deleted' },
  'OrganizationScope.updated': { event: 'OrganizationScope.Data.Updated' },
} as const satisfies Partial<Record<ChangeKey, DataEventRule>>;

export const changeEvents: Partial<Record<ChangeKey, DataEventRule>> = changeEventTable;

/** The data events' names, as a type. */
export type DataEventName = (typeof changeEventTable)[keyof typeof changeEventTable]['event'];

export const dataEvents = [...new Set(Object.values(changeEventTable).map(({ event }) => event))] as DataEventName[];

/** Every event, in the order the API documents them. */
/**
 * Logto's exception events: an identifier locked after repeated failures (`{type, value}`, the value as
 * typed), and a code send refused by a limit (`{action, recipient}`).
 */
export const exceptionEvents = ['Identifier.Lockout', 'Message.RateLimited'] as const;
export type ExceptionEvent = (typeof exceptionEvents)[number];

/**
 * Ours: the webhooks' own state, for other hooks to watch. A hook failing for half the time that
 * disables it (`Hook.Disabling`), disabled (`Hook.Disabled`), and a delivery given up after its
 * attempts (`Hook.DeliveryExhausted`). A hook is never sent its own.
 */
export const operationalEvents = ['Hook.Disabling', 'Hook.Disabled', 'Hook.DeliveryExhausted'] as const;
export type OperationalEvent = (typeof operationalEvents)[number];

/**
 * Ours: impersonation, from its audit (`impersonation/ledger.ts`): a subject token issued
 * (`Requested`), exchanged (`Started`), an exchange refused (`Refused`), an impersonation ended by
 * the kill switch (`Revoked`). Never a token, a hash of one, or the subject token's context.
 */
export const impersonationEvents = ['Impersonation.Requested', 'Impersonation.Started', 'Impersonation.Refused', 'Impersonation.Revoked'] as const;
export type ImpersonationAnnouncement = (typeof impersonationEvents)[number];

/**
 * Ours: the provider's lifecycle, from oidc-provider's own events (`hooks/lifecycle-events.ts`)
 * and from the service's revocations of a user's sessions and grants. Never a token or a code;
 * a session's, grant's or token's id is fine. Each is about a session or a grant (its entity).
 */
export const lifecycleEvents = [
  'PostSignOut',
  'Session.Revoked',
  'Grant.Created',
  'Grant.Revoked',
  'RefreshToken.ReuseDetected',
  'AuthorizationCode.ReplayDetected',
  'BackchannelLogout.Failed',
] as const;
export type LifecycleEvent = (typeof lifecycleEvents)[number];

/** Why the service ended every session and grant of a user (`Session.Revoked`, `Grant.Revoked`). */
export const accountRevocationCauses = ['suspension', 'deletion', 'password_reset'] as const;
export type AccountRevocationCause = (typeof accountRevocationCauses)[number];

/** Why the service ended a session (`Session.Revoked`): with the user's account, or ended on its own by an administrator or the user. */
export const sessionRevocationCauses = [...accountRevocationCauses, 'administrator', 'user'] as const;
export type SessionRevocationCause = (typeof sessionRevocationCauses)[number];

/** Why a grant ended: one of the provider's own reasons, or the service ending a user's grants. */
export const grantRevocationCauses = [
  'revocation_endpoint',
  'end_session',
  'refresh_token_reuse',
  'code_replay',
  'provider',
  ...sessionRevocationCauses,
] as const;
export type GrantRevocationCause = (typeof grantRevocationCauses)[number];

/**
 * Ours, opt-in and high volume: recorded only while an enabled hook names them
 * (`hooks/opt-in.ts`), with a retention of their own. Tokens issued, refused and revoked,
 * authorizations and sign-ins refused.
 */
export const optInEvents = ['Token.Issued', 'Token.Failed', 'Token.Revoked', 'Authorization.Failed', 'SignIn.Failed'] as const;
export type OptInEvent = (typeof optInEvents)[number];

/** Every event's name, as a type: the receiver kit's `WebhookEvent` names them (`receiver/index.ts`). */
export type HookEventName = InteractionEvent | DataEventName | ExceptionEvent | OperationalEvent | ImpersonationAnnouncement | LifecycleEvent | OptInEvent;

export const hookEvents: HookEventName[] = [
  ...(Object.keys(interactionEvents) as InteractionEvent[]),
  ...dataEvents,
  ...exceptionEvents,
  ...operationalEvents,
  ...impersonationEvents,
  ...lifecycleEvents,
  ...optInEvents,
];
