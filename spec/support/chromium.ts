import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { chromium, type Browser, type Page } from 'playwright-core';

import { relyingPartyUris, startRelyingParty, type RelyingParty } from '../../examples/relying-party.js';
import type { TestServer } from './server.js';

/**
 * The bound of a browser journey (a test that walks several pages, each checked): time for a machine
 * with a load of 8 to 12, where such a test took minutes. The browser's own waits have none
 * (`launchChromium`), so that this is the one that ends a stuck test.
 */
export const browserJourneyMs = 240_000;

/** Debian's Chromium, installed by `.ci/run` (apt-get install chromium); never a downloaded browser. */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium), as .ci/run does`);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // A wait in a page is bounded by its test alone, not by Playwright's 30 s per action: on a busy
  // machine a page can take longer than that to render (Swagger UI's whole document did at a load
  // of 12), and is then slow, not stuck. `newPage` makes its context through `newContext`.
  // A function a test runs in the page (`page.evaluate`) is sent as its source, which tsx compiled
  // with calls to its `__name` helper (it keeps functions' names): the page gets one that does nothing.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(0);
    await context.addInitScript('globalThis.__name = (target) => target;');
    return context;
  };
  return browser;
}

/**
 * Where a browser test's screenshots go: a folder of this run's own, so that a test run leaves the
 * tracked `docs/screenshots` alone; `npm run docs:screenshots` sets SCREENSHOTS_DIR to refresh them.
 * Answers a function that takes one of `page`.
 */
export function screenshotsOf(page: () => Page): (name: string) => Promise<Buffer> {
  const folder = process.env.SCREENSHOTS_DIR ? resolve(process.env.SCREENSHOTS_DIR) : mkdtempSync(join(tmpdir(), 'oidc-identity-screenshots-'));
  mkdirSync(folder, { recursive: true });
  return (name) => page().screenshot({ path: join(folder, `${name}.png`) });
}

/** The example web app (examples/relying-party.ts), registered with `server` as "Example web app" once its port is known. */
export async function startExampleApp(server: TestServer): Promise<RelyingParty> {
  const application = await server.create('/api/applications', {
    name: 'Example web app',
    type: 'Traditional',
    oidcClientMetadata: relyingPartyUris('http://localhost:1'),
  });
  const secret = await server.create(`/api/applications/${application.id}/secrets`, { name: 'browser-test' });
  const rp = await startRelyingParty({ identityUrl: server.url, clientId: application.id, clientSecret: secret.value, port: 0 });
  await server.api('PATCH', `/api/applications/${application.id}`, { body: { oidcClientMetadata: relyingPartyUris(rp.url) } });
  return rp;
}

/** axe-core's source, read once: evaluated in the page through the DevTools protocol, which the page's CSP does not govern. */
let axeSource: string | undefined;

/** axe-core's rules that read colours: all a change of colour scheme can alter (see `pageProblems`). */
const colourRules = ['color-contrast', 'link-in-text-block'];

/**
 * What axe-core (WCAG 2.x A and AA, and 2.2 AA) finds wrong with the page as it is: each rule's id,
 * impact and the elements. `only` narrows the run to those rules. axe is put into each document once.
 */
export async function accessibilityViolations(page: Page, only?: string[]): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(axeSource);
  const runOnly = only ? { type: 'rule', values: only } : { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] };
  const results = (await page.evaluate(`axe.run(document, { runOnly: ${JSON.stringify(runOnly)} })`)) as {
    violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
  };
  return results.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, targets: nodes.map(({ target }) => target.join(' ')) }));
}

/** What the phone layout must hold, read in the page: each problem as a sentence. */
const layoutProblems = `(() => {
  const problems = [];
  const visible = (element) => element.getClientRects().length > 0 && getComputedStyle(element).visibility !== 'hidden';
  if (document.documentElement.scrollWidth > window.innerWidth) problems.push('scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + window.innerWidth);
  const main = document.querySelector('main').getBoundingClientRect();
  for (const link of document.querySelectorAll('nav a, a.button, p.resend a')) {
    const box = link.getBoundingClientRect();
    if (box.right > main.right + 0.5 || box.left < main.left - 0.5) problems.push('link out of the card: ' + link.textContent.trim());
    if (link.closest('nav') && getComputedStyle(link).whiteSpace !== 'nowrap') problems.push('link may wrap: ' + link.textContent.trim());
    if (box.height < 24) problems.push('link target under 24 px: ' + link.textContent.trim());
  }
  for (const input of document.querySelectorAll('input:not([type=hidden])')) {
    if (visible(input) && input.getBoundingClientRect().height < 44) problems.push('field under 44 px: ' + input.id);
  }
  for (const button of document.querySelectorAll('button')) {
    const least = button.classList.contains('link') ? 24 : 44;
    if (visible(button) && button.getBoundingClientRect().height < least) problems.push('button under ' + least + ' px: ' + button.textContent.trim());
  }
  return problems;
})()`;

/**
 * What is wrong with a sign-in page as it is now, rendered four ways: at 1280 px and at a phone's
 * 390 px, each in the light and the dark scheme. axe-core's WCAG 2.0–2.2 A/AA violations: every
 * rule in the light scheme, and in the dark one the rules that read colours, since the dark scheme
 * changes colours alone (spec/experience/colour-schemes.test.ts holds the stylesheets to that).
 * At 390 px also the layout's problems (sideways scroll, a link out of the card or wrapping, a
 * field or button under 44 px, a link under 24 px). Leaves the page at 1280 px, light.
 */
export async function pageProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  // Measured as the user sees it: the stylesheet, images and fonts in (a page whose field was found
  // early, on a loaded machine, is not yet laid out: axe then measures unstyled buttons as too small).
  await page.waitForLoadState('load');
  await page.evaluate('document.fonts.ready.then(() => true)');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const where = `${width}px ${colorScheme}`;
      const dark = colorScheme === 'dark';
      for (const { id, targets } of await accessibilityViolations(page, dark ? colourRules : undefined))
        problems.push(`${where}: ${id} at ${targets.join(', ')}`);
      if (width === 390) for (const problem of (await page.evaluate(layoutProblems)) as string[]) problems.push(`${where}: ${problem}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  return problems;
}
