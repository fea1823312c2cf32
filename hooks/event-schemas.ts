import { Ajv, type ValidateFunction } from 'ajv';

import { organizationResponse, organizationRoleResponse, organizationScopeResponse } from '../lib/shapes.js';
import { scopeResponse } from '../lib/shapes.js';
import { roleResponse } from '../lib/shapes.js';
import { changeEvents, exceptionEvents, impersonationEvents, interactionEvents, interactionKinds, operationalEvents, type ChangeKey } from './catalog.js';

/**
 * One JSON Schema per event a hook can receive, generated from the catalog (`catalog.ts`): the
 * OpenAPI document's `webhooks` section (OpenAPI 3.1, whose schemas are JSON Schema) is made of
 * them, and the test suite's receiver checks every delivery it is sent against them. Bodies are
 * closed (`additionalProperties: false`) at the top, so a field added to a payload without a
 * schema fails the suite; entities inside `data` are open, as Logto's are.
 */

type Schema = Record<string, unknown>;

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const stringList = { type: 'array', items: string } as const;
const isoTime = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' } as const;
const entityRef = { type: 'object', properties: { type: string, id: string }, required: ['type', 'id'], additionalProperties: false } as const;

/** What every body carries: its id (the `webhook-id`), name, time, the hook it went to, and its place in the order. */
const envelope = (event: string) => ({
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
const sequenced = { if: { not: { required: ['sample'] } }, then: { required: ['sequence'] } };

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

const eventApplication = {
  type: 'object',
  properties: { id: string, type: string, name: string, description: nullableString },
  required: ['id', 'type', 'name'],
  additionalProperties: false,
} as const;

/** Where a change came from: a Management API or Account API request, or a sign-in interaction (Logto's fields). */
const origin = {
  method: string,
  path: { ...string, description: 'The request path, relative to `/api` as Logto writes it.' },
  matchedRoute: string,
  params: { type: 'object', additionalProperties: string },
  status: { type: 'integer' },
  clientId: { ...string, description: 'The application whose token made the request.' },
  ip: string,
  userAgent: string,
  interactionEvent: { enum: interactionKinds },
  sessionId: string,
  applicationId: string,
  application: eventApplication,
};

/** An entity as a data event carries it: its id always, its other fields typed as the Management API answers them. */
const openEntity = (response: { properties: Record<string, unknown> }) => ({ type: 'object', properties: response.properties, required: ['id'] });

const entityData: Record<string, Schema> = {
  Role: openEntity(roleResponse),
  Scope: openEntity(scopeResponse),
  Organization: openEntity(organizationResponse),
  OrganizationRole: openEntity(organizationRoleResponse),
  OrganizationScope: openEntity(organizationScopeResponse),
};

const closed = (event: string, properties: Record<string, unknown>, required: string[], description: string): Schema => ({
  type: 'object',
  description,
  properties: { ...envelope(event), ...properties },
  required: ['id', 'event', 'createdAt', 'hookId', ...required],
  additionalProperties: false,
  ...sequenced,
});

/** A data event: what its change's rule carries, and the origin. */
function dataEventSchema(event: string): Schema {
  const rules = Object.entries(changeEvents).filter(([, rule]) => rule.event === event);
  const [key, rule] = rules[0]!;
  const entity = (key as ChangeKey).split('.')[0]!;
  const carried: Record<string, unknown> = {};
  const required: string[] = [];
  if (rule.ownerKey) {
    carried[rule.ownerKey] = string;
    required.push(rule.ownerKey);
  }
  switch (rule.carries) {
    case 'user':
      carried.data = eventUser;
      carried.changes = { ...stringList, description: 'On an update: the fields it changed (`identities.<target>` for a linked identity).' };
      required.push('data');
      break;
    case 'scopes':
      carried.data = { type: 'array', items: openEntity(scopeResponse), description: "The role's permissions as they now are." };
      required.push('data');
      break;
    case 'organizationScopes':
      carried.data = { type: 'array', items: openEntity(organizationScopeResponse), description: "The organization role's permissions as they now are." };
      required.push('data');
      break;
    case 'delta':
      carried.addedUserIds = stringList;
      carried.removedUserIds = stringList;
      break;
    default:
      carried.data = entityData[entity] ?? { type: 'object', required: ['id'] };
      required.push('data');
  }
  return closed(event, { ...carried, ...origin }, required, `${entity}: a change made through the Management API, the Account API or a sign-in.`);
}

const interactionSchema = (event: keyof typeof interactionEvents): Schema =>
  closed(
    event,
    {
      interactionEvent: { const: interactionEvents[event] },
      sessionId: string,
      userAgent: string,
      userIp: string,
      userId: string,
      user: eventUser,
      applicationId: string,
      application: eventApplication,
    },
    ['interactionEvent', 'userId'],
    `A ${interactionEvents[event]} interaction that ended with a sign-in.`,
  );

const exceptionFields: Record<(typeof exceptionEvents)[number], { properties: Record<string, unknown>; description: string }> = {
  'Identifier.Lockout': {
    properties: { type: string, value: { ...string, description: 'The identifier as typed.' } },
    description: 'An identifier locked after repeated failed attempts.',
  },
  'Message.RateLimited': {
    properties: { action: { const: 'VerificationCodeSend' }, recipient: string },
    description: 'A verification code send refused by a limit.',
  },
};

const exceptionSchema = (event: (typeof exceptionEvents)[number]): Schema => {
  const { properties, description } = exceptionFields[event];
  const context = { interactionEvent: { enum: interactionKinds }, sessionId: string, applicationId: string, ip: string, userAgent: string };
  return closed(event, { ...properties, ...context }, Object.keys(properties), description);
};

// The hook's URL as scheme, host and path: its user information and query string stay in its configuration.
const hookRef = { id: string, name: string, url: { type: 'string', description: 'The hook’s URL without user information or query string.' } };
const operationalData: Record<(typeof operationalEvents)[number], { data: Schema; description: string }> = {
  'Hook.Disabling': {
    data: {
      type: 'object',
      properties: { ...hookRef, failingSince: isoTime, disablesAt: isoTime },
      required: ['id', 'name', 'url', 'failingSince', 'disablesAt'],
    },
    description: 'A hook has failed for half the time that disables it.',
  },
  'Hook.Disabled': {
    data: { type: 'object', properties: { ...hookRef, disabledReason: string }, required: ['id', 'name', 'url', 'disabledReason'] },
    description: 'A hook was disabled (410 Gone, or failing for too long).',
  },
  'Hook.DeliveryExhausted': {
    data: {
      type: 'object',
      properties: {
        hook: { type: 'object', properties: hookRef, required: ['id', 'name', 'url'] },
        delivery: {
          type: 'object',
          properties: {
            id: string,
            eventId: string,
            event: string,
            attempts: { type: 'integer' },
            lastStatus: { type: ['integer', 'null'] },
            lastError: nullableString,
          },
          required: ['id', 'eventId', 'event', 'attempts'],
        },
      },
      required: ['hook', 'delivery'],
    },
    description: 'A delivery was given up after its attempts.',
  },
};

const operationalSchema = (event: (typeof operationalEvents)[number]): Schema => {
  const { data, description } = operationalData[event];
  return closed(event, { data: { ...data, additionalProperties: false } }, ['data'], description);
};

const impersonationCommon = { impersonationId: string, targetUserId: string, actorId: string };
const impersonationData: Record<(typeof impersonationEvents)[number], { data: Schema; description: string }> = {
  'Impersonation.Requested': {
    data: {
      type: 'object',
      properties: { ...impersonationCommon, reason: string, ticketId: string, issuerClientId: string, expiresAt: isoTime },
      required: ['impersonationId', 'targetUserId', 'issuerClientId', 'expiresAt'],
    },
    description: 'A subject token was issued: who is to be impersonated, by whom (when bound to an actor), why, and until when.',
  },
  'Impersonation.Started': {
    data: {
      type: 'object',
      properties: { ...impersonationCommon, reason: string, ticketId: string, clientId: string, resource: string, scope: string },
      required: ['impersonationId', 'targetUserId', 'clientId', 'resource', 'scope'],
    },
    description: 'A subject token was exchanged: the application, the API resource, the permissions granted and the actor.',
  },
  'Impersonation.Refused': {
    data: {
      type: 'object',
      properties: { ...impersonationCommon, clientId: string, resource: string, reason: { ...string, description: 'Why the exchange was refused.' } },
      required: ['reason'],
    },
    description: 'An exchange was refused (the subject token unknown, used, expired, revoked, or the actor not acceptable).',
  },
  'Impersonation.Revoked': {
    data: { type: 'object', properties: { ...impersonationCommon, revokedBy: string }, required: ['impersonationId', 'revokedBy'] },
    description: 'An impersonation was ended by `POST /api/impersonations/:id/revoke`: its tokens are inactive from now on.',
  },
};

const impersonationSchema = (event: (typeof impersonationEvents)[number]): Schema => {
  const { data, description } = impersonationData[event];
  return closed(event, { data: { ...data, additionalProperties: false } }, ['data'], description);
};

let built: Map<string, Schema> | undefined;

/** Every event's schema, by event name, in the catalog's order. */
export function eventSchemas(): Map<string, Schema> {
  built ??= new Map<string, Schema>([
    ...Object.keys(interactionEvents).map((event) => [event, interactionSchema(event as keyof typeof interactionEvents)] as const),
    ...[...new Set(Object.values(changeEvents).map(({ event }) => event))].map((event) => [event, dataEventSchema(event)] as const),
    ...exceptionEvents.map((event) => [event, exceptionSchema(event)] as const),
    ...operationalEvents.map((event) => [event, operationalSchema(event)] as const),
    ...impersonationEvents.map((event) => [event, impersonationSchema(event)] as const),
  ]);
  return built;
}

/** The OpenAPI 3.1 `webhooks` section: one POST per event, its body the event's schema. */
export function openApiWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    [...eventSchemas()].map(([event, schema]) => [
      event,
      {
        post: {
          summary: event,
          description: `${String(schema.description)} Signed as Standard Webhooks says (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`).`,
          tags: ['webhooks'],
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: { '2XX': { description: 'Received: not sent again.' }, default: { description: 'Not received: retried on the hook’s schedule.' } },
        },
      },
    ]),
  );
}

/** Checks a delivered body against its event's schema; answers the problems, none when it conforms. */
export function createEventValidator(): (body: { event?: unknown }) => string[] {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const compiled = new Map<string, ValidateFunction>();
  return (body) => {
    const event = typeof body.event === 'string' ? body.event : undefined;
    const schema = event === undefined ? undefined : eventSchemas().get(event);
    if (!event || !schema) return [`no schema for event ${String(body.event)}`];
    let validate = compiled.get(event);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(event, validate);
    }
    return validate(body)
      ? []
      : (validate.errors ?? []).map(({ instancePath, message, params }) => `${event}${instancePath} ${message} ${JSON.stringify(params)}`);
  };
}
