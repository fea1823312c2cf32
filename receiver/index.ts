import { createHmac, createPublicKey, timingSafeEqual, verify as verifySignature, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { ClientSession, Db, MongoClient } from 'mongodb';

import type { HookEventName } from '../hooks/catalog.js';

/**
 * The receiver kit (`oidc-identity/receiver`): what every receiver of these webhooks would write
 * otherwise, once. It verifies the signature (Standard Webhooks' HMAC `v1`, or Ed25519 `v1a`),
 * drops a delivery it has processed already (by `webhook-id`), drops an event older than one it
 * has applied for the same entity (by `entity` and `version`), and runs the handler once per
 * event: inside a MongoDB transaction with the bookkeeping where the store has them, and answers
 * 2xx only after that commits, so that a failure is retried by the sender, never lost.
 */

export type { HookEventName } from '../hooks/catalog.js';

/** One verified event, as the body carries it: `event` one of the catalog's names (docs/webhook-events.md), or a newer one. */
export interface WebhookEvent {
  id: string;
  event: HookEventName | (string & Record<never, never>);
  createdAt: string;
  sequence?: number;
  version?: number;
  entity?: { type: string; id: string };
  /** A test delivery (`POST /api/hooks/:id/test`): sample values, an `entity` but no `version` or `sequence`; skipped unless `samples: 'handle'`. */
  sample?: true;
  [field: string]: unknown;
}

/** Where processed ids and applied versions are kept. */
export interface ReceiverStore {
  /**
   * Runs `work` with the store's session (a transaction where it has them): `claim` the id (false
   * when it was processed already), read the entity's applied version, and `commit` the result.
   */
  unit<T>(work: (tx: ReceiverTransaction) => Promise<T>): Promise<T>;
}

export interface ReceiverTransaction {
  /** The session to pass to the handler's own writes, when the store has transactions. */
  session?: ClientSession;
  /** Whether this id was processed already. */
  seen(id: string): Promise<boolean>;
  /** The last version applied for this entity, 0 when none. */
  appliedVersion(entityKey: string): Promise<number>;
  /** Records the id as processed, and the entity's version as applied. */
  done(id: string, entity?: { key: string; version: number }): Promise<void>;
}

export interface ReceiverOptions {
  /** Standard Webhooks secrets (`whsec_...`): the hook's, and during a rotation the previous one. */
  secrets?: string[];
  /** Ed25519 public keys for `v1a` signatures: `whpk_` and the base64 of the raw 32-byte key, PEM, or a JWK. */
  publicKeys?: Array<string | JsonWebKey>;
  /**
   * Where the hook's `v1a` keys are published (`<service>/api/hooks/<id>/jwks`): read at the first
   * request and again when no signature verifies with the keys known (at most once a minute), so a
   * rotation needs no change here.
   */
  jwksUri?: string;
  /** The least time between two reads of `jwksUri` (default 60 s), so that forged requests cannot make it fetch on each. */
  jwksMinIntervalMs?: number;
  /** Where processed ids and applied versions are kept (by default in memory: one process, lost on restart). */
  store?: ReceiverStore;
  /** How far a `webhook-timestamp` may be from now (default 5 minutes): an older message is a replay. */
  toleranceSeconds?: number;
  /** Runs once per event; throw to have it retried. `session` is the store's transaction, when it has one. */
  handle(event: WebhookEvent, context: { session?: ClientSession }): Promise<void>;
  /**
   * What to do with a verified test delivery (`sample: true`): `skip` (the default) answers 200
   * `sample` without running the handler, so that a sample never reaches your data; `handle` runs
   * the handler with it (outside the store's bookkeeping: nothing is recorded), to try a handler out.
   */
  samples?: 'skip' | 'handle';
}

/** What a request came to: answered, and why. */
export interface ReceiverResult {
  status: number;
  outcome: 'processed' | 'duplicate' | 'stale' | 'sample' | 'rejected' | 'failed';
  reason?: string;
}

const hmacPrefix = 'whsec_';
const publicKeyPrefix = 'whpk_';

function publicKeyOf(key: string | JsonWebKey): KeyObject {
  if (typeof key !== 'string') return createPublicKey({ key, format: 'jwk' });
  if (key.startsWith(publicKeyPrefix)) {
    // The raw 32-byte Ed25519 key, wrapped in its SPKI header.
    const raw = Buffer.from(key.slice(publicKeyPrefix.length), 'base64');
    return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
  }
  return createPublicKey(key);
}

/** Whether any signature of the header verifies `<id>.<timestamp>.<body>` under any of the keys. */
function verified(header: string, signed: Buffer, secrets: string[], publicKeys: KeyObject[]): boolean {
  for (const part of header.split(' ')) {
    const [version, value] = part.split(',', 2);
    if (!value) continue;
    const given = Buffer.from(value, 'base64');
    if (version === 'v1') {
      for (const secret of secrets) {
        const key = Buffer.from(secret.startsWith(hmacPrefix) ? secret.slice(hmacPrefix.length) : secret, 'base64');
        const expected = createHmac('sha256', key).update(signed).digest();
        if (expected.length === given.length && timingSafeEqual(expected, given)) return true;
      }
    } else if (version === 'v1a') {
      if (publicKeys.some((key) => verifySignature(null, signed, key, given))) return true;
    }
  }
  return false;
}

/** A store in this process's memory: for tests and a single process that may lose what it saw on restart. */
export function memoryReceiverStore(): ReceiverStore {
  const seen = new Set<string>();
  const versions = new Map<string, number>();
  let queue: Promise<unknown> = Promise.resolve();
  return {
    // One unit at a time: the check and the record are not interleaved with another's.
    unit<T>(work: (tx: ReceiverTransaction) => Promise<T>): Promise<T> {
      const run = queue.then(() =>
        work({
          seen: async (id) => seen.has(id),
          appliedVersion: async (key) => versions.get(key) ?? 0,
          async done(id, entity) {
            seen.add(id);
            if (entity) versions.set(entity.key, Math.max(versions.get(entity.key) ?? 0, entity.version));
          },
        }),
      );
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/**
 * A MongoDB store: processed ids in `webhook_receipts` (kept `retentionDays`, a TTL index: as
 * long as the sender may redeliver), applied versions in `webhook_entity_versions`. With a replica
 * set, each event's handler runs in one transaction with them (`transactions: true`): the handler's
 * writes and the bookkeeping commit together, exactly once. Without, the handler runs, then the
 * bookkeeping: a crash between the two lets a redelivery run the handler again (at least once).
 */
export async function mongoReceiverStore(client: MongoClient, db: Db, { retentionDays = 30, transactions = false } = {}): Promise<ReceiverStore> {
  const receipts = db.collection<{ _id: string; expiresAt: Date }>('webhook_receipts');
  const versions = db.collection<{ _id: string; version: number }>('webhook_entity_versions');
  await receipts.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expiresAt_ttl' });
  const transactionOf = (session?: ClientSession): ReceiverTransaction => ({
    ...(session && { session }),
    seen: async (id) => (await receipts.countDocuments({ _id: id }, { session, limit: 1 })) > 0,
    appliedVersion: async (key) => (await versions.findOne({ _id: key }, { session }))?.version ?? 0,
    async done(id, entity) {
      // A duplicate id here means another process processed it meanwhile: its transaction wins, ours aborts.
      await receipts.insertOne({ _id: id, expiresAt: new Date(Date.now() + retentionDays * 86_400_000) }, { session });
      if (entity) {
        const { matchedCount } = await versions.updateOne(
          { _id: entity.key, version: { $lt: entity.version } },
          { $set: { version: entity.version } },
          { session },
        );
        if (matchedCount === 0) await versions.updateOne({ _id: entity.key }, { $setOnInsert: { version: entity.version } }, { upsert: true, session });
      }
    },
  });
  return {
    async unit(work) {
      if (!transactions) return work(transactionOf());
      const session = client.startSession();
      try {
        let result: Awaited<ReturnType<typeof work>> | undefined;
        await session.withTransaction(async () => {
          result = await work(transactionOf(session));
        });
        return result as Awaited<ReturnType<typeof work>>;
      } finally {
        await session.endSession();
      }
    },
  };
}

/** Reads a JWKS now and then: at first use, and when asked again after `minIntervalMs`. */
function publishedKeys(uri: string, minIntervalMs = 60_000) {
  let keys: KeyObject[] = [];
  let readAt = -Infinity;
  let reading: Promise<KeyObject[]> | undefined;
  return async function current(refresh: boolean): Promise<KeyObject[]> {
    if (reading) return reading;
    if (readAt > -Infinity && (!refresh || Date.now() - readAt < minIntervalMs)) return keys;
    reading = (async () => {
      try {
        const response = await fetch(uri, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
        if (!response.ok) throw new Error(`${uri} answered ${response.status}`);
        const { keys: found } = (await response.json()) as { keys?: JsonWebKey[] };
        keys = (found ?? []).filter((jwk) => jwk.kty === 'OKP' && jwk.crv === 'Ed25519').map(publicKeyOf);
        return keys;
      } finally {
        readAt = Date.now();
        reading = undefined;
      }
    })();
    return reading;
  };
}

export function createWebhookReceiver(options: ReceiverOptions) {
  const secrets = options.secrets ?? [];
  const publicKeys = (options.publicKeys ?? []).map(publicKeyOf);
  const published = options.jwksUri ? publishedKeys(options.jwksUri, options.jwksMinIntervalMs) : undefined;
  const store = options.store ?? memoryReceiverStore();
  const tolerance = options.toleranceSeconds ?? 300;
  if (secrets.length === 0 && publicKeys.length === 0 && !published)
    throw new TypeError('createWebhookReceiver needs secrets, publicKeys or a jwksUri to verify with');

  /** Whether the signature header verifies, with the published keys read again once if none of those known does. */
  async function verifies(header: string, signed: Buffer): Promise<boolean> {
    if (verified(header, signed, secrets, publicKeys)) return true;
    if (!published || !/(^| )v1a,/.test(header)) return false;
    try {
      if (verified(header, signed, [], await published(false))) return true;
      return verified(header, signed, [], await published(true));
    } catch {
      // The keys could not be read: not verified now, so the sender tries again later.
      return false;
    }
  }

  /** Processes one request: its headers (lower-cased names) and its body exactly as received. */
  async function receive(headers: Record<string, string | string[] | undefined>, rawBody: Buffer | string): Promise<ReceiverResult> {
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const id = header('webhook-id');
    const timestamp = header('webhook-timestamp');
    const signature = header('webhook-signature');
    if (!id || !timestamp || !signature)
      return { status: 400, outcome: 'rejected', reason: 'the webhook-id, webhook-timestamp and webhook-signature headers are needed' };
    const seconds = Number(timestamp);
    if (!Number.isInteger(seconds) || Math.abs(Date.now() / 1000 - seconds) > tolerance) {
      return { status: 400, outcome: 'rejected', reason: 'webhook-timestamp is too far from now' };
    }
    const body = Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody, 'utf8');
    const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
    if (!(await verifies(signature, signed))) return { status: 401, outcome: 'rejected', reason: 'no signature verifies' };
    let event: WebhookEvent;
    try {
      event = JSON.parse(body.toString('utf8')) as WebhookEvent;
    } catch {
      return { status: 400, outcome: 'rejected', reason: 'the body is not JSON' };
    }
    const entity = event.entity && typeof event.version === 'number' ? { key: `${event.entity.type}:${event.entity.id}`, version: event.version } : undefined;
    try {
      if (event.sample === true) {
        if (options.samples === 'handle') await options.handle(event, {});
        return { status: 200, outcome: 'sample' };
      }
      return await store.unit(async (tx) => {
        if (await tx.seen(id)) return { status: 200, outcome: 'duplicate' as const };
        if (entity && (await tx.appliedVersion(entity.key)) >= entity.version) {
          await tx.done(id);
          return { status: 200, outcome: 'stale' as const };
        }
        await options.handle(event, tx.session ? { session: tx.session } : {});
        await tx.done(id, entity);
        return { status: 200, outcome: 'processed' as const };
      });
    } catch (error) {
      // Not acknowledged: the sender tries again, and nothing of this attempt was recorded.
      return { status: 500, outcome: 'failed', reason: (error as Error).message };
    }
  }

  /** A `node:http` request listener (also Express's `(req, res)`, when no body parser consumed the body). */
  async function node(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const result = await receive(req.headers, Buffer.concat(chunks));
    res
      .writeHead(result.status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ outcome: result.outcome, ...(result.reason && { reason: result.reason }) }));
  }

  return {
    receive,
    node,
    /** Express: mount with `express.raw({ type: 'application/json' })` so that `req.body` is the exact bytes. */
    express: (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
      if (Buffer.isBuffer(req.body)) {
        void receive(req.headers, req.body).then((result) =>
          res
            .writeHead(result.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ outcome: result.outcome, ...(result.reason && { reason: result.reason }) })),
        );
      } else void node(req, res);
    },
    /** Koa middleware: reads the raw body itself (mount it before any body parser). */
    koa: async (ctx: { req: IncomingMessage; status: number; body: unknown }) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
      const result = await receive(ctx.req.headers, Buffer.concat(chunks));
      ctx.status = result.status;
      ctx.body = { outcome: result.outcome, ...(result.reason && { reason: result.reason }) };
    },
  };
}

export type WebhookReceiver = ReturnType<typeof createWebhookReceiver>;
