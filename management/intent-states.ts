import type { Db } from 'mongodb';

import type { IntentDocument, IntentState } from '../lib/store/intents.js';
import { organizationToApi, userToApi, withId } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import { changesCollection } from '../lib/store/changes.js';
import { presentOrganizationRoles } from './organizations/entities.js';
import { relations } from './relations/catalog.js';

/** Each announced entity as its events show it now, or `undefined` when it does not exist. */
function entityShapes(queries: Queries): Record<string, (id: string) => Promise<unknown>> {
  const shown =
    <T>(find: (id: string) => Promise<T | null>, show: (document: T) => unknown | Promise<unknown>) =>
    async (id: string) => {
      const document = await find(id);
      return document ? show(document) : undefined;
    };
  return {
    User: shown(queries.users.findById, userToApi),
    Role: shown(queries.roles.findById, withId),
    Scope: shown(queries.scopes.findById, withId),
    Organization: shown(queries.organizations.findById, organizationToApi),
    OrganizationScope: shown(queries.organizationScopes.findById, withId),
    OrganizationRole: shown(queries.organizationRoles.findById, async (role) => (await presentOrganizationRoles(queries, [role]))[0]),
  };
}

/**
 * How the resolver of unfinished writes (`lib/store/intents.ts`) tells whether an intended change
 * was made, by looking at the entity as it is now:
 * - a create or an update: the entity exists (its event shows it as it is now);
 * - a delete: the entity is gone (its event shows it as its last recorded change did);
 * - a relation: the owner's links differ from those read before the write (the event names what
 *   was added and removed).
 * An update that did not apply still finds the entity and is announced, with its unchanged state:
 * at least once, never lost.
 */
export function intentStates(db: Db, queries: Queries): IntentState {
  const shapes = entityShapes(queries);
  const changes = db.collection<{ entity: string; id: string; action: string; data: unknown; createdAt: Date }>(changesCollection);
  const linkSets = new Map(
    relations.map((relation) => {
      const changedKey = `${relation.bodyKey[0].toUpperCase()}${relation.bodyKey.slice(1)}`;
      return [`${relation.owner.entity}.${relation.action}`, { links: relation.links(queries), changedKey }] as const;
    }),
  );

  async function lastShown({ entity, id }: IntentDocument) {
    const [last] = await changes
      .find({ entity, id, action: { $in: ['created', 'updated', 'suspension.updated'] } })
      .sort({ createdAt: -1 })
      .limit(1)
      .toArray();
    return last?.data ?? { id };
  }

  return async (intent) => {
    // A member's organization roles: the relation is owned by the organization and the member.
    if (`${intent.entity}.${intent.action}` === 'Organization.membership.roles.updated' && intent.key && intent.before) {
      const now = await queries.organizationUserRoles.rolesOf(intent.id, intent.key);
      const before = new Set(intent.before);
      const added = now.filter((id) => !before.has(id));
      const removed = intent.before.filter((id) => !now.includes(id));
      if (added.length + removed.length === 0) return undefined;
      return { data: { userId: intent.key, addedOrganizationRoleIds: added, removedOrganizationRoleIds: removed } };
    }
    const shape = shapes[intent.entity];
    const relation = linkSets.get(`${intent.entity}.${intent.action}`);
    if (relation && intent.before) {
      if ((await shape?.(intent.id)) === undefined) return undefined;
      const now = await relation.links.rightsOf(intent.id);
      const before = new Set(intent.before);
      const added = now.filter((id) => !before.has(id));
      const removed = intent.before.filter((id) => !now.includes(id));
      if (added.length + removed.length === 0) return undefined;
      return { data: { [`added${relation.changedKey}`]: added, [`removed${relation.changedKey}`]: removed } };
    }
    if (!shape) return undefined;
    const current = await shape(intent.id);
    if (intent.action === 'deleted') return current === undefined ? { data: await lastShown(intent) } : undefined;
    return current === undefined ? undefined : { data: current };
  };
}
