import type { ChangeKey } from '../hooks/catalog.js';

/** The per-process caches of the provider's world, by the name `CacheRegistry` knows them under. */
export type CacheName =
  | 'applications'
  | 'resources'
  | 'defaultResource'
  | 'signInExperience'
  | 'roles'
  | 'userRoles'
  | 'applicationRoles'
  | 'configs'
  | 'oidcKeys'
  | 'impersonationPolicy'
  | 'connectors'
  | 'hookSubscriptions'
  | 'organizations'
  | 'organizationRoles'
  | 'organizationScopes'
  | 'organizationMemberships'
  | 'organizationApplications';

/**
 * Which caches each change makes stale, keyed as changes are recorded (`Entity.action`). The write
 * path clears them, here and (through the generation) in every other process, once the change has
 * committed. A change not listed here leaves every cache as it is.
 */
export const staleCaches: Readonly<Partial<Record<ChangeKey, readonly CacheName[]>>> = {
  'Application.created': ['applications'],
  'Application.updated': ['applications'],
  'Application.deleted': ['applications', 'applicationRoles', 'organizationApplications'],
  'Application.secrets.updated': ['applications'],
  'Application.roles.updated': ['applicationRoles'],
  'Resource.created': ['resources', 'defaultResource'],
  'Resource.updated': ['resources', 'defaultResource'],
  'Resource.deleted': ['resources', 'defaultResource'],
  // A resource's permissions are cached with it.
  'Scope.created': ['resources'],
  'Scope.updated': ['resources'],
  'Scope.deleted': ['resources'],
  'Role.updated': ['roles'],
  'Role.deleted': ['roles', 'userRoles', 'applicationRoles'],
  'Role.scopes.updated': ['roles'],
  'Role.users.updated': ['userRoles'],
  'Role.applications.updated': ['applicationRoles'],
  'User.deleted': ['userRoles', 'organizationMemberships'],
  'User.roles.updated': ['userRoles'],
  // What organization tokens read (`organization-facts.ts`): who is a member with which roles, what each role gives.
  'Organization.updated': ['organizations'],
  'Organization.deleted': ['organizations', 'organizationMemberships', 'organizationApplications'],
  'Organization.membership.updated': ['organizationMemberships'],
  'Organization.membership.roles.updated': ['organizationMemberships'],
  'Organization.applications.updated': ['organizationApplications'],
  'Organization.applications.roles.updated': ['organizationApplications'],
  'OrganizationRole.updated': ['organizationRoles'],
  'OrganizationRole.deleted': ['organizationRoles', 'organizationMemberships', 'organizationApplications'],
  'OrganizationRole.scopes.updated': ['organizationRoles'],
  'OrganizationRole.resourceScopes.updated': ['organizationRoles'],
  'OrganizationScope.created': ['organizationScopes'],
  'OrganizationScope.updated': ['organizationRoles', 'organizationScopes'],
  'OrganizationScope.deleted': ['organizationRoles', 'organizationScopes'],
  'JwtCustomizer.updated': ['configs'],
  'SignInExperience.updated': ['signInExperience'],
  'JwtCustomizer.deleted': ['configs'],
  'OidcKey.rotated': ['oidcKeys'],
  'OidcKey.deleted': ['oidcKeys'],
  'ImpersonationPolicy.updated': ['impersonationPolicy'],
  // What the sign-in page offers (the composition's cache of the social and SSO connectors).
  'Connector.created': ['connectors'],
  'Connector.updated': ['connectors'],
  'Connector.deleted': ['connectors'],
  'SsoConnector.created': ['connectors'],
  'SsoConnector.updated': ['connectors'],
  'SsoConnector.deleted': ['connectors'],
  // Which opt-in events some enabled hook names (`hooks/opt-in.ts`).
  'Hook.created': ['hookSubscriptions'],
  'Hook.updated': ['hookSubscriptions'],
  'Hook.deleted': ['hookSubscriptions'],
};

/** The caches a unit of work's changes make stale, each once. */
export const cachesStaleAfter = (changes: ReadonlyArray<{ entity: string; action: string }>): CacheName[] => [
  ...new Set(changes.flatMap(({ entity, action }) => staleCaches[`${entity}.${action}` as ChangeKey] ?? [])),
];
