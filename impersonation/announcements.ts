import { createHash } from 'node:crypto';

import type { ImpersonationAnnouncement } from '../hooks/catalog.js';
import type { ImpersonationEvent } from './audit.js';

/** A webhook event the ledger records for an audit record, under an id derived from the record. */
export interface Announcement {
  id: string;
  event: ImpersonationAnnouncement;
  impersonationId?: string;
  clientId?: string;
  data: Record<string, unknown>;
}

/** What the ledger announces for a record, if anything: the webhook event, and what it says (never a token, a hash of one, or the context). */
function announcementOf(record: ImpersonationEvent): { event: ImpersonationAnnouncement; data: Record<string, unknown> } | undefined {
  const common = {
    ...(record.impersonationId !== undefined && { impersonationId: record.impersonationId }),
    ...(record.targetUserId !== undefined && { targetUserId: record.targetUserId }),
  };
  const terms = {
    ...(record.reason !== undefined && { reason: record.reason }),
    ...(record.ticketId !== undefined && { ticketId: record.ticketId }),
  };
  switch (record.kind) {
    case 'subject_token.issued':
      return {
        event: 'Impersonation.Requested',
        data: {
          ...common,
          ...terms,
          ...(record.boundActorId !== undefined && { actorId: record.boundActorId }),
          issuerClientId: record.issuerClientId,
          ...(record.expiresAt !== undefined && { expiresAt: new Date(record.expiresAt).toISOString() }),
        },
      };
    case 'exchange.succeeded':
      return {
        event: 'Impersonation.Started',
        data: {
          ...common,
          ...terms,
          ...(record.actorUserId !== undefined && { actorId: record.actorUserId }),
          clientId: record.clientId,
          resource: record.resource,
          scope: record.scope ?? '',
        },
      };
    case 'exchange.failed':
      return {
        event: 'Impersonation.Refused',
        data: {
          ...common,
          ...(record.actorUserId !== undefined && { actorId: record.actorUserId }),
          ...(record.clientId !== undefined && { clientId: record.clientId }),
          ...(record.resource !== undefined && { resource: record.resource }),
          reason: record.failureReason ?? 'unknown',
        },
      };
    case 'impersonation.revoked':
      return {
        event: 'Impersonation.Revoked',
        data: { ...common, ...(record.actorUserId !== undefined && { actorId: record.actorUserId }), revokedBy: record.clientId },
      };
    default:
      return undefined;
  }
}

/** The events of records about to be chained, with ids derived from the records (a repeat is a no-op). */
export function announcementsOf(due: ImpersonationEvent[]): Announcement[] {
  return due.flatMap((record) => {
    // A record from before there were events (adopted, due at the epoch) is chained, not announced days late.
    const announcement = record.chainDue?.getTime() === 0 ? undefined : announcementOf(record);
    const clientId = record.kind === 'subject_token.issued' ? record.issuerClientId : record.clientId;
    return announcement
      ? [
          {
            // One way: an exchange record's id is made from its subject token's hash.
            id: `imp-${createHash('sha256').update(record._id).digest('base64url').slice(0, 24)}`,
            ...announcement,
            ...(record.impersonationId !== undefined && { impersonationId: record.impersonationId }),
            ...(clientId && { clientId }),
          },
        ]
      : [];
  });
}
