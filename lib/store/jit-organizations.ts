import type { Queries } from './queries/index.js';
import type { Write } from './unit-of-work.js';

type Recorder = Pick<Write, 'intend' | 'record'>;

/**
 * Makes a user a member of one organization and gives it these organization roles (the User
 * roles among them that still exist), in the caller's unit of work, each announced as the member
 * routes announce it (`Organization.Membership.Updated`, `Organization.Membership.Roles.Updated`).
 * With `onlyIfJoined`, a user who was a member already is given nothing. Answers whether the
 * user joined.
 */
export async function joinOrganization(
  queries: Queries,
  { intend, record }: Recorder,
  organizationId: string,
  userId: string,
  roleIds: string[],
  { onlyIfJoined = false } = {},
): Promise<boolean> {
  await intend({
    entity: 'Organization',
    action: 'membership.updated',
    id: organizationId,
    before: () => queries.links.organizationUsers.rightsOf(organizationId),
  });
  const added = await queries.links.organizationUsers.add(organizationId, [userId]);
  if (added.length > 0) record({ entity: 'Organization', action: 'membership.updated', id: organizationId, data: { addedUserIds: added, removedUserIds: [] } });
  if (added.length === 0 && onlyIfJoined) return false;
  const roles = (await queries.organizationRoles.findByIds(roleIds)).filter(({ type }) => type !== 'MachineToMachine');
  if (roles.length > 0) {
    await intend({
      entity: 'Organization',
      action: 'membership.roles.updated',
      id: organizationId,
      key: userId,
      before: () => queries.organizationUserRoles.rolesOf(organizationId, userId),
    });
    const given = await queries.organizationUserRoles.add(
      organizationId,
      userId,
      roles.map(({ _id }) => _id),
    );
    if (given.length > 0) {
      record({
        entity: 'Organization',
        action: 'membership.roles.updated',
        id: organizationId,
        data: { userId, addedOrganizationRoleIds: given, removedOrganizationRoleIds: [] },
      });
    }
  }
  return added.length > 0;
}

/**
 * Just-in-time membership, as Logto's (a one-time token's `jitOrganizationIds`, an organization's
 * email domains or SSO connectors): the user joins each of these organizations that still exists,
 * with its just-in-time roles, in the unit of work that signs the user in or creates the account.
 * A member already is given nothing. Answers the organizations joined.
 */
export async function joinOrganizations(queries: Queries, recorder: Recorder, userId: string, organizationIds: string[]): Promise<string[]> {
  const live = (await queries.organizations.findByIds([...new Set(organizationIds)])).map(({ _id }) => _id);
  const joined: string[] = [];
  for (const organizationId of live) {
    const roleIds = await queries.links.organizationJitRoles.rightsOf(organizationId);
    if (await joinOrganization(queries, recorder, organizationId, userId, roleIds, { onlyIfJoined: true })) joined.push(organizationId);
  }
  return joined;
}
