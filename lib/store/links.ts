import type { Db, IndexDescription } from 'mongodb';
import { inUnit } from './session.js';

/**
 * Many-to-many relations, each a collection of `{_id, <left>, <right>}` documents. The `_id`
 * is made of both ids, so adding a link twice is one document (a unique key, race-free).
 */
export const linkTables = {
  users_roles: ['userId', 'roleId'],
  applications_roles: ['applicationId', 'roleId'],
  roles_scopes: ['roleId', 'scopeId'],
  organization_users: ['organizationId', 'userId'],
  organization_applications: ['organizationId', 'applicationId'],
  organization_jit_roles: ['organizationId', 'organizationRoleId'],
  // An organization's just-in-time email domains (lower-cased IDNA ASCII): a domain may lead to several organizations.
  organization_jit_email_domains: ['organizationId', 'emailDomain'],
  organization_jit_sso_connectors: ['organizationId', 'ssoConnectorId'],
  organization_role_scopes: ['organizationRoleId', 'organizationScopeId'],
  organization_role_resource_scopes: ['organizationRoleId', 'scopeId'],
} as const;

export type LinkTable = keyof typeof linkTables;

export function linkIndexes(table: LinkTable): IndexDescription[] {
  const [left, right] = linkTables[table];
  return [
    { key: { [left]: 1, [right]: 1 }, name: `${left}_${right}`, unique: true },
    { key: { [right]: 1 }, name: right },
  ];
}

type LinkDocument = { _id: string } & Record<string, string>;

export interface Links {
  /** Links `left` to each of `rights`; returns the ids that were not linked before. */
  add(left: string, rights: string[]): Promise<string[]>;
  /** Makes `rights` exactly the set linked to `left`; returns what was added and removed. */
  replace(left: string, rights: string[]): Promise<{ added: string[]; removed: string[] }>;
  /** Unlinks one pair; false when it was not linked. */
  remove(left: string, right: string): Promise<boolean>;
  rightsOf(left: string): Promise<string[]>;
  rightsOfMany(lefts: string[]): Promise<string[]>;
  /** The rights of each of `lefts`, in one read (an empty list for one without links). */
  rightsByLeft(lefts: string[]): Promise<Map<string, string[]>>;
  /** How many are linked to `left`, and the first `limit` of them: one count and one short read, whatever their number. */
  sampleOf(left: string, limit: number): Promise<{ count: number; rights: string[] }>;
  leftsOf(right: string): Promise<string[]>;
  has(left: string, right: string): Promise<boolean>;
  removeAllOfLeft(left: string): Promise<void>;
  removeAllOfRight(right: string): Promise<void>;
  removeAllOfRights(rights: string[]): Promise<void>;
}

/**
 * The relation seen from its left side (`users_roles`: a user's roles), or with `reversed` from
 * its right side (a role's users); documents and their ids are the same either way.
 */
export function createLinks(db: Db, table: LinkTable, { reversed = false } = {}): Links {
  const [first, second] = linkTables[table];
  const [leftField, rightField] = reversed ? [second, first] : [first, second];
  const collection = db.collection<LinkDocument>(table);
  const idOf = (left: string, right: string) => (reversed ? `${right}:${left}` : `${left}:${right}`);

  const links: Links = {
    async add(left, rights) {
      const unique = [...new Set(rights)];
      if (unique.length === 0) return [];
      const existing = new Set(await links.rightsOf(left));
      const candidates = unique.filter((right) => !existing.has(right));
      if (candidates.length === 0) return [];
      const result = await collection.bulkWrite(
        candidates.map((right) => ({
          updateOne: {
            filter: { _id: idOf(left, right) },
            update: { $setOnInsert: { [leftField]: left, [rightField]: right } },
            upsert: true,
          },
        })),
        inUnit(),
      );
      // What this call inserted, not what it found missing: a link another writer made meanwhile is not ours to announce.
      return Object.keys(result.upsertedIds).map((index) => candidates[Number(index)]);
    },

    async replace(left, rights) {
      const wanted = new Set(rights);
      const existing = await links.rightsOf(left);
      const removed = existing.filter((right) => !wanted.has(right));
      if (removed.length > 0) await collection.deleteMany({ [leftField]: left, [rightField]: { $in: removed } }, inUnit());
      const added = await links.add(left, [...wanted]);
      return { added, removed };
    },

    async remove(left, right) {
      const { deletedCount } = await collection.deleteOne({ _id: idOf(left, right) }, inUnit());
      return deletedCount === 1;
    },

    async rightsOf(left) {
      return (await collection.find({ [leftField]: left }, inUnit()).toArray()).map((link) => link[rightField]!);
    },

    async rightsByLeft(lefts) {
      const byLeft = new Map(lefts.map((left) => [left, [] as string[]]));
      if (lefts.length === 0) return byLeft;
      for (const link of await collection.find({ [leftField]: { $in: lefts } }).toArray()) byLeft.get(link[leftField]!)?.push(link[rightField]!);
      return byLeft;
    },

    async sampleOf(left, limit) {
      const [count, first] = await Promise.all([
        collection.countDocuments({ [leftField]: left }),
        collection
          .find({ [leftField]: left })
          .sort({ _id: 1 })
          .limit(limit)
          .toArray(),
      ]);
      return { count, rights: first.map((link) => link[rightField]!) };
    },

    async rightsOfMany(lefts) {
      if (lefts.length === 0) return [];
      return (await collection.find({ [leftField]: { $in: lefts } }).toArray()).map((link) => link[rightField]!);
    },

    async leftsOf(right) {
      return (await collection.find({ [rightField]: right }, inUnit()).toArray()).map((link) => link[leftField]!);
    },

    async has(left, right) {
      return (await collection.countDocuments({ _id: idOf(left, right) }, { limit: 1, ...inUnit() })) === 1;
    },

    async removeAllOfLeft(left) {
      await collection.deleteMany({ [leftField]: left }, inUnit());
    },

    async removeAllOfRight(right) {
      await collection.deleteMany({ [rightField]: right }, inUnit());
    },

    async removeAllOfRights(rights) {
      if (rights.length > 0) await collection.deleteMany({ [rightField]: { $in: rights } }, inUnit());
    },
  };
  return links;
}

/**
 * Checked after linking: of the `added` targets, those that still exist. A target deleted while it
 * was being linked removes its links right after its own document; either that removal comes
 * after our link and takes it, or this read (after our link) sees the target gone and our link is
 * removed here. So no link outlives its target, with or without transactions.
 */
export async function keepLiveTargets(
  links: Pick<Links, 'remove'>,
  ownerId: string,
  added: string[],
  findExisting: (ids: string[]) => Promise<Array<{ _id: string }>>,
): Promise<string[]> {
  if (added.length === 0) return added;
  const live = new Set((await findExisting(added)).map(({ _id }) => _id));
  for (const id of added) if (!live.has(id)) await links.remove(ownerId, id);
  return added.filter((id) => live.has(id));
}
