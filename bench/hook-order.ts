/**
 * Webhook order and the feed (issue 21): what numbering every event costs, at 1, 4, 16 and 50
 * concurrent writers; how fast the pull feed reads, at 1, 4, 16 and 50 concurrent readers; and
 * per-entity ordering against none, with one entity whose endpoint answers slowly.
 *
 *   npm run bench:hook-order          (embedded engine; MONGODB_URI=... for a real server)
 *   BENCH_LOADS=1,4,16,50 BENCH_EVENTS=400 BENCH_ENTITIES=20 BENCH_UPDATES=10 BENCH_SLOW_MS=500 (the defaults)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import type { StandaloneServer } from '../standalone.js';
import { percentile, post, start, startReceiver, token } from './webhooks.js';

const loads = (process.env.BENCH_LOADS ?? '1,4,16,50').split(',').map(Number);
const eventCount = Number(process.env.BENCH_EVENTS ?? 400);
const entityCount = Number(process.env.BENCH_ENTITIES ?? 20);
const updatesPerEntity = Number(process.env.BENCH_UPDATES ?? 10);
const slowMs = Number(process.env.BENCH_SLOW_MS ?? 500);

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `count` calls of `work`, `width` at a time. */
async function concurrently(count: number, width: number, work: (index: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

const patch = (server: StandaloneServer, bearer: string, path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((response) => {
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  });

const ms = (value: number) => `${value.toFixed(0)} ms`;

/** 1. Numbering and delivery at each number of concurrent writers: writes/s, and commit to receipt (numbered, fanned out, sent). */
async function numbering(uri: string, rows: Array<[string, string]>) {
  for (const load of loads) {
    const receiver = await startReceiver();
    const server = await start(uri, `bench_order_numbering_${load}_${Date.now()}`, {});
    try {
      const bearer = await token(server);
      await post(server, bearer, '/api/hooks', { name: 'bench', events: ['Role.Created'], config: { url: receiver.url } });
      const begin = performance.now();
      await concurrently(eventCount, load, (index) => post(server, bearer, '/api/roles', { name: `role ${index}` }));
      const writeSeconds = (performance.now() - begin) / 1000;
      await waitFor(() => receiver.seen.size >= eventCount, 300_000);
      const allSeconds = (performance.now() - begin) / 1000;
      const sorted = [...receiver.latencies].sort((a, b) => a - b);
      rows.push([
        `numbered and delivered, ${load} concurrent writer${load === 1 ? '' : 's'} (${eventCount} events): writes/s, events delivered/s, commit to receipt p50 / p99`,
        `${(eventCount / writeSeconds).toFixed(0)} / ${(eventCount / allSeconds).toFixed(0)} / ${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 99))}`,
      ]);
    } finally {
      await server.close();
      await receiver.close();
    }
  }
}

/** 1b. The sequencer alone: a backlog recorded by a process that delivers nothing, numbered by one that starts after. */
async function sequencerAlone(uri: string, rows: Array<[string, string]>) {
  const dbName = `bench_order_sequencer_${Date.now()}`;
  const writer = await start(uri, dbName, { HOOKS_DELIVERY: 'false' });
  try {
    const bearer = await token(writer);
    await concurrently(eventCount, 8, (index) => post(writer, bearer, '/api/roles', { name: `backlog ${index}` }));
    const watermark = async () => {
      const response = await fetch(`${writer.url}/api/hook-events?limit=1`, { headers: { authorization: `Bearer ${bearer}` } });
      return ((await response.json()) as { watermark: number }).watermark;
    };
    const numberer = await start(uri, dbName, {});
    const begin = performance.now();
    await waitFor(async () => (await watermark()) >= eventCount, 300_000);
    const seconds = (performance.now() - begin) / 1000;
    await numberer.close();
    rows.push([`sequencer alone: a backlog of ${eventCount} events numbered (no hook)`, `${(eventCount / seconds).toFixed(0)} events/s`]);
  } finally {
    await writer.close();
  }
}

/** 2. The feed read whole, page by page (500 a page), by 1, 4, 16 and 50 readers at once. */
async function feed(uri: string, rows: Array<[string, string]>) {
  const server = await start(uri, `bench_order_feed_${Date.now()}`, {});
  try {
    const bearer = await token(server);
    await concurrently(eventCount, 8, (index) => post(server, bearer, '/api/roles', { name: `feed ${index}` }));
    const page = async (after: number) => {
      const response = await fetch(`${server.url}/api/hook-events?after=${after}&limit=500`, { headers: { authorization: `Bearer ${bearer}` } });
      if (!response.ok) throw new Error(`the feed answered ${response.status}`);
      return (await response.json()) as { data: unknown[]; next: number; watermark: number };
    };
    await waitFor(async () => (await page(0)).watermark >= eventCount, 120_000);
    for (const load of loads) {
      const times: number[] = [];
      let read = 0;
      const begin = performance.now();
      await Promise.all(
        Array.from({ length: load }, async () => {
          let after = 0;
          for (;;) {
            const asked = performance.now();
            const { data, next } = await page(after);
            times.push(performance.now() - asked);
            read += data.length;
            if (data.length === 0) break;
            after = next;
          }
        }),
      );
      const seconds = (performance.now() - begin) / 1000;
      const sorted = times.sort((a, b) => a - b);
      rows.push([
        `feed, ${load} reader${load === 1 ? '' : 's'} each reading all ${eventCount} events (pages of 500): events read/s, page p50 / p99`,
        `${(read / seconds).toFixed(0)} / ${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 99))}`,
      ]);
    }
  } finally {
    await server.close();
  }
}

/** A receiver that answers `slowMs` late for one role and at once for the others, noting each role's arrivals. */
async function entityReceiver(slowId: () => string | undefined) {
  const arrivals = new Map<string, Array<{ version: number; at: number }>>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: string }; version: number };
      const list = arrivals.get(body.data.id) ?? [];
      list.push({ version: body.version, at: performance.now() });
      arrivals.set(body.data.id, list);
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          res.writeHead(204).end();
        },
        body.data.id === slowId() ? slowMs : 0,
      );
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** 3. Per-entity ordering against none: every role updated in turn, one role's endpoint slow. */
async function ordering(uri: string, rows: Array<[string, string]>) {
  for (const mode of ['unordered', 'per-entity'] as const) {
    let slow: string | undefined;
    const receiver = await entityReceiver(() => slow);
    const server = await start(uri, `bench_order_${mode}_${Date.now()}`, {});
    try {
      const bearer = await token(server);
      const roles: string[] = [];
      for (let index = 0; index < entityCount; index += 1) roles.push((await post(server, bearer, '/api/roles', { name: `entity ${index}` })).id);
      slow = roles[0];
      await post(server, bearer, '/api/hooks', {
        name: mode,
        events: ['Role.Data.Updated'],
        config: { url: receiver.url, ...(mode === 'per-entity' && { ordering: 'per-entity' }) },
      });
      const begin = performance.now();
      for (let round = 0; round < updatesPerEntity; round += 1) {
        await Promise.all(roles.map((id) => patch(server, bearer, `/api/roles/${id}`, { description: `round ${round}` })));
      }
      const total = entityCount * updatesPerEntity;
      const delivered = () => [...receiver.arrivals.values()].reduce((sum, list) => sum + list.length, 0);
      await waitFor(() => delivered() >= total, 600_000);
      const others = roles.slice(1).map((id) => receiver.arrivals.get(id)!);
      const othersDone = Math.max(...others.map((list) => Math.max(...list.map(({ at }) => at)))) - begin;
      const slowDone = Math.max(...receiver.arrivals.get(slow!)!.map(({ at }) => at)) - begin;
      const outOfOrder = [...receiver.arrivals.values()].filter((list) => list.some(({ version }, i) => i > 0 && version < list[i - 1]!.version)).length;
      rows.push([
        `${mode}: ${entityCount} roles × ${updatesPerEntity} updates, one role's endpoint ${slowMs} ms late: the others all delivered / the slow one done / entities that saw a version out of order`,
        `${ms(othersDone)} / ${ms(slowDone)} / ${outOfOrder}`,
      ]);
    } finally {
      await server.close();
      await receiver.close();
    }
  }
}

async function main() {
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const rows: Array<[string, string]> = [];
  const begin = performance.now();
  try {
    await numbering(uri, rows);
    await sequencerAlone(uri, rows);
    await feed(uri, rows);
    await ordering(uri, rows);
    const engine = embedded ? 'embedded jongodb engine' : 'MongoDB at MONGODB_URI';
    console.log(
      `Webhook order and feed on ${engine}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${((performance.now() - begin) / 1000).toFixed(0)} s`,
    );
    console.log('| figure | value |\n|---|---|');
    for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  } finally {
    await embedded?.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
