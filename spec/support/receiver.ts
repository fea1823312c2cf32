import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhook } from 'standardwebhooks';

import { createEventValidator } from '../../hooks/event-schemas/index.js';
import { lastingServer } from './http-server.js';

export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read the JSON as sent
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering, in milliseconds. */
  delayMs?: number;
}

/**
 * A webhook receiver on loopback, as an integrator would write one: every request is verified
 * with the `standardwebhooks` library against the signing keys it knows; a request that fails
 * verification is answered 401 and kept in `rejected`.
 */
export interface Receiver {
  url: string;
  received: Received[];
  rejected: Array<{ headers: IncomingHttpHeaders; raw: string; reason: string }>;
  /** Deliveries that did not match their event's schema (`hooks/event-schemas.ts`): `close()` fails when there are any. */
  violations: string[];
  /** Keys to verify with; a request passes if any one of them verifies it. */
  keys: string[];
  /** How to answer the next requests (default 204). */
  answer: (received: Received) => Answer;
  /** Stops listening (senders get connection refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Waits until `predicate` holds over what was received. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const state: Receiver = {
    url: '',
    received: [],
    rejected: [],
    keys: [],
    answer: () => ({ status: 204 }),
    down,
    up,
    waitFor,
    violations: [],
    async close() {
      await down();
      if (state.violations.length > 0) throw new Error(`deliveries that do not match their event schema:\n${[...new Set(state.violations)].join('\n')}`);
    },
  };
  const validate = createEventValidator();
  let server: Server | undefined;
  let port = 0;
  /** Answers waiting for their `delayMs`. */
  const answering = new Set<NodeJS.Timeout>();

  function handler(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = req.headers as Record<string, string>;
      const reasons: string[] = [];
      const verified = state.keys.some((key) => {
        try {
          new Webhook(key).verify(raw, headers);
          return true;
        } catch (error) {
          reasons.push((error as Error).message);
          return false;
        }
      });
      if (!verified) {
        state.rejected.push({ headers: req.headers, raw, reason: reasons.join('; ') || 'no key' });
        res.statusCode = 401;
        res.end();
        return;
      }
      const received = { id: headers['webhook-id']!, headers: req.headers, raw, body: JSON.parse(raw) };
      state.received.push(received);
      // Every delivery of every test is held to its event's published schema (the OpenAPI document's `webhooks`).
      for (const problem of validate(received.body)) state.violations.push(problem);
      const { status, headers: answerHeaders = {}, body = '', delayMs = 0 } = state.answer(received);
      const timer = setTimeout(() => {
        answering.delete(timer);
        res.writeHead(status, answerHeaders);
        res.end(body);
      }, delayMs);
      answering.add(timer);
    });
  }

  async function up() {
    server = lastingServer(handler);
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
    state.url = `http://127.0.0.1:${port}/hooks`;
  }

  async function down() {
    // Answers still waiting their delay die with the connections, so that no timer outlives the receiver.
    for (const timer of answering) clearTimeout(timer);
    answering.clear();
    if (!server) return;
    const closing = server;
    server = undefined;
    await new Promise<void>((resolve) => {
      closing.close(() => resolve());
      closing.closeAllConnections();
    });
  }

  /**
   * Waits until `predicate` holds. It gives up once nothing new has arrived for `timeoutMs`: a
   * stall, not a slow machine (a burst delivered steadily under load is waited for to its end; the
   * test's own timeout bounds the whole).
   */
  async function waitFor(predicate: (received: Received[]) => boolean, timeoutMs = 30_000) {
    let seen = state.received.length;
    let deadline = Date.now() + timeoutMs;
    while (!predicate(state.received)) {
      if (state.received.length !== seen) {
        seen = state.received.length;
        deadline = Date.now() + timeoutMs;
      }
      if (Date.now() > deadline) throw new Error(`the receiver got nothing new for ${timeoutMs} ms, and not what was expected (got ${seen})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  await up();
  return state;
}
