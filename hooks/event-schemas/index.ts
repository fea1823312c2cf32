import { Ajv, type ValidateFunction } from 'ajv';

import { changeEvents, exceptionEvents, impersonationEvents, interactionEvents, lifecycleEvents, operationalEvents, optInEvents } from '../catalog.js';
import { dataEventSchema, exceptionSchema, interactionSchema } from './data.js';
import { lifecycleSchema } from './lifecycle.js';
import { optInSchema } from './opt-in.js';
import type { Schema } from './parts.js';
import { impersonationSchema, operationalSchema } from './system.js';

export { eventUser } from './parts.js';

/**
 * One JSON Schema per event a hook can receive, generated from the catalog (`catalog.ts`): the
 * OpenAPI document's `webhooks` section (OpenAPI 3.1, whose schemas are JSON Schema) is made of
 * them, and the test suite's receiver checks every delivery it is sent against them. Bodies are
 * closed (`additionalProperties: false`) at the top, so a field added to a payload without a
 * schema fails the suite; entities inside `data` are open, as Logto's are.
 */

let built: Map<string, Schema> | undefined;

/** Every event's schema, by event name, in the catalog's order. */
export function eventSchemas(): Map<string, Schema> {
  built ??= new Map<string, Schema>([
    ...Object.keys(interactionEvents).map((event) => [event, interactionSchema(event as keyof typeof interactionEvents)] as const),
    ...[...new Set(Object.values(changeEvents).map(({ event }) => event))].map((event) => [event, dataEventSchema(event)] as const),
    ...exceptionEvents.map((event) => [event, exceptionSchema(event)] as const),
    ...operationalEvents.map((event) => [event, operationalSchema(event)] as const),
    ...impersonationEvents.map((event) => [event, impersonationSchema(event)] as const),
    ...lifecycleEvents.map((event) => [event, lifecycleSchema(event)] as const),
    ...optInEvents.map((event) => [event, optInSchema(event)] as const),
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
