import type { FromSchema } from 'json-schema-to-ts';

import { hookEvents } from '../../hooks/catalog.js';
import { deliveryStates } from '../../hooks/models.js';
import { recoveryModes } from '../../hooks/recovery.js';
import { timestamp } from './common.js';

const eventName = { enum: hookEvents } as const;
/** Events may repeat in a body; each is taken once, as Logto's guard deduplicates them. */
const eventList = { type: 'array', items: eventName, minItems: 1, maxItems: 100 } as const;

/** Header names are RFC 9110 tokens; values are visible ASCII, so that nothing can split a header. */
const headers = {
  type: 'object',
  propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$" },
  additionalProperties: { type: 'string', maxLength: 1024, pattern: '^[\\t\\x20-\\x7e]*$' },
  maxProperties: 20,
} as const;

const config = {
  type: 'object',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://[^\\s]+$' },
    headers,
    // Logto's per-hook retry count: accepted from its clients, not kept (HOOKS_RETRY_SCHEDULE decides).
    retries: { type: 'integer', minimum: 0, maximum: 3 },
    // Ours: echo suppression, and subscription by source.
    excludeClientIds: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 50, uniqueItems: true },
    sources: { type: 'array', items: { enum: ['management', 'experience', 'account'] }, minItems: 1, uniqueItems: true },
    ordering: { enum: ['per-entity'] },
    // Ours: a ceiling on requests a second to the hook (held back, never dropped), and which signatures deliveries carry.
    maxPerSecond: { type: 'integer', minimum: 1, maximum: 10_000 },
    signatures: { type: 'array', items: { enum: ['v1', 'v1a'] }, minItems: 1, uniqueItems: true },
  },
  required: ['url'],
  additionalProperties: false,
} as const;

const name = { type: 'string', minLength: 1, maxLength: 128 } as const;

/** `events`, or Logto's legacy single `event`: one of them (else 400 `hook.missing_events`, as Logto). */
export const hookCreateSchema = {
  type: 'object',
  properties: { name, events: eventList, event: eventName, config, enabled: { type: 'boolean' } },
  required: ['name', 'config'],
  additionalProperties: false,
} as const;

export const hookPatchSchema = {
  type: 'object',
  // `mode` (ours): with `enabled: true` on a disabled hook, what it missed since it began failing is sent again that way (by default nothing).
  properties: { name, events: eventList, config, enabled: { type: 'boolean' }, mode: { enum: recoveryModes } },
  additionalProperties: false,
} as const;

export type HookConfig = FromSchema<typeof config>;

export const hookResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    config: {
      type: 'object',
      properties: {
        url: { type: 'string' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        excludeClientIds: { type: 'array', items: { type: 'string' } },
        sources: { type: 'array', items: { type: 'string' } },
        ordering: { type: 'string' },
        maxPerSecond: { type: 'integer' },
        signatures: { type: 'array', items: { type: 'string' } },
      },
      required: ['url', 'headers'],
    },
    /** The `v1a` public keys that sign now (`whpk_...`), newest first: also published, as a JWKS, at `GET /api/hooks/:id/jwks`. */
    publicKeys: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    disabledReason: { type: ['string', 'null'] },
    /** Only in the answers that create it or rotate it: the key is not shown again. */
    signingKey: { type: 'string' },
    executionStats: {
      type: 'object',
      properties: { requestCount: { type: 'integer' }, successCount: { type: 'integer' } },
      required: ['requestCount', 'successCount'],
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  required: ['id', 'name', 'events', 'config', 'enabled', 'disabledReason', 'createdAt', 'updatedAt'],
} as const;

/** `GET /api/hooks/:id/jwks`: the Ed25519 public keys that sign `v1a` now, newest first. */
export const jwksResponse = {
  type: 'object',
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          kty: { const: 'OKP' },
          crv: { const: 'Ed25519' },
          x: { type: 'string' },
          kid: { type: 'string' },
          use: { const: 'sig' },
          alg: { const: 'EdDSA' },
        },
        required: ['kty', 'crv', 'x', 'kid', 'use', 'alg'],
      },
    },
  },
  required: ['keys'],
} as const;

export const hookStatsQuery = {
  includeExecutionStats: { type: 'boolean' },
} as const;

