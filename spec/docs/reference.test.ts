import { readFile } from 'node:fs/promises';

import { Validator } from '@seriousme/openapi-schema-validator';

import { asOpenApi30 } from '../../management/openapi-30.js';

import { renderConfiguration } from '../../tools/reference/configuration.js';
import { renderEvents } from '../../tools/reference/events.js';
import { renderManagementApi } from '../../tools/reference/management-api.js';
import { renderIncludes } from '../../tools/reference/includes.js';
import { coreEnvironment } from '../../lib/config.js';
import { hookEnvironment } from '../../hooks/settings.js';
import { experienceEnvironment } from '../../experience/settings.js';
import { eventSchemas } from '../../hooks/event-schemas/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

const page = (name: string) => readFile(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The generated pages of docs/ are what `npm run docs` makes of their sources now: a change to a source without them fails here. */
describe('the generated reference pages', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('reference-docs');
  });
  afterAll(() => server.close());

  it('docs/configuration.md lists every setting, each with its meaning', async () => {
    expect(await page('configuration.md')).toBe(renderConfiguration());
    const undescribed = Object.entries({ ...coreEnvironment, ...hookEnvironment, ...experienceEnvironment })
      .filter(([, rule]) => !(rule as { description?: string }).description)
      .map(([name]) => name);
    expect(undescribed).toEqual([]);
  });

  it('docs/webhook-events.md lists every event a hook can subscribe to', async () => {
    const text = await page('webhook-events.md');
    expect(text).toBe(renderEvents());
    for (const event of eventSchemas().keys()) expect(text).toContain(`## \`${event}\``);
  });

  it('docs/management-api-reference.md lists every route the server serves', async () => {
    const document = (await server.api('GET', '/api/openapi.json')).body;
    const text = await page('management-api-reference.md');
    expect(text).toBe(renderManagementApi(document));
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>))
      for (const method of Object.keys(operations)) expect(text).toContain(`\`${method.toUpperCase()} ${path}\``);
  });

  it("the API's OpenAPI documents are valid by the specification's own schemas: 3.1 at /api/openapi.json, 3.0 at Logto's /api/swagger.json", async () => {
    const current = (await server.api('GET', '/api/openapi.json', { token: null })).body;
    const logtos = (await server.api('GET', '/api/swagger.json', { token: null })).body;
    expect([current.openapi, logtos.openapi]).toEqual(['3.1.0', '3.0.3']);
    for (const document of [current, logtos]) {
      const { valid, errors } = await new Validator().validate(document);
      expect({ openapi: document.openapi, valid, errors: valid ? undefined : JSON.stringify(errors).slice(0, 2000) }).toEqual({
        openapi: document.openapi,
        valid: true,
        errors: undefined,
      });
    }
    // The same operations in both.
    expect(Object.keys(logtos.paths).sort()).toEqual(Object.keys(current.paths).sort());
  });

  it('turns 3.1 schemas into 3.0 ones keyword by keyword, leaving properties that happen to bear a keyword’s name', () => {
    const converted = asOpenApi30({
      openapi: '3.1.0',
      webhooks: {},
      components: {
        schemas: {
          X: { type: 'object', properties: { if: { type: ['string', 'null'] }, const: { const: 1 }, dependencies: { type: 'integer', exclusiveMinimum: 0 } } },
        },
      },
    });
    expect(converted).toEqual({
      openapi: '3.0.3',
      components: {
        schemas: {
          X: {
            type: 'object',
            properties: { if: { type: 'string', nullable: true }, const: { enum: [1] }, dependencies: { type: 'integer', minimum: 0, exclusiveMinimum: true } },
          },
        },
      },
    });
  });

  it('docs/embedding.md shows the code of examples/embedded.ts as it is, so that what a reader copies is what the tests run', async () => {
    const text = await page('embedding.md');
    expect(text).toBe(await renderIncludes(text, (path) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8')));
    expect(text).toContain('const identity = await createIdentity({');
    expect(text).toContain("app.use(mountApp('/oidc', provider, { strip: true }));");
  });
});
