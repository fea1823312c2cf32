import type { Change } from '../lib/store/changes.js';
import type { SubjectTokenSelection } from './subject-tokens.js';

/** Subject tokens to void after a change, and why. */
export interface Voiding {
  selection: SubjectTokenSelection;
  reason: string;
}

const ids = (value: unknown): string[] => (Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : []);

/**
 * Which subject tokens a committed unit of work made untrue. A subject token is sealed with its
 * user's role ids and trusted by the exchange without a read, so every change that would have
 * made the exchange refuse it, or grant less, voids it: the user's suspension or deletion, any
 * change to its roles (a role taken away, or a protected one given), the impersonation's
 * revocation. A role's deletion names its users itself (`management/roles.ts`).
 */
export function voidingOf(changes: Change[]): Voiding[] {
  return changes.flatMap(({ entity, action, id, data }): Voiding[] => {
    const about = (data ?? {}) as Record<string, unknown>;
    switch (`${entity}.${action}`) {
      case 'User.suspension.updated':
        return about.isSuspended === true ? [{ selection: { userIds: [id] }, reason: 'the user was suspended' }] : [];
      case 'User.deleted':
        return [{ selection: { userIds: [id] }, reason: 'the user was deleted' }];
      case 'User.roles.updated':
        return ids(about.addedRoleIds).length + ids(about.removedRoleIds).length > 0
          ? [{ selection: { userIds: [id] }, reason: "the user's roles changed" }]
          : [];
      case 'Role.users.updated': {
        const userIds = [...ids(about.addedUserIds), ...ids(about.removedUserIds)];
        return userIds.length > 0 ? [{ selection: { userIds }, reason: "the user's roles changed" }] : [];
      }
      case 'Impersonation.revoked':
        return [{ selection: { impersonationId: id }, reason: 'the impersonation was revoked' }];
      default:
        return [];
    }
  });
}
