/**
 * What one database command costs the server's process (`npm run bench:command-cost`;
 * BENCHMARKS.md, "What one database command costs"). A client on the embedded engine (or
 * `MONGODB_URI`) sends the cheapest command there is, a `findOne` that finds nothing by an indexed
 * field, one at a time after a warm-up, and reads its own CPU (every thread) per command. Beside
 * it, the same process's CPU for a loopback HTTP request to a server that answers at once, the
 * smallest thing a token request makes. What a benchmark ratio against stock oidc-provider (which
 * makes no database command) can be is bounded by these two figures.
 *
 *   BENCH_COMMANDS=2000 (the default)
 */
import http from 'node:http';
import os from 'node:os';

import { MongoClient } from 'mongodb';

import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';

const count = Number(process.env.BENCH_COMMANDS ?? 2000);

/** This process's CPU (ms) for each of `count` runs of `work`, one after another. */
async function cpuPer(work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i += 1) await work();
  const before = process.cpuUsage();
  for (let i = 0; i < count; i += 1) await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}

async function main() {
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const client = await MongoClient.connect(uri, { serverMonitoringMode: 'poll' });
  const collection = client.db(`command_cost_${Date.now()}`).collection<{ _id: string; due?: Date }>('probe');
  await collection.createIndex({ due: 1 });
  await collection.insertOne({ _id: 'one' });
  const server = http.createServer((_request, response) => response.end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const agent = new http.Agent({ keepAlive: true });
  const request = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent }, (response) => {
          response.resume();
          response.on('end', resolve);
        })
        .on('error', reject);
    });
  try {
    const command = await cpuPer(() => collection.findOne({ due: { $lte: new Date() } }, { projection: { _id: 1 } }));
    const loopback = await cpuPer(request);
    console.log(
      `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ` +
        `Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${count} of each, one at a time\n`,
    );
    console.log('| the client process’s CPU for | ms |\n|---|---|');
    console.log(`| one database command (a findOne that finds nothing) | ${command.toFixed(3)} |`);
    console.log(`| one loopback HTTP request and its answer (both ends in this process) | ${loopback.toFixed(3)} |`);
  } finally {
    agent.destroy();
    server.close();
    await client.close();
    await embedded?.stop();
  }
  process.exit(0);
}

await main();
