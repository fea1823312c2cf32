import type { Queries } from './queries/index.js';
import type { Write } from './unit-of-work.js';
import { inUnit } from './session.js';

/**
 * Gives a new user the roles marked `isDefault` (user roles only), as Logto does for every user
 * created through the Management API or by signing up, in the unit of work that creates it.
 * Answers the ids given.
 */
export async function assignDefaultRoles(queries: Queries, { intend, record }: Pick<Write, 'intend' | 'record'>, userId: string): Promise<string[]> {
  const defaults = await queries.roles.collection.find({ isDefault: true, type: 'User' }, inUnit()).toArray();
  if (defaults.length === 0) return [];
  // Announced (User.Roles.Updated): a new user held no role before.
  await intend({ entity: 'User', action: 'roles.updated', id: userId, before: [] });
  const added = await queries.links.usersRoles.add(
    userId,
    defaults.map(({ _id }) => _id),
  );
  if (added.length > 0) record({ entity: 'User', action: 'roles.updated', id: userId, data: { addedRoleIds: added, removedRoleIds: [] } });
  return added;
}
