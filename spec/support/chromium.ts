import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { chromium, type Browser, type Page } from 'playwright-core';

import { relyingPartyUris, startRelyingParty, type RelyingParty } from '../../examples/relying-party.js';
import type { TestServer } from './server.js';

/** Debian's Chromium, installed by `.ci/run` (apt-get install chromium); never a downloaded browser. */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium), as .ci/run does`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
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

/** What axe-core (WCAG 2.x A and AA, and 2.2 AA) finds wrong with the page as it is: each rule's id, impact and the elements. */
export async function accessibilityViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const results = (await page.evaluate(
    `${axeSource}; axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`,
  )) as { violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> };
  return results.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, targets: nodes.map(({ target }) => target.join(' ')) }));
}
