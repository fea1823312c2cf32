import type { Db } from 'mongodb';

/**
 * Collections whose contents the Management API owns (not the provider's sessions and tokens, not caches; not
 * webhook deliveries, which the worker makes from events and changes on its own).
 */
export const dataCollections = [
  'applications',
  'application_secrets',
  'personal_access_tokens',
  'resources',
  'scopes',
  'roles',
  'users',
  'organizations',
  'organization_roles',
  'organization_scopes',
  'organization_user_roles',
  'users_roles',
  'applications_roles',
  'roles_scopes',
  'organization_users',
  'organization_role_scopes',
  'organization_role_resource_scopes',
  'changes',
  'hooks',
  'hook_events',
];

/**
 * Fields the delivery worker writes on its own: an event's numbers and whether it awaits its
 * deliveries, and a hook's health (`failingSince`, `warnedAt`: a delivery that timed out on a
 * loaded machine sets it, the next one that succeeds clears it, whatever request is under test).
 */
const workerFields = new Set(['fanOutDue', 'sequenceDue', 'unitIndex', 'sequence', 'version', 'failingSince', 'warnedAt']);

/** Every document of the data collections, to compare before and after a request that must write nothing. */
export async function snapshot(db: Db): Promise<string> {
  // Events of the service's own (`source: system`: a hook's health, the impersonation ledger's) are written by background workers, not by requests.
  const parts = await Promise.all(
    dataCollections.map(
      async (name) =>
        [
          name,
          await db
            .collection(name)
            .find(name === 'hook_events' ? { source: { $ne: 'system' } } : {})
            .sort({ _id: 1 })
            .toArray(),
        ] as const,
    ),
  );
  return JSON.stringify(parts, (key, value: unknown) => (workerFields.has(key) ? undefined : value));
}
