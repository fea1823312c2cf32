/** Figure 4 (`npm run bench`, BENCH_PARTS=webhooks): what a Management API write pays for recording its event, then delivery. */
import { startServerChild, type ServerChild } from './support/processes.js';
import { admin, api, basic, baseUrl, tokenRequest } from './support/token-load.js';
import type { BenchContext } from './tokens.js';
import { startReceiver, webhookFigures } from './webhooks.js';

export async function writeCostFigures(
  { env, say }: Pick<BenchContext, 'env' | 'say'>,
  { uri, dbName }: { uri: string; dbName: string },
): Promise<Array<[string, string]>> {
  const rows: Array<[string, string]> = [];
  const receiver = await startReceiver();
  const hookEnv = { HOOKS_ALLOWED_HOSTS: '127.0.0.1', HOOKS_POLL_MS: '100' };
  const writeCount = 600;
  type WriteCost = { cpu: number; busy: number; count: number };
  /** `count` role creations, one at a time, each announcing Role.Created; the server's CPU and busy time in all. */
  const writes = (server: ServerChild, bearer: string, label: string, count = writeCount, settled: () => Promise<void> = async () => {}) =>
    server.profiled(`writes-${label.replaceAll(' ', '-')}`, async (): Promise<WriteCost> => {
      const before = await server.stats();
      for (let i = 0; i < count; i += 1) await api(server, bearer, 'POST', '/api/roles', { name: `${label} ${Math.random()}` });
      await settled();
      const after = await server.stats();
      return { cpu: (after.cpuMicros - before.cpuMicros) / 1000, busy: after.busyMs - before.busyMs, count };
    });
  const perWrite = (costs: WriteCost[]) => {
    const count = costs.reduce((sum, { count: n }) => sum + n, 0);
    return { cpu: costs.reduce((sum, { cpu }) => sum + cpu, 0) / count, busy: costs.reduce((sum, { busy }) => sum + busy, 0) / count };
  };
  const adminOf = (server: ServerChild) =>
    tokenRequest(server, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
      grant_type: 'client_credentials',
      resource: `${baseUrl}/api`,
      scope: 'all',
    });
  const hook = { name: 'bench', events: ['Role.Created'], config: { url: receiver.url } };

  // Recording: a process that only records (delivery is another process's work), without and with a hook.
  const writer = await startServerChild('identity', { ...env, ...hookEnv, BENCH_DB: `${dbName}_writes` });
  const writerToken = await adminOf(writer);
  await writes(writer, writerToken, 'warm-up', 200);
  const { id: hookId } = await api(writer, writerToken, 'POST', '/api/hooks', { ...hook, enabled: false });
  // Blocks with and without the hook take turns: the engine slows as its collections grow,
  // which would otherwise weigh on whichever ran second.
  const blocks = { off: [] as WriteCost[], on: [] as WriteCost[] };
  for (let block = 0; block < 6; block += 1) {
    // Which goes first alternates too, so that neither is always the later one.
    for (const enabled of block % 2 === 0 ? [false, true] : [true, false]) {
      await api(writer, writerToken, 'PATCH', `/api/hooks/${hookId}`, { enabled });
      (enabled ? blocks.on : blocks.off).push(await writes(writer, writerToken, `${enabled ? 'hooked' : 'no hook'} ${block}`, writeCount / 6));
    }
  }
  const [off, on] = [perWrite(blocks.off), perWrite(blocks.on)];
  await writer.stop();

  // Everything: a process that also makes the deliveries, signs and sends them, and settles them.
  const delivering = await startServerChild('identity', { ...env, ...hookEnv, HOOKS_DELIVERY: 'true', BENCH_DB: `${dbName}_delivered` });
  const deliveringToken = await adminOf(delivering);
  await api(delivering, deliveringToken, 'POST', '/api/hooks', hook);
  let expected = 0;
  const allReceived = async (count: number) => {
    expected += count;
    const deadline = Date.now() + 120_000;
    while (receiver.seen.size < expected) {
      if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.seen.size} of ${expected} events within 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await writes(delivering, deliveringToken, 'delivered warm-up', 200, () => allReceived(200));
  const delivered = perWrite([await writes(delivering, deliveringToken, 'delivered', writeCount, () => allReceived(writeCount))]);
  await delivering.stop();
  await receiver.close();

  const change = (a: number, b: number) => `${((b / a - 1) * 100).toFixed(0)}%`;
  // Both: process CPU counts every thread, including background work per second that a slower
  // phase accumulates more of; the main thread's busy time is what a write itself costs.
  rows.push([
    '4. recording: main-thread busy time per Management API write, no hook subscribed / one hook (target ≤ +15%)',
    `${off.busy.toFixed(2)} ms / ${on.busy.toFixed(2)} ms (${change(off.busy, on.busy)})`,
  ]);
  rows.push([
    '4. recording: process CPU per Management API write, no hook / one hook',
    `${off.cpu.toFixed(2)} ms / ${on.cpu.toFixed(2)} ms (${change(off.cpu, on.cpu)})`,
  ]);
  rows.push([
    '4. recording and delivering in one process: process CPU per write with its event delivered to one hook',
    `${delivered.cpu.toFixed(2)} ms (${change(off.cpu, delivered.cpu)} over no hook)`,
  ]);
  for (const [name, value] of await webhookFigures(uri)) rows.push([`4. ${name}`, value]);
  say('webhooks measured');
  return rows;
}
