import { expiring, type CollectionIndexes } from '../lib/store/database.js';
import { codeIndexes } from '../sign-in/codes.js';

/** The Account API's collections: step-up records, its codes and its attempt counters, each gone when it expires. */
export const accountCollections: CollectionIndexes = {
  verification_records: [expiring],
  verification_codes: codeIndexes,
  attempt_counters: [expiring],
};
