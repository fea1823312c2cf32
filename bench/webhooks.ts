/**
 * Webhook delivery: how many events per second reach a local receiver, how long an event
 * takes from its commit to its receipt at a steady rate, and the same for a healthy hook beside
 * one whose endpoint is slow or hangs.
 *
 *   npm run bench:webhooks            (embedded engine; MONGODB_URI=... for a real server)
 *   BENCH_BURST=1000 BENCH_RATES=20,100 BENCH_SECONDS=10 BENCH_ISOLATION_RATE=50 (the defaults)
 *
 * Both figures depend on the database's speed: the embedded engine takes milliseconds per write,
 * so read them with the engine named in the output.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

import { loadSettings } from '../settings.js';
import { silentLogger } from '../lib/logger.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { startStandaloneServer, type StandaloneServer } from '../standalone.js';

const burstSize = Number(process.env.BENCH_BURST ?? 1000);
const steadyRates = (process.env.BENCH_RATES ?? '20,100').split(',').map(Number);
const steadySeconds = Number(process.env.BENCH_SECONDS ?? 10);
/** The rate at which a healthy hook's latency is measured beside a slow and a hanging one. */
const isolationRate = Number(process.env.BENCH_ISOLATION_RATE ?? 50);
/** Which of the isolation rows to take: the other hook's endpoint answers at once (`healthy`), in 5 s (`slow`), or never (`hanging`); `none` is the healthy hook alone. */
const isolationCases = new Set((process.env.BENCH_ISOLATION ?? 'none,healthy,slow,hanging').split(','));
const admin = { BOOTSTRAP_CLIENT_ID: 'bench-admin', BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789' };

export function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A receiver that answers 204 (after `delayMs`, at once by default) and notes when each event arrived, against its `createdAt`. */
export async function startReceiver(delayMs = 0) {
  const latencies: number[] = [];
  const seen = new Set<string>();
  /** Answers waiting for their delay: cleared on close, so that a hanging receiver's timers do not keep the process alive. */
  const answering = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string };
      latencies.push(Date.now() - Date.parse(body.createdAt));
      seen.add(body.id);
      const timer = setTimeout(() => {
        answering.delete(timer);
        res.writeHead(204).end();
      }, delayMs);
      answering.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise((resolve) => {
      for (const timer of answering) clearTimeout(timer);
      server.close(resolve);
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, latencies, seen, close };
}

export async function start(uri: string, dbName: string, env: Record<string, string>) {
  const settings = { ...loadSettings({ PORT: '0', HOOKS_ALLOWED_HOSTS: '127.0.0.1', HOOKS_POLL_MS: '100', ...admin, ...env }), mongodbUri: uri };
  return startStandaloneServer(settings, { logger: silentLogger, dbName });
}

export async function token(server: StandaloneServer) {
  const response = await fetch(`${server.url}/oidc/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${admin.BOOTSTRAP_CLIENT_ID}:${admin.BOOTSTRAP_CLIENT_SECRET}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: server.identity.managementApiIndicator, scope: 'all' }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

export const post = (server: StandaloneServer, bearer: string, path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (response) => {
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<{ id: string }>;
  });

async function waitFor(predicate: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The delivery figures against the database at `uri`: rows of (figure, value). */
export async function webhookFigures(uri: string): Promise<Array<[string, string]>> {
  const receiver = await startReceiver();
  const rows: Array<[string, string]> = [];
  try {
    // 1. Throughput: a backlog written with delivery off, then drained by one delivering process.
    const dbName = `bench_hooks_${Date.now()}`;
    const writer = await start(uri, dbName, { HOOKS_DELIVERY: 'false' });
    const bearer = await token(writer);
    await post(writer, bearer, '/api/hooks', { name: 'bench', events: ['Role.Created'], config: { url: receiver.url } });
    let next = 0;
    const writing = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < burstSize) await post(writer, bearer, '/api/roles', { name: `backlog ${next++}` });
      }),
    );
    console.error(`wrote a backlog of ${burstSize} events in ${((performance.now() - writing) / 1000).toFixed(1)} s; delivering`);
    const started = performance.now();
    const deliverer = await start(uri, dbName, {});
    await waitFor(() => receiver.seen.size >= burstSize, 600_000);
    const drainSeconds = (performance.now() - started) / 1000;
    rows.push([`delivery throughput (backlog of ${burstSize}, HOOKS_CONCURRENCY=16)`, `${(burstSize / drainSeconds).toFixed(0)} events/s`]);
    await deliverer.close();

    console.error(`delivered the backlog in ${drainSeconds.toFixed(1)} s; steady rate next`);
    // 2. Latency at steady rates: writes through a delivering process, commit to receipt.
    for (const steadyRate of steadyRates) {
      receiver.latencies.length = 0;
      receiver.seen.clear();
      const live = await start(uri, `${dbName}_steady_${steadyRate}`, {});
      const liveBearer = await token(live);
      await post(live, liveBearer, '/api/hooks', { name: 'bench', events: ['Role.Created'], config: { url: receiver.url } });
      const { total, achieved } = await steady(live, liveBearer, steadyRate, 'steady');
      await waitFor(() => receiver.seen.size >= total, 300_000);
      const sorted = [...receiver.latencies].sort((a, b) => a - b);
      // When the database cannot take the writes at the asked rate, say so: the latency then includes its queue.
      rows.push([`writes committed (asked ${steadyRate} events/s for ${steadySeconds} s)`, `${achieved.toFixed(0)} events/s`]);
      rows.push([`commit to receipt at ${steadyRate} events/s, p50`, `${percentile(sorted, 50)} ms`]);
      rows.push([`commit to receipt at ${steadyRate} events/s, p99`, `${percentile(sorted, 99)} ms`]);
      await live.close();
    }
    await writer.close();

    // 3. Isolation: a healthy hook's latency while another hook's endpoint is slow (5 s an
    // answer) or hangs (past HOOKS_TIMEOUT_MS, 10 s), both subscribed to every event.
    // Alone first, and beside another healthy hook, for comparison: what the database and the
    // deliveries' writes cost by themselves.
    for (const [key, label, delayMs] of [
      ['none', 'no other', undefined],
      ['healthy', 'healthy', 0],
      ['slow', 'slow (5 s)', 5000],
      ['hanging', 'hanging', 60_000],
    ] as const) {
      if (!isolationCases.has(key)) continue;
      receiver.latencies.length = 0;
      receiver.seen.clear();
      const other = delayMs === undefined ? undefined : await startReceiver(delayMs);
      const live = await start(uri, `${dbName}_isolation_${delayMs ?? 0}`, {});
      const liveBearer = await token(live);
      if (other) await post(live, liveBearer, '/api/hooks', { name: label, events: ['Role.Created'], config: { url: other.url } });
      await post(live, liveBearer, '/api/hooks', { name: 'healthy', events: ['Role.Created'], config: { url: receiver.url } });
      const { total, achieved } = await steady(live, liveBearer, isolationRate, `beside ${label}`);
      await waitFor(() => receiver.seen.size >= total, 300_000);
      const sorted = [...receiver.latencies].sort((a, b) => a - b);
      rows.push([
        `healthy hook beside ${label === 'no other' ? 'no other' : `a ${label} one`} at ${isolationRate} events/s (${achieved.toFixed(0)} committed/s): commit to receipt p50 / p95 / p99`,
        `${percentile(sorted, 50)} / ${percentile(sorted, 95)} / ${percentile(sorted, 99)} ms`,
      ]);
      await other?.close();
      await live.close();
    }
  } finally {
    await receiver.close();
  }
  return rows;
}

/** Writes `rate` events a second for `steadySeconds` through `server`; answers how many, and the rate the database took. */
async function steady(server: StandaloneServer, bearer: string, rate: number, label: string) {
  const total = rate * steadySeconds;
  const begin = performance.now();
  const writes: Array<Promise<unknown>> = [];
  for (let i = 0; i < total; i += 1) {
    const due = begin + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    writes.push(post(server, bearer, '/api/roles', { name: `${label} ${i}` }));
  }
  await Promise.all(writes);
  return { total, achieved: total / ((performance.now() - begin) / 1000) };
}

async function main() {
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  try {
    const rows = await webhookFigures(process.env.MONGODB_URI ?? embedded!.uri);
    const engine = embedded ? 'embedded jongodb engine' : 'MongoDB at MONGODB_URI';
    console.log(
      `Webhook delivery on ${engine}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
    );
    console.log('| figure | value |\n|---|---|');
    for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  } finally {
    await embedded?.stop();
  }
}

// Run on its own (`npm run bench:webhooks`), or imported by `bench/run.ts`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
