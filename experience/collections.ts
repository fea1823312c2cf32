import { expiring, type CollectionIndexes } from '../lib/store/database.js';

/** The sign-in experience's collections: each interaction's progress, its email codes, and attempt counters. */
export const experienceCollections: CollectionIndexes = {
  experiences: [expiring],
  verification_codes: [expiring],
  attempt_counters: [expiring],
};
