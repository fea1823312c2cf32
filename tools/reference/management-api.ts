import { generatedBanner, table } from './markdown.js';

interface Operation {
  summary?: string;
  'x-scopes'?: string[];
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/**
 * docs/management-api-reference.md: every route of the Management API, its method, summary and
 * the scopes that open it, from the OpenAPI document the running server serves (`/api/openapi.json`,
 * read off the routes' own guards). The schemas of bodies and answers are in that document and on
 * the reference page `/api/docs`.
 */
export function renderManagementApi(document: OpenApiDocument): string {
  const byTag = new Map<string, string[][]>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = path.split('/')[2] ?? 'api';
      const scopes = operation['x-scopes'];
      const access = scopes ? scopes.map((scope) => `\`${scope}\``).join(' or ') : 'public';
      const row = [`\`${method.toUpperCase()} ${path}\``, operation.summary ?? '', access];
      byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
    }
  }
  const parts = [
    generatedBanner('the routes’ guards, through the OpenAPI document (`management/openapi.ts`)'),
    '',
    '# Management API reference',
    '',
    'Every route of `/api`, grouped by its first segment. A route needs a `client_credentials` access',
    'token for the resource `<BASE_URL>/api` holding one of the scopes shown ([management API](management-api.md)',
    'says how to get one and what each answer means). The bodies, answers and errors of each are in',
    '`GET /api/openapi.json` and on the reference page `/api/docs` of a running server.',
  ];
  for (const [tag, rows] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) {
    parts.push('', `## ${tag}`, '', table(['Route', 'What it does', 'Scope'], rows));
  }
  return `${parts.join('\n')}\n`;
}
