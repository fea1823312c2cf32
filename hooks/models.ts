/**
 * Webhook records, kept apart as Standard Webhooks / Svix keep them: the endpoint (a hook), the
 * message (an event, written once whatever the number of hooks), the delivery of one event to
 * one hook, and each attempt at it.
 */

export const hookCollections = {
  hooks: 'hooks',
  events: 'hook_events',
  deliveries: 'hook_deliveries',
  attempts: 'hook_attempts',
} as const;

export interface SigningKey {
  /** `whsec_` and the base64 of 32 random bytes. */
  key: string;
  createdAt: Date;
  /** Set when a newer key replaced it: until then, deliveries are signed with both. */
  expiresAt: Date | null;
}

/** An Ed25519 key pair for `v1a` signatures; the secret key never leaves the service. */
export interface SigningKeyPair {
  /** `whsk_` and the base64 of the seed and the public key (64 bytes), as Standard Webhooks writes it. */
  secretKey: string;
  /** `whpk_` and the base64 of the raw 32-byte public key: what receivers verify with. */
  publicKey: string;
  createdAt: Date;
  /** Set when a newer pair replaced it: until then, deliveries carry a signature by each. */
  expiresAt: Date | null;
}

/** Where an event came from: a Management API request, a sign-in interaction, the Account API, or the service itself. */
export const eventSources = ['management', 'experience', 'account', 'system'] as const;
export type EventSource = (typeof eventSources)[number];

/**
 * A hook's URL as it may be shown beyond the hook itself (events about the hook, logs): scheme,
 * host and path only. User information and the query string can carry credentials; they stay in
 * the hook's own configuration.
 */
export function shownUrl(url: string): string {
  try {
    const { protocol, host, pathname } = new URL(url);
    return `${protocol}//${host}${pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

export interface HookConfigDocument {
  url: string;
  headers: Record<string, string>;
  /** Echo suppression: events caused by these applications (the client whose token made the change, or the application signed in to) are not sent. */
  excludeClientIds?: string[];
  /** Only events from these sources (none: every source). */
  sources?: EventSource[];
  /** `per-entity`: a delivery waits until the earlier deliveries of its entity to this hook succeeded or were given up. */
  ordering?: 'per-entity';
  /** Sends at most this many requests a second to the hook (across every process); more wait, none is dropped. */
  maxPerSecond?: number;
  /** Which signatures deliveries carry: HMAC `v1` (the default), Ed25519 `v1a`, or both. */
  signatures?: Array<'v1' | 'v1a'>;
}

export interface HookDocument {
  _id: string;
  name: string;
  events: string[];
  config: HookConfigDocument;
  enabled: boolean;
  /** Newest first. */
  signingKeys: SigningKey[];
  /** `v1a` key pairs, newest first; made when the hook first asks for `v1a`. */
  signingKeyPairs?: SigningKeyPair[];
  /** Why delivery stopped on its own (410 Gone, failing for days); null while enabled or disabled by hand. */
  disabledReason: string | null;
  /** When the worker disabled it (absent otherwise): with `failingSince`, where a recovery on re-enabling starts. */
  disabledAt?: Date | null;
  /** Start of the current run of failed attempts; null after a success. */
  failingSince: Date | null;
  /** When this run of failures was announced as `Hook.Disabling`; null (or absent) until then, and after a success. */
  warnedAt?: Date | null;
  createdAt: number;
  updatedAt: number;
}

export interface HookEventDocument {
  /** The stable event id, sent as `webhook-id` on every attempt of every delivery. */
  _id: string;
  event: string;
  createdAt: Date;
  /** The body without `hookId`, which each delivery adds. */
  payload: Record<string, unknown>;
  /** Where it came from (hook source filters); absent on events recorded before sources were kept. */
  source?: EventSource;
  /** The application that caused it (echo suppression), when one did. */
  clientId?: string;
  /** The request that caused it (`X-Request-Id`), for the log lines of its deliveries. */
  requestId?: string;
  /** The entity the event is about (`User:u1`), when it is about one: its events are versioned, and ordered per entity. */
  entityKey?: string;
  /** Set when recorded, removed once the sequencer numbered it (`sequencer.ts`); fan-out waits for the numbering. */
  sequenceDue?: Date;
  /** Its place among the events one write recorded together (they share `sequenceDue`): they are numbered in that order. */
  unitIndex?: number;
  /** Its place in the one order of all events: 1, 2, 3, ... with no gap, given after commit. */
  sequence?: number;
  /** Its place among its entity's events: 1, 2, 3, ... */
  version?: number;
  /**
   * Set (to when it was recorded) until a worker has made the event's deliveries, one per hook
   * subscribed to it, then removed: the write path records the event alone, whatever the hooks.
   */
  fanOutDue?: Date;
  /**
   * The worker of the process that recorded it, which fans it out at once; any other worker does
   * once it has waited two polls, so that the workers of many processes do not all race for every
   * event, and an event whose process stopped (or delivers nothing) is still fanned out.
   */
  fanOutBy?: string;
  expiresAt: Date;
}

export const deliveryStates = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryState = (typeof deliveryStates)[number];

export interface DeliveryDocument {
  _id: string;
  hookId: string;
  eventId: string;
  event: string;
  /** The event's entity and sequence, for a hook that orders per entity. */
  entityKey?: string;
  sequence?: number;
  /** Waiting (per-entity ordering) for an earlier delivery of its entity to this hook to finish; not due until released. */
  parked?: boolean;
  state: DeliveryState;
  /** Attempts made since it was (re)queued; the retry schedule is indexed by it. */
  attempts: number;
  /**
   * When a worker may next take it. Taking it moves this forward by the lease, so one field is
   * both the schedule and the lease: a worker that dies leaves it due again when its lease ends.
   */
  nextAttemptAt: Date;
  /** The lease token of the worker holding it (one token per batch it took), null when none does. */
  leaseOwner: string | null;
  lastAttemptAt: Date | null;
  /** The last attempt's HTTP status, or null when it got none (refused, timed out). */
  lastStatus: number | null;
  /** Why it failed or was skipped, in a sentence. */
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
}

export interface AttemptDocument {
  _id: string;
  deliveryId: string;
  hookId: string;
  eventId: string;
  event: string;
  startedAt: Date;
  durationMs: number;
  ok: boolean;
  statusCode: number | null;
  /** The first bytes of the receiver's answer. */
  response: string | null;
  error: string | null;
  /** The worker (one per process) that made it. */
  worker: string;
  expiresAt: Date;
}
