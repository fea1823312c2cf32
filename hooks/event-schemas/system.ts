import { impersonationEvents, operationalEvents } from '../catalog.js';
import { closed, isoTime, nullableString, string, type Schema } from './parts.js';

/** The events of the service itself: its hooks' health, and impersonation. */

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

export const operationalSchema = (event: (typeof operationalEvents)[number]): Schema => {
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

export const impersonationSchema = (event: (typeof impersonationEvents)[number]): Schema => {
  const { data, description } = impersonationData[event];
  return closed(event, { data: { ...data, additionalProperties: false } }, ['data'], description);
};
