import { expiring, type CollectionIndexes } from '../lib/store/database.js';

/**
 * Sign-in through upstream providers: social connectors (one per target), SSO connectors (found by
 * email domain), SAML sign-ins waiting for their response, and the ids of accepted assertions.
 */
export const upstreamCollections: CollectionIndexes = {
  connectors: [{ key: { 'metadata.target': 1 }, name: 'target', unique: true }],
  sso_connectors: [{ key: { domains: 1 }, name: 'domains' }],
  sso_sessions: [expiring],
  saml_assertions: [expiring],
};
