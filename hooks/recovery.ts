/** How a backlog is sent again: every event, only the newest of each entity, or none. */
export const recoveryModes = ['all', 'latest-per-entity', 'skip'] as const;
export type RecoveryMode = (typeof recoveryModes)[number];

/**
 * What a recovery sends of `found` (events or failed deliveries, each with its entity and sequence
 * when it has them): `all` of them; `latest-per-entity` the newest of each entity (an event without
 * an entity is kept), so that a hook back from an outage gets each entity's present state once
 * instead of a storm of stale ones; `skip` none. Answers what to send and what it leaves out.
 */
export function pickForRecovery<T extends { entityKey?: string | undefined; sequence?: number | undefined }>(found: T[], mode: RecoveryMode) {
  if (mode === 'skip') return { send: [] as T[], leave: found };
  if (mode === 'all') return { send: found, leave: [] as T[] };
  const newest = new Map<string, T>();
  for (const item of found) {
    if (!item.entityKey) continue;
    const kept = newest.get(item.entityKey);
    if (!kept || (item.sequence ?? 0) > (kept.sequence ?? 0)) newest.set(item.entityKey, item);
  }
  const send = found.filter((item) => !item.entityKey || newest.get(item.entityKey) === item);
  return { send, leave: found.filter((item) => !send.includes(item)) };
}
