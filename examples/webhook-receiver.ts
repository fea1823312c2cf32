/**
 * An integrator's webhook receiver, written with the receiver kit (`oidc-identity/receiver`): it
 * keeps a CRM's copy of the users (`crm_users`) in step with the identity service. Each event is
 * verified, applied once, and never older over newer: a redelivery or a late retry of an old state
 * is dropped by the kit, so the copy always ends at each user's latest state.
 *
 *   HOOK_SIGNING_KEY=whsec_... (or HOOK_JWKS_URI=http://localhost:3001/api/hooks/<id>/jwks)
 *   MONGODB_URI=mongodb://... RECEIVER_PORT=3003 npm run example:receiver
 *
 * then create a hook for `User.Created`, `User.Data.Updated` and `User.Deleted` whose URL is this
 * receiver's (`HOOKS_ALLOWED_HOSTS=localhost` lets a local server send to it).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

import { MongoClient, type Db } from 'mongodb';

import { createWebhookReceiver, mongoReceiverStore, type WebhookEvent } from '../receiver/index.js';

export interface CrmUser {
  _id: string;
  username: string | null;
  email: string | null;
  name: string | null;
  /** The entity version last applied (from the event). */
  version: number;
}

export interface WebhookReceiverOptions {
  client: MongoClient;
  db: Db;
  secrets?: string[];
  jwksUri?: string;
  /** Whether the database runs transactions (a replica set): then each event is applied exactly once. */
  transactions?: boolean;
  port?: number;
}

interface UserData {
  id: string;
  username: string | null;
  primaryEmail: string | null;
  name: string | null;
}

export async function startWebhookReceiver({ client, db, secrets, jwksUri, transactions = false, port = 0 }: WebhookReceiverOptions) {
  const users = db.collection<CrmUser>('crm_users');
  const receiver = createWebhookReceiver({
    ...(secrets && { secrets }),
    ...(jwksUri && { jwksUri }),
    store: await mongoReceiverStore(client, db, { transactions }),
    async handle(event: WebhookEvent, { session }) {
      const user = event.data as UserData | undefined;
      if (!user || event.version === undefined) return;
      if (event.event === 'User.Deleted') {
        await users.deleteOne({ _id: user.id }, { session });
        return;
      }
      await users.updateOne(
        { _id: user.id },
        { $set: { username: user.username, email: user.primaryEmail, name: user.name, version: event.version } },
        { upsert: true, session },
      );
    },
  });
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    void receiver.node(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/webhooks`,
    users,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { HOOK_SIGNING_KEY, HOOK_JWKS_URI, MONGODB_URI, RECEIVER_PORT } = process.env;
  if (!MONGODB_URI || (!HOOK_SIGNING_KEY && !HOOK_JWKS_URI)) {
    console.error('Set MONGODB_URI, and HOOK_SIGNING_KEY (whsec_...) or HOOK_JWKS_URI.');
    process.exit(1);
  }
  const client = await MongoClient.connect(MONGODB_URI);
  const receiver = await startWebhookReceiver({
    client,
    db: client.db(),
    ...(HOOK_SIGNING_KEY && { secrets: [HOOK_SIGNING_KEY] }),
    ...(HOOK_JWKS_URI && { jwksUri: HOOK_JWKS_URI }),
    port: Number(RECEIVER_PORT ?? 3003),
  });
  console.log(`Webhook receiver on ${receiver.url}; the CRM's users are in crm_users.`);
}
