import type { Db, Filter } from 'mongodb';

import { inUnit } from '../session.js';

/** Logto's statuses; `Expired` is also said of a pending invitation past its time, when read. */
export type InvitationStatus = 'Pending' | 'Accepted' | 'Expired' | 'Revoked';

export interface InvitationDocument {
  _id: string;
  inviterId: string | null;
  /** The invitee's email address, lower-cased. */
  invitee: string;
  organizationId: string;
  organizationRoleIds: string[];
  status: InvitationStatus;
  acceptedUserId: string | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

/**
 * Organization invitations (Logto's `organization_invitations`, RFC 0003). One pending invitation per
 * invitee and organization, held by a partial unique index; one past its time is set `Expired` before
 * another is made, and said `Expired` on every read.
 */
export function createInvitationQueries(db: Db) {
  const collection = db.collection<InvitationDocument>('organization_invitations');
  /** As the invitation is now: a pending one past its time is expired. */
  const asOf =
    (now: number) =>
    (invitation: InvitationDocument): InvitationDocument =>
      invitation.status === 'Pending' && invitation.expiresAt <= now ? { ...invitation, status: 'Expired' } : invitation;

  return {
    collection,
    async find(filter: { organizationId?: string; inviterId?: string; invitee?: string }, now = Date.now()) {
      const query: Filter<InvitationDocument> = {
        ...(filter.organizationId !== undefined && { organizationId: filter.organizationId }),
        ...(filter.inviterId !== undefined && { inviterId: filter.inviterId }),
        ...(filter.invitee !== undefined && { invitee: filter.invitee.toLowerCase() }),
      };
      return (await collection.find(query, inUnit()).sort({ createdAt: -1, _id: -1 }).toArray()).map(asOf(now));
    },
    async findById(id: string, now = Date.now()) {
      const found = await collection.findOne({ _id: id }, inUnit());
      return found && asOf(now)(found);
    },
    /** Sets `Expired` on the pending invitations of this invitee and organization that are past their time. */
    expirePast: (invitee: string, organizationId: string, now = Date.now()) =>
      collection.updateMany(
        { invitee, organizationId, status: 'Pending', expiresAt: { $lte: now } },
        { $set: { status: 'Expired', updatedAt: now } },
        inUnit(),
      ),
    insert: (invitation: InvitationDocument) => collection.insertOne(invitation, inUnit()),
    /** Moves a pending invitation, not yet past its time, to `status`; false when it was not pending (any more). */
    async settle(id: string, status: 'Accepted' | 'Revoked', acceptedUserId: string | null, now = Date.now()) {
      const { modifiedCount } = await collection.updateOne(
        { _id: id, status: 'Pending', expiresAt: { $gt: now } },
        { $set: { status, acceptedUserId, updatedAt: now } },
        inUnit(),
      );
      return modifiedCount === 1;
    },
    delete: async (id: string) => (await collection.deleteOne({ _id: id }, inUnit())).deletedCount === 1,
    removeAllOfOrganization: (organizationId: string) => collection.deleteMany({ organizationId }, inUnit()),
    /** A deleted organization role is no longer given by any invitation (each rewritten without it: no engine lacks `$set`). */
    async removeRole(organizationRoleId: string) {
      for (const invitation of await collection.find({ organizationRoleIds: organizationRoleId }, inUnit()).toArray()) {
        const kept = invitation.organizationRoleIds.filter((id) => id !== organizationRoleId);
        await collection.updateOne({ _id: invitation._id }, { $set: { organizationRoleIds: kept } }, inUnit());
      }
    },
  };
}
