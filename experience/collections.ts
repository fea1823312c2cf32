import { expiring, type CollectionIndexes } from '../lib/store/database.js';
import { codeIndexes } from '../sign-in/codes.js';

/** The sign-in experience's collections: each interaction's progress, its email codes, and attempt counters. */
export const experienceCollections: CollectionIndexes = {
  experiences: [expiring],
  verification_codes: codeIndexes,
  attempt_counters: [expiring],
};
