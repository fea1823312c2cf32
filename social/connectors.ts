import type { Db } from 'mongodb';

import { ApiError, assertThat } from '../lib/errors.js';
import { generateId } from '../lib/ids.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import { factoryById, factoryToApi, type ConnectorFactory } from './factories.js';

export interface ConnectorDocument {
  _id: string;
  /** The factory it was made from (`oidc`, `github-universal`, ...). */
  connectorId: string;
  /** The factory's configuration, without the client secret. */
  config: Record<string, unknown>;
  /** The client secret, sealed (lib/mfa/secret-box.ts) with the connector's id: write-only. */
  sealedSecret: string;
  metadata: { target: string; name?: string; logo?: string };
  /** Whether a sign-in updates the user's name, avatar and email from the upstream profile. */
  syncProfile: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A connector as Logto's Management API answers one: its factory's facts with its own; never the client secret. */
export function connectorToApi(connector: ConnectorDocument) {
  const factory = factoryById(connector.connectorId)!;
  const { id: _factoryId, ...facts } = factoryToApi(factory);
  return {
    ...facts,
    id: connector._id,
    connectorId: connector.connectorId,
    target: connector.metadata.target,
    config: connector.config,
    metadata: { target: connector.metadata.target, name: { en: connector.metadata.name ?? factory.name }, logo: connector.metadata.logo ?? '' },
    syncProfile: connector.syncProfile,
    createdAt: connector.createdAt,
  };
}

/** The social connectors, stored in `connectors`; the client secret sealed under the MFA key's box. */
export function createConnectorStore(db: Db, box: SecretBox) {
  const connectors = db.collection<ConnectorDocument>('connectors');
  return {
    collection: connectors,
    /** A new connector of `factory`: its configuration over the factory's defaults, the secret sealed. */
    make(
      factory: ConnectorFactory,
      config: Record<string, unknown>,
      metadata: { target?: string; name?: string; logo?: string },
      syncProfile: boolean,
    ): ConnectorDocument {
      const _id = generateId();
      const { clientSecret, ...rest } = { ...factory.defaults, ...config } as Record<string, unknown> & { clientSecret: string };
      const now = Date.now();
      return {
        _id,
        connectorId: factory.id,
        config: rest,
        sealedSecret: box.seal(clientSecret, _id),
        metadata: { target: metadata.target ?? factory.target, ...(metadata.name && { name: metadata.name }), ...(metadata.logo && { logo: metadata.logo }) },
        syncProfile,
        createdAt: now,
        updatedAt: now,
      };
    },
    secretOf: (connector: ConnectorDocument) => box.open(connector.sealedSecret, connector._id),
    seal: (connectorId: string, secret: string) => box.seal(secret, connectorId),
    async get(id: string): Promise<ConnectorDocument> {
      const found = await connectors.findOne({ _id: id });
      assertThat(found, () => new ApiError('connector.not_found', `no connector has id \`${id}\``, { id }));
      return found!;
    },
  };
}

export type ConnectorStore = ReturnType<typeof createConnectorStore>;
