import { interactionKinds } from '../catalog.js';

/** The pieces every event's schema is made of: the envelope, the user and application as events carry them, a change's origin. */

export type Schema = Record<string, unknown>;

export const string = { type: 'string' } as const;
export const nullableString = { type: ['string', 'null'] } as const;
export const stringList = { type: 'array', items: string } as const;
export const isoTime = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' } as const;
export const entityRef = { type: 'object', properties: { type: string, id: string }, required: ['type', 'id'], additionalProperties: false } as const;

/** What every body carries: its id (the `webhook-id`), name, time, the hook it went to, and its place in the order. */
export const envelope = (event: string) => ({
  id: { ...string, description: 'The event id, also sent as `webhook-id`: the same on every attempt and redelivery.' },
  event: { const: event },
  createdAt: { ...isoTime, description: 'When the event was recorded (ISO 8601, UTC).' },
  hookId: { ...string, description: 'The hook this delivery went to.' },
  sequence: { type: 'integer', minimum: 1, description: 'Its place in the one order of all events (gap-free; also `webhook-sequence`).' },
  entity: { ...entityRef, description: 'The entity the event is about (also `webhook-entity`, as `Type:id`).' },
  version: { type: 'integer', minimum: 1, description: "Its place among the entity's events (also `webhook-entity-version`)." },
  sample: { const: true, description: 'Only on test deliveries (`POST /api/hooks/:id/test`).' },
});

/** A real delivery has its sequence; only a sample goes without. */
export const sequenced = { if: { not: { required: ['sample'] } }, then: { required: ['sequence'] } };

/** The user as events carry it: Logto's user fields, no secret. */
export const eventUser = {
  type: 'object',
  properties: {
    id: string,
    username: nullableString,
    primaryEmail: nullableString,
    primaryPhone: nullableString,
    name: nullableString,
    avatar: nullableString,
    customData: { type: 'object' },
    identities: { type: 'object' },
    lastSignInAt: { type: ['number', 'null'] },
    createdAt: { type: 'number' },
    updatedAt: { type: 'number' },
    profile: { type: 'object' },
    applicationId: { type: 'null' },
    isSuspended: { type: 'boolean' },
  },
  required: ['id', 'username', 'primaryEmail', 'primaryPhone', 'name', 'avatar', 'customData', 'identities', 'isSuspended'],
  additionalProperties: false,
} as const;

export const eventApplication = {
  type: 'object',
  properties: { id: string, type: string, name: string, description: nullableString },
  required: ['id', 'type', 'name'],
  additionalProperties: false,
} as const;

/** Where a change came from: a Management API or Account API request, or a sign-in interaction (Logto's fields). */
export const origin = {
  method: string,
  path: { ...string, description: 'The request path, relative to `/api` as Logto writes it.' },
  matchedRoute: string,
  params: { type: 'object', additionalProperties: string },
  status: { type: 'integer' },
  clientId: { ...string, description: 'The application whose token made the request.' },
  administratorId: { ...string, description: 'The admin console administrator (a user id) who made the change, when it was made in the console.' },
  ip: string,
  userAgent: string,
  interactionEvent: { enum: interactionKinds },
  sessionId: string,
  applicationId: string,
  application: eventApplication,
};

/** An entity as a data event carries it: its id always, its other fields typed as the Management API answers them. */

export const closed = (event: string, properties: Record<string, unknown>, required: string[], description: string): Schema => ({
  type: 'object',
  description,
  properties: { ...envelope(event), ...properties },
  required: ['id', 'event', 'createdAt', 'hookId', ...required],
  additionalProperties: false,
  ...sequenced,
});
