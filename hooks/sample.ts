import { generateId } from '../lib/ids.js';
import { dataEvents, interactionEvents } from './catalog.js';
import { eventSchemas, eventUser } from './event-schemas/index.js';

type Schema = Record<string, unknown>;

/** A value its schema accepts: the constant, the first choice, or a plain value of the type; an object with its required fields. */
function exampleOf(schema: Schema, name: string, now: Date): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((candidate) => candidate !== 'null') : (schema.type as string | undefined);
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((key) => [key, exampleOf(properties[key] ?? {}, key, now)]));
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return name.endsWith('At') ? now.getTime() : 1;
    case 'boolean':
      return false;
    case 'string':
      if (typeof schema.pattern === 'string' && schema.pattern.startsWith('^\\d{4}')) return now.toISOString();
      return name === 'id' ? 'sample-id' : `sample-${name}`;
    default:
      return null;
  }
}

/**
 * The body of a test delivery (`POST /api/hooks/:id/test`): the event's shape, made from its
 * schema (`event-schemas.ts`) with sample values, and `sample: true` so that a receiver can tell
 * it from a real one (the receiver kit skips it unless told otherwise).
 */
export function samplePayload(event: string, now = new Date()): { id: string; payload: Record<string, unknown> } {
  const id = generateId();
  const schema = eventSchemas().get(event);
  const filled = schema ? (exampleOf(schema, 'body', now) as Record<string, unknown>) : {};
  delete filled.hookId;
  const context = Object.hasOwn(interactionEvents, event)
    ? {
        sessionId: 'sample-session',
        userAgent: 'sample-agent',
        userIp: '203.0.113.7',
        user: { ...(exampleOf(eventUser, 'user', now) as object), id: 'sample-user', username: 'sample', primaryEmail: 'sample@example.com' },
        userId: 'sample-user',
        applicationId: 'sample-application',
        application: { id: 'sample-application', type: 'Traditional', name: 'Sample application', description: null },
      }
    : (dataEvents as string[]).includes(event)
      ? { method: 'POST', path: '/hooks/sample/test', status: 200, params: {} }
      : {};
  // About an entity as a real delivery is (a handler reading `entity.id` works), but with no `version` or
  // `sequence`: a sample has no place in the entity's history or the feed.
  const entity = { type: event.split('.')[0]!, id: 'sample-id' };
  return { id, payload: { ...filled, ...context, id, event, createdAt: now.toISOString(), entity, sample: true } };
}
