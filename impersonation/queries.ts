import type { Db } from 'mongodb';

import { createImpersonationQueries as createAuditQueries } from './audit.js';
import { createSubjectTokenQueries, type SubjectTokenSelection } from './subject-tokens.js';

/**
 * Impersonation's own storage, as `hooks/queries.ts` is the webhooks': the subject tokens (stored
 * under their hash) and the audit whose records spend them. Built once and handed to the grant and
 * the Management API.
 */
export function createImpersonationQueries(db: Db) {
  const subjectTokens = createSubjectTokenQueries(db);
  const audit = createAuditQueries(db);
  return {
    subjectTokens,
    audit,
    /**
     * Voids the live subject tokens of some users, or of one impersonation: called after a change
     * that makes what they were sealed with untrue has committed (`voidingOf`).
     */
    voidSubjectTokens: async (selection: SubjectTokenSelection, reason: string) => audit.voidTokens(await subjectTokens.live(selection), reason),
  };
}

export type ImpersonationQueries = ReturnType<typeof createImpersonationQueries>;
