import type { Browser, Page } from 'playwright-core';

import { browserJourneyMs, launchChromium, screenshotsOf } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The API reference page in Chromium: Swagger UI renders the OpenAPI document from our own
 * origin, with no request elsewhere and no Content Security Policy violation.
 */
describe('/api/docs in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const screenshot = screenshotsOf(() => page);

  beforeAll(async () => {
    server = await startTestServer('api-docs-browser');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  it(
    'renders every operation of the document, under its policy, from our origin alone',
    async () => {
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const violations: string[] = [];
      const elsewhere: string[] = [];
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
      });
      page.on('request', (request) => {
        if (new URL(request.url()).origin !== new URL(server.url).origin && !request.url().startsWith('data:')) elsewhere.push(request.url());
      });
      const response = await page.goto(`${server.url}/api/docs`);
      expect(response?.status()).toBe(200);
      await page.waitForSelector('.swagger-ui .info .title');
      expect(await page.textContent('.swagger-ui .info .title')).toContain('oidc-identity Management API');
      // Every group of operations is listed, folded; opening one shows its operations with their summaries.
      // (Expressions as text: they run in the page, and this project's types have no DOM.)
      await page.waitForFunction("document.querySelectorAll('.opblock-tag').length > 15");
      const tags = await page.$$eval('.opblock-tag', (nodes) => nodes.map((node) => node.getAttribute('data-tag')));
      expect(tags).toEqual(expect.arrayContaining(['users', 'roles', 'hooks', 'impersonations', 'subject-tokens', 'configs']));
      await page.click('.opblock-tag[data-tag="users"]');
      await page.waitForFunction(
        "[...document.querySelectorAll('.opblock-summary-description')].some((node) => node.textContent === 'List the roles of a user')",
      );
      await screenshot('api-docs');
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
      expect(elsewhere).toEqual([]);
      // Swagger UI renders the whole document, which took over 30 s at a load of 12.
    },
    browserJourneyMs,
  );
});
