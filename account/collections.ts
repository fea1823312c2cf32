import { expiring, type CollectionIndexes } from '../lib/store/database.js';

/** The Account API's collections: step-up records, its codes and its attempt counters, each gone when it expires. */
export const accountCollections: CollectionIndexes = {
  verification_records: [expiring],
  verification_codes: [expiring],
  attempt_counters: [expiring],
};
