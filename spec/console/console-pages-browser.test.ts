import type { Browser, Page } from 'playwright-core';

import { consoleBuiltIn } from '../../console/built-in.js';
import { browserJourneyMs, launchChromium, pageProblems, screenshotsOf } from '../support/chromium.js';
import { totpAt } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

const password = 'console pages password 9';

/**
 * Every kind of console page in Chromium (issue 42), each with something on it: axe-core's WCAG
 * 2.0–2.2 A/AA checks at 1280 and 390 px, light and dark, and the phone layout's (no sideways
 * scroll, fields and buttons large enough). The workflows are in the other browser suites; here,
 * the pages they do not pass through.
 */
describe('every console page in a real browser (Chromium, axe-core)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer('console-pages', { BRAND_NAME: 'Acme' });
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    const create = server.create;
    const admin = await create('/api/users', { username: 'page_admin', password });
    await create(`/api/users/${admin.id}/roles`, { roleIds: [consoleBuiltIn.roleId] });
    ids.secret = (await create(`/api/users/${admin.id}/mfa-verifications`, { type: 'Totp' })).secret;
    const resource = await create('/api/resources', { name: 'Catalog', indicator: 'https://catalog.test' });
    ids.resource = resource.id;
    await create(`/api/resources/${resource.id}/scopes`, { name: 'catalog:read', description: 'Read the catalog' });
    ids.role = (await create('/api/roles', { name: 'Reader', description: 'Reads', type: 'User' })).id;
    ids.machineRole = (await create('/api/roles', { name: 'Robot', description: 'Machines', type: 'MachineToMachine' })).id;
    ids.machine = (await create('/api/applications', { name: 'Sync robot', type: 'MachineToMachine' })).id;
    await create(`/api/applications/${ids.machine}/roles`, { roleIds: [ids.machineRole] });
    ids.web = (
      await create('/api/applications', { name: 'Storefront', type: 'Traditional', oidcClientMetadata: { redirectUris: ['https://store.test/cb'] } })
    ).id;
    const member = await create('/api/users', { username: 'page_member', name: 'Mia Member', primaryEmail: 'mia@example.com', customData: { tier: 'gold' } });
    ids.member = member.id;
    await create(`/api/users/${member.id}/mfa-verifications`, { type: 'Totp' });
    const organizationRole = await create('/api/organization-roles', { name: 'Editor' });
    await create('/api/organization-scopes', { name: 'pages:edit' });
    ids.organization = (await create('/api/organizations', { name: 'Umbrella' })).id;
    expect((await server.api('POST', `/api/organizations/${ids.organization}/users`, { body: { userIds: [member.id] } })).status).toBe(201);
    await create(`/api/organizations/${ids.organization}/users/${member.id}/roles`, { organizationRoleIds: [organizationRole.id] });
    ids.connector = (await create('/api/connectors', { connectorId: 'github-universal', config: { clientId: 'gh', clientSecret: 'secret' } })).id;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Username, email or phone').fill('page_admin');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from your authenticator app').fill(await totpAt(ids.secret!));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  const shoot = screenshotsOf(() => page);

  /** Opens a console page and answers what is wrong with it, named by its path. */
  async function problemsAt(path: string): Promise<string[]> {
    const answer = await page.goto(`${server.url}/console${path}`);
    expect(answer?.status()).toBe(200);
    return (await pageProblems(page)).map((problem) => `${path}: ${problem}`);
  }
  const all = async (paths: string[]) => {
    const problems: string[] = [];
    for (const path of paths) problems.push(...(await problemsAt(path)));
    return problems;
  };

  it(
    'users, applications, API resources and roles',
    async () => {
      expect(
        await all([
          `/users/${ids.member}`,
          `/users/${ids.member}/impersonate`,
          `/users/${ids.member}/password`,
          `/users/${ids.member}/sign-out-everywhere`,
          '/applications/new',
          `/applications/${ids.machine}`,
          `/applications/${ids.web}/edit`,
          `/applications/${ids.web}/look`,
          '/resources',
          '/resources/new',
          `/resources/${ids.resource}`,
          '/roles',
          '/roles/new',
          `/roles/${ids.role}`,
          `/roles/${ids.machineRole}`,
        ]),
      ).toEqual([]);
      await page.goto(`${server.url}/console/users/${ids.member}`);
      await shoot('console-user');
    },
    browserJourneyMs,
  );

  it(
    'organizations, sign-in settings and connectors',
    async () => {
      expect(
        await all([
          '/organizations',
          '/organizations/new',
          `/organizations/${ids.organization}`,
          '/organization-template',
          '/sign-in-settings',
          '/connectors',
          '/connectors/new',
          `/connectors/${ids.connector}`,
        ]),
      ).toEqual([]);
      await page.goto(`${server.url}/console/sign-in-settings`);
      await shoot('console-sign-in-settings');
    },
    browserJourneyMs,
  );

  it(
    'keys, token claims, the impersonation policy and audit, the change log',
    async () => {
      expect(
        await all([
          '/keys',
          '/keys/private-keys/rotate',
          '/jwt-customizers',
          '/jwt-customizers/access-token',
          '/impersonation-policy',
          '/impersonations',
          '/impersonations/verify',
          '/changes',
        ]),
      ).toEqual([]);
    },
    browserJourneyMs,
  );
});
