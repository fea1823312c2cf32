import type { ConnectorStore } from '../social/connectors.js';
import type { SsoConnectorStore } from '../sso/connectors.js';

/** What the sign-in page offers besides its forms: the social connectors, and single sign-on when an SSO connector exists. */
export interface OfferedConnectors {
  /** In the order they were made. */
  social: Array<{ id: string; name: string }>;
  sso: boolean;
}

/**
 * Reads what the sign-in page offers. Every page asks for it, and it changes only when a connector
 * does: the composition keeps it in a per-process cache that the connectors' changes clear.
 */
export async function loadOfferedConnectors(connectors: ConnectorStore, ssoConnectors: SsoConnectorStore): Promise<OfferedConnectors> {
  const [social, sso] = await Promise.all([
    connectors.collection.find({}).sort({ createdAt: 1, _id: 1 }).toArray(),
    ssoConnectors.collection.countDocuments({}, { limit: 1 }),
  ]);
  return {
    social: social.map((connector) => ({ id: connector._id, name: connector.metadata.name ?? connector.metadata.target })),
    sso: sso > 0,
  };
}
