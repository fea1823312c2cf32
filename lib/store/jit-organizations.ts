import type { Queries } from './queries/index.js';
import type { Write } from './unit-of-work.js';

/**
 * Makes a user a member of these organizations (those that still exist), with each one's
 * just-in-time roles, in the unit of work that signs the user in or creates the account:
 * just-in-time membership, as Logto's (a one-time token's `jitOrganizationIds`, an organization's
 * email domains). Each organization joined is announced (`Organization.Membership.Updated`), and the
 * roles given (`Organization.Membership.Roles.Updated`). Answers the organizations joined.
 */
export async function joinOrganizations(
  queries: Queries,
  { intend, record }: Pick<Write, 'intend' | 'record'>,
  userId: string,
  organizationIds: string[],
): Promise<string[]> {
  const live = (await queries.organizations.findByIds([...new Set(organizationIds)])).map(({ _id }) => _id);
  const joined: string[] = [];
  for (const organizationId of live) {
    await intend({
      entity: 'Organization',
      action: 'membership.updated',
      id: organizationId,
      before: () => queries.links.organizationUsers.rightsOf(organizationId),
    });
    const added = await queries.links.organizationUsers.add(organizationId, [userId]);
    if (added.length === 0) continue;
    record({ entity: 'Organization', action: 'membership.updated', id: organizationId, data: { addedUserIds: added, removedUserIds: [] } });
    joined.push(organizationId);
    const roles = (await queries.organizationRoles.findByIds(await queries.links.organizationJitRoles.rightsOf(organizationId))).filter(
      ({ type }) => type !== 'MachineToMachine',
    );
    if (roles.length === 0) continue;
    await intend({ entity: 'Organization', action: 'membership.roles.updated', id: organizationId, key: userId, before: [] });
    const given = await queries.organizationUserRoles.add(
      organizationId,
      userId,
      roles.map(({ _id }) => _id),
    );
    record({
      entity: 'Organization',
      action: 'membership.roles.updated',
      id: organizationId,
      data: { userId, addedOrganizationRoleIds: given, removedOrganizationRoleIds: [] },
    });
  }
  return joined;
}
