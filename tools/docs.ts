/**
 * `npm run docs`: writes the reference pages of docs/ from the sources they describe (the settings'
 * schemas, the events' schemas, the Management API's routes), and the examples' code the guides
 * include; `--check` only says which differ.
 * The Management API's page is read from a server started on the embedded engine, as a user's is.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { loadSettings } from '../settings.js';
import { silentLogger } from '../lib/logger.js';
import { startStandaloneServer } from '../standalone.js';
import { renderConfiguration } from './reference/configuration.js';
import { renderEvents } from './reference/events.js';
import { renderManagementApi, type OpenApiDocument } from './reference/management-api.js';
import { renderIncludes } from './reference/includes.js';

/** The repository's docs/ folder, from the source or from its build in dist/. */
const docs = new URL(import.meta.url.includes('/dist/') ? '../../docs/' : '../docs/', import.meta.url);
const repository = new URL('../', docs);
/** A guide with its included code filled from the sources it names. */
const withIncludes = (name: string) => async () =>
  renderIncludes(await readFile(new URL(name, docs), 'utf8'), (path) => readFile(new URL(path, repository), 'utf8'));

async function managementApiDocument(): Promise<OpenApiDocument> {
  const server = await startStandaloneServer(loadSettings({ PORT: '0', DATA_DIR: '' }), { logger: silentLogger });
  try {
    return (await (await fetch(`http://localhost:${server.port}/api/openapi.json`)).json()) as OpenApiDocument;
  } finally {
    await server.close();
  }
}

const pages: Array<[string, () => string | Promise<string>]> = [
  ['configuration.md', renderConfiguration],
  ['webhook-events.md', renderEvents],
  ['management-api-reference.md', async () => renderManagementApi(await managementApiDocument())],
  ['embedding.md', withIncludes('embedding.md')],
];

const check = process.argv.includes('--check');
let stale = 0;
for (const [name, render] of pages) {
  const path = fileURLToPath(new URL(name, docs));
  const wanted = await render();
  const present = await readFile(path, 'utf8').catch(() => '');
  if (present === wanted) continue;
  stale += 1;
  if (check) console.error(`docs/${name} differs from its source: run npm run docs`);
  else await writeFile(path, wanted);
  if (!check) console.log(`wrote docs/${name}`);
}
process.exitCode = check && stale > 0 ? 1 : 0;