/**
 * Ours, `{event?}`: one sample to the hook as it is, reported whatever the receiver answered; or
 * Logto's, `{events, config}`: samples of these events to this configuration (not stored), 204 or 422.
 */
export const hookTestSchema = {
  type: 'object',
  properties: { event: eventName, events: eventList, config },
  dependencies: { events: ['config'], config: ['events'] },
  additionalProperties: false,
} as const;

/** `GET /api/hooks/:id/recent-logs`, as Logto's: a time window (epoch ms, the last day by default) and a log key. */
export const recentLogsQuery = {
  start_time: { type: 'integer', minimum: 0 },
  end_time: { type: 'integer', minimum: 0 },
  logKey: { type: 'string', maxLength: 256 },
} as const;

/** One delivery attempt as one of Logto's hook log entries (`TriggerHook.<event>`). */
export const hookLogResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    key: { type: 'string' },
    payload: {
      type: 'object',
      properties: {
        key: { type: 'string' },
        result: { enum: ['Success', 'Error'] },
        hookId: { type: 'string' },
        eventId: { type: 'string' },
        deliveryId: { type: 'string' },
        durationMs: { type: 'integer' },
        response: { type: 'object', properties: { statusCode: { type: ['integer', 'null'] }, body: { type: ['string', 'null'] } } },
        error: { type: ['string', 'null'] },
      },
    },
    createdAt: { type: 'number' },
  },
  required: ['id', 'key', 'payload', 'createdAt'],
} as const;

export const testReportResponse = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    statusCode: { type: ['integer', 'null'] },
    durationMs: { type: 'integer' },
    response: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
  },
  required: ['ok', 'statusCode', 'durationMs', 'response', 'error'],
} as const;

export const deliveryListQuery = {
  state: { enum: deliveryStates },
  event: eventName,
  since: { type: 'integer', minimum: 0 },
  until: { type: 'integer', minimum: 0 },
} as const;

const attemptResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    startedAt: timestamp,
    durationMs: { type: 'integer' },
    ok: { type: 'boolean' },
    statusCode: { type: ['integer', 'null'] },
    response: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
  },
  required: ['id', 'startedAt', 'durationMs', 'ok', 'statusCode', 'response', 'error'],
} as const;

export const deliveryResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    hookId: { type: 'string' },
    eventId: { type: 'string' },
    event: { type: 'string' },
    state: { enum: deliveryStates },
    attemptCount: { type: 'integer' },
    /** When the next attempt is due (pending deliveries only; null for a parked one). */
    nextAttemptAt: { type: ['number', 'null'] },
    /** Waiting for the delivery before it about the same entity (a hook that orders per entity): due once that one finishes. */
    parked: { type: 'boolean' },
    lastStatus: { type: ['integer', 'null'] },
    lastError: { type: ['string', 'null'] },
    attempts: { type: 'array', items: attemptResponse },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  required: ['id', 'hookId', 'eventId', 'event', 'state', 'attemptCount', 'nextAttemptAt', 'lastStatus', 'lastError', 'createdAt', 'updatedAt'],
} as const;

const mode = { enum: recoveryModes } as const;

export const replaySchema = {
  type: 'object',
  properties: {
    since: { type: 'integer', minimum: 0 },
    until: { type: 'integer', minimum: 0 },
    events: eventList,
    mode,
  },
  required: ['since'],
  additionalProperties: false,
} as const;

/** Ours: the hook's failed deliveries of a range sent again (`all`), only each entity's newest (`latest-per-entity`), or marked skipped (`skip`). */
export const recoverSchema = {
  type: 'object',
  properties: { since: { type: 'integer', minimum: 0 }, until: { type: 'integer', minimum: 0 }, mode },
  required: ['since'],
  additionalProperties: false,
} as const;

export const recoverResponse = {
  type: 'object',
  properties: { failed: { type: 'integer' }, queued: { type: 'integer' }, skipped: { type: 'integer' } },
  required: ['failed', 'queued', 'skipped'],
} as const;

export const replayResponse = {
  type: 'object',
  properties: { events: { type: 'integer' }, queued: { type: 'integer' } },
  required: ['events', 'queued'],
} as const;
