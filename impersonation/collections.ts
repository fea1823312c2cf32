import { expiring, newestFirst, type CollectionIndexes } from '../lib/store/database.js';

/** Impersonation's collections and their indexes: subject tokens, the audit and its chain, the kill switch. */
export const impersonationCollections: CollectionIndexes = {
  subject_tokens: [expiring, { key: { userId: 1 }, name: 'userId' }],
  impersonations: [
    newestFirst,
    { key: { targetUserId: 1, createdAt: -1 }, name: 'targetUserId' },
    { key: { actorUserId: 1, createdAt: -1 }, name: 'actorUserId', partialFilterExpression: { actorUserId: { $type: 'string' } } },
    // Whether an access token was minted by an exchange (such a token cannot act).
    { key: { tokenId: 1 }, name: 'tokenId', partialFilterExpression: { tokenId: { $type: 'string' } } },
    { key: { impersonationId: 1 }, name: 'impersonationId', partialFilterExpression: { impersonationId: { $type: 'string' } } },
    // The ledger's work (records not chained yet), and the one chain.
    { key: { chainDue: 1, createdAt: 1, _id: 1 }, name: 'chainDue', partialFilterExpression: { chainDue: { $type: 'date' } } },
    { key: { sequence: 1 }, name: 'sequence', unique: true, partialFilterExpression: { sequence: { $type: 'number' } } },
  ],
  // The kill switch: one document per revoked impersonation, read with its subject token and at introspection.
  impersonation_revocations: [],
  impersonation_ledger: [],
  impersonation_checkpoints: [{ key: { sequence: -1 }, name: 'sequence' }],
};
