import type { Db } from 'mongodb';

import { inUnit } from '../session.js';

interface JitEmailDomainDocument {
  _id: string;
  organizationId: string;
  /** Lower-cased, as an address's domain is compared. */
  emailDomain: string;
}

/**
 * An organization's just-in-time email domains (Logto's `organization_jit_email_domains`): a new
 * account whose proved email address is at one of them joins the organization.
 */
export function createJitEmailDomainQueries(db: Db) {
  const collection = db.collection<JitEmailDomainDocument>('organization_jit_email_domains');
  const idOf = (organizationId: string, emailDomain: string) => `${organizationId}:${emailDomain}`;
  const shown = ({ organizationId, emailDomain }: JitEmailDomainDocument) => ({ organizationId, emailDomain });

  const queries = {
    async ofOrganization(organizationId: string) {
      return (await collection.find({ organizationId }, inUnit()).sort({ emailDomain: 1 }).toArray()).map(shown);
    },
    /** The organizations an address at this domain joins. */
    async organizationsOf(emailDomain: string) {
      return (await collection.find({ emailDomain: emailDomain.toLowerCase() }, inUnit()).toArray()).map(({ organizationId }) => organizationId);
    },
    /** Adds these domains; answers those not there before. */
    async add(organizationId: string, emailDomains: string[]) {
      const existing = new Set((await queries.ofOrganization(organizationId)).map(({ emailDomain }) => emailDomain));
      const added = [...new Set(emailDomains)].filter((domain) => !existing.has(domain));
      if (added.length > 0) {
        await collection.bulkWrite(
          added.map((emailDomain) => ({
            updateOne: { filter: { _id: idOf(organizationId, emailDomain) }, update: { $setOnInsert: { organizationId, emailDomain } }, upsert: true },
          })),
          inUnit(),
        );
      }
      return added;
    },
    async replace(organizationId: string, emailDomains: string[]) {
      const wanted = new Set(emailDomains);
      const removed = (await queries.ofOrganization(organizationId)).map(({ emailDomain }) => emailDomain).filter((domain) => !wanted.has(domain));
      if (removed.length > 0) await collection.deleteMany({ organizationId, emailDomain: { $in: removed } }, inUnit());
      return { added: await queries.add(organizationId, [...wanted]), removed };
    },
    remove: async (organizationId: string, emailDomain: string) =>
      (await collection.deleteOne({ _id: idOf(organizationId, emailDomain) }, inUnit())).deletedCount === 1,
    removeAllOfOrganization: (organizationId: string) => collection.deleteMany({ organizationId }, inUnit()),
  };
  return queries;
}
