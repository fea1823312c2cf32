import { eventSchemas } from '../../hooks/event-schemas/index.js';
import { generatedBanner, table } from './markdown.js';

interface Property {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  description?: string;
}

/** A property's type as a reader wants it: its constant, its values, or its JSON type. */
function typeOf(property: Property): string {
  if (property.const !== undefined) return `\`${JSON.stringify(property.const)}\``;
  if (property.enum) return property.enum.map((value) => `\`${JSON.stringify(value)}\``).join(', ');
  if (Array.isArray(property.type)) return property.type.join(' or ');
  return property.type ?? 'object';
}

/** The envelope every body carries: shown once, above the events, not under each. */
const envelopeFields = new Set(['id', 'event', 'createdAt', 'hookId', 'sequence', 'entity', 'version', 'sample']);

/** docs/webhook-events.md: every event a hook can subscribe to, its description and body, from the catalog's schemas. */
export function renderEvents(): string {
  const schemas = [...eventSchemas()];
  const [, first] = schemas[0]!;
  const envelope = Object.entries((first.properties ?? {}) as Record<string, Property>).filter(([name]) => envelopeFields.has(name));
  const parts = [
    generatedBanner('the events’ JSON Schemas (`hooks/catalog.ts`, `hooks/event-schemas/`)'),
    '',
    '# Webhook events',
    '',
    `The ${schemas.length} events a hook can subscribe to (\`events\` of \`POST /api/hooks\`). How they are`,
    'delivered, signed and ordered: [webhooks](webhooks.md). The same schemas are the `webhooks` section of',
    '`GET /api/openapi.json`; the test suite checks every delivery it receives against them.',
    '',
    '## Every body',
    '',
    table(
      ['Field', 'Type', 'Meaning'],
      envelope.map(([name, property]) =>
        name === 'event'
          ? ['`event`', 'string', 'The event’s name: one of the headings below.']
          : [`\`${name}\``, typeOf(property), property.description ?? ''],
      ),
    ),
  ];
  for (const [event, schema] of schemas) {
    const required = new Set((schema.required ?? []) as string[]);
    const fields = Object.entries((schema.properties ?? {}) as Record<string, Property>).filter(([name]) => !envelopeFields.has(name));
    parts.push('', `## \`${event}\``, '', String(schema.description ?? ''));
    if (fields.length > 0)
      parts.push(
        '',
        table(
          ['Field', 'Type', 'Always', 'Meaning'],
          fields.map(([name, property]) => [`\`${name}\``, typeOf(property), required.has(name) ? 'yes' : '', property.description ?? '']),
        ),
      );
  }
  return `${parts.join('\n')}\n`;
}
