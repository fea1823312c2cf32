import { expiring, newestFirst, type CollectionIndexes } from '../lib/store/database.js';

/** The webhooks' collections and their indexes. */
export const hookCollections: CollectionIndexes = {
  hooks: [newestFirst, { key: { enabled: 1, events: 1 }, name: 'enabled_events' }],
  // Replays read a time range.
  hook_events: [
    { key: { createdAt: 1, _id: 1 }, name: 'createdAt' },
    // What workers look for: events whose deliveries are not made yet (a few at any time).
    { key: { fanOutDue: 1 }, name: 'fanOutDue', partialFilterExpression: { fanOutDue: { $type: 'date' } } },
    // The sequencer's work (events not numbered yet), the one order (the feed reads it), and each entity's versions.
    { key: { sequenceDue: 1, unitIndex: 1, _id: 1 }, name: 'sequenceDue', partialFilterExpression: { sequenceDue: { $type: 'date' } } },
    { key: { sequence: 1 }, name: 'sequence', unique: true, partialFilterExpression: { sequence: { $type: 'number' } } },
    { key: { entityKey: 1, version: -1 }, name: 'entityKey_version', partialFilterExpression: { version: { $type: 'number' } } },
    expiring,
  ],
  hook_sequence: [],
  hook_entity_versions: [],
  hook_deliveries: [
    // What workers look for: pending deliveries by when they are due.
    { key: { state: 1, nextAttemptAt: 1 }, name: 'due' },
    { key: { hookId: 1, eventId: 1 }, name: 'hookId_eventId', unique: true },
    { key: { hookId: 1, createdAt: -1 }, name: 'hookId_createdAt' },
    // Per-entity ordering: parked deliveries in sequence order, and an entity's unfinished ones per hook.
    { key: { parked: 1, sequence: 1 }, name: 'parked', partialFilterExpression: { parked: true } },
    { key: { hookId: 1, entityKey: 1, state: 1 }, name: 'hookId_entityKey', partialFilterExpression: { entityKey: { $type: 'string' } } },
    expiring,
  ],
  // A hook's sends per second (config.maxPerSecond): a minute's worth is kept.
  hook_rate_windows: [expiring],
  hook_attempts: [{ key: { deliveryId: 1, startedAt: -1 }, name: 'deliveryId' }, { key: { hookId: 1, startedAt: -1 }, name: 'hookId_startedAt' }, expiring],
};
