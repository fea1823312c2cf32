import { byName, organizationToApi } from '../../lib/store/models.js';
import type { Queries } from '../../lib/store/queries/index.js';

/** Where each kind of member's memberships and roles are kept. */
const kinds = {
  user: (queries: Queries) => ({ links: queries.links.organizationUsers, roles: queries.organizationUserRoles }),
  application: (queries: Queries) => ({ links: queries.links.organizationApplications, roles: queries.organizationApplicationRoles }),
};

/**
 * The organizations a member (a user, or a machine-to-machine application) belongs to, as Logto's
 * `organizationWithOrganizationRolesGuard`: each with the member's organization roles there, sorted by
 * name. Two reads for the memberships and roles, one for the organizations, one for the roles' names.
 */
export async function organizationsOfMember(queries: Queries, kind: keyof typeof kinds, memberId: string) {
  const { links, roles } = kinds[kind](queries);
  const [organizations, held] = await Promise.all([links.leftsOf(memberId).then((ids) => queries.organizations.findByIds(ids)), roles.heldBy(memberId)]);
  const names = new Map((await queries.organizationRoles.findByIds([...new Set([...held.values()].flat())])).map((role) => [role._id, role.name]));
  return organizations.map((organization) => ({
    ...organizationToApi(organization),
    organizationRoles: (held.get(organization._id) ?? []).flatMap((id) => (names.has(id) ? [{ id, name: names.get(id)! }] : [])).sort(byName),
  }));
}
