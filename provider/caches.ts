import type { Db } from 'mongodb';
import type { AdapterPayload } from 'oidc-provider';

import { CacheRegistry } from '../lib/store/cache.js';
import type { ApplicationDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import { customizerCollection, type JwtCustomizer } from '../lib/store/queries/jwt-customizer.js';
import { signInSettingsStore } from '../sign-in/settings.js';
import { impersonationPolicyStore } from '../impersonation/policy.js';
import { toClientMetadata } from './clients.js';
import { createHeldPermissions, loadApplicationRoleIds, loadResource, loadUserRoleIds, permissionNames } from './resource-servers.js';
import { createRoleLookup, loadRoleFacts } from './role-facts.js';
import { createOrganizationCaches } from './organization-facts.js';

/**
 * What the provider reads on every token, kept per process: applications as clients, API
 * resources, roles and who holds them, the JWT customizer. Each cache is cleared by the changes
 * that make it stale (`stale-caches.ts`), here after a commit and in other processes within
 * `refreshMs`.
 */
export async function createProviderCaches(
  db: Db,
  queries: Queries,
  { refreshMs, managementApiIndicator }: { refreshMs: number; managementApiIndicator: string },
) {
  const registry = new CacheRegistry(db, refreshMs);
  const clients = registry.create<AdapterPayload>('applications', async (id) => {
    const application = await queries.applications.findById(id);
    if (!application) return undefined;
    return toClientMetadata(application, await queries.applications.secrets.listFor(id)) as AdapterPayload;
  });
  // The same applications as the documents they are (first party or not), cleared with the clients.
  const applications = registry.create<ApplicationDocument>('applications', async (id) => (await queries.applications.findById(id)) ?? undefined);
  const resources = registry.create('resources', loadResource(queries));
  // The default API resource's indicator, one entry: cleared with every change of a resource.
  const defaultResource = registry.create('defaultResource', async () => (await queries.resources.findDefault())?.indicator, { keepMisses: true });
  // An application's roles, and each role's permissions: a change to either clears only its cache.
  const applicationRoleIds = registry.create('applicationRoles', loadApplicationRoleIds(queries));
  const userRoleIds = registry.create('userRoles', loadUserRoleIds(queries));
  const roles = createRoleLookup(registry.create('roles', loadRoleFacts(queries)));
  const held = createHeldPermissions({ applicationRoleIds, userRoleIds, roles });
  /** The Management API scopes an application holds now, or undefined once it is deleted. */
  const heldManagementScopes = async (clientId: string) => {
    if (!(await clients.get(clientId))) return undefined;
    const managementApi = await resources.get(managementApiIndicator);
    return new Set(managementApi ? permissionNames(managementApi.scopes, await held.ofApplication(clientId)) : []);
  };
  await registry.start();
  const customizer = registry.create<JwtCustomizer>(
    'configs',
    async (id) => (await customizerCollection(db).findOne({ _id: id as JwtCustomizer['_id'] })) ?? undefined,
    { keepMisses: true },
  );
  // The sign-in experience settings (one entry): read by every sign-up and sign-in step.
  const signInSettings = registry.create('signInExperience', () => signInSettingsStore(db).load());
  // The impersonation policy (one entry): read by every token exchange.
  const impersonationPolicy = registry.create('impersonationPolicy', () => impersonationPolicyStore(db).load());
  // Memberships, organization roles and organizations, for organization tokens.
  const organizations = createOrganizationCaches(registry, queries);
  return {
    registry,
    clients,
    applications,
    resources,
    defaultResource,
    roles,
    userRoleIds,
    held,
    heldManagementScopes,
    customizer,
    signInSettings,
    impersonationPolicy,
    organizations,
  };
}
