/**
 * What an organization token costs (`npm run bench:organizations`; BENCHMARKS.md, "What an
 * organization token costs", issue 39). Our server runs with `npm start`'s settings as a child
 * pinned to core 0. At each load (4, 16 and 50 concurrent requests), rounds take turns:
 *   - a user's refresh for an API resource (the plain one), then with `organization_id` (the
 *     organization's own token), then with `organization_id` and the resource;
 *   - a machine-to-machine `client_credentials` token for the resource (plain), then with
 *     `organization_id`, then with both.
 * The figure is the server's CPU per token, and each organization variant's ratio to its plain one.
 *
 *   BENCH_LOADS=4,16,50 BENCH_ROUNDS=3 BENCH_ROUND_SIZE=400 (the defaults); MONGODB_URI=... for a real MongoDB
 */
import os from 'node:os';

import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { TestBrowser } from '../spec/support/browser.js';
import { benchResource } from './support/fixtures.js';
import { pinLoadGenerator, pinning, startServerChild } from './support/processes.js';
import { authorizationCode } from './support/sign-in.js';
import { admin, api, basic, baseUrl, load } from './support/token-load.js';

const loads = (process.env.BENCH_LOADS ?? '4,16,50').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 400);
const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const organizationsResource = 'urn:logto:resource:organizations';

async function main() {
  pinLoadGenerator();
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const started = performance.now();
  const say = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${message}`);
  const server = await startServerChild('identity', {
    ACCESS_TOKEN_ALG: 'ES256',
    MONGODB_URI: uri,
    BENCH_DB: `organizations_${Date.now()}`,
    BASE_URL: baseUrl,
    ...admin,
  });
  const lines: string[] = [];
  try {
    const setUp = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { authorization: basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: `${baseUrl}/api`, scope: 'all' }),
    });
    const bearer = ((await setUp.json()) as { access_token: string }).access_token;
    const call = (method: string, path: string, body?: unknown) => api(server, bearer, method, path, body);

    // An API with two permissions: the user's own role gives one, an organization role the other.
    const resource = await call('POST', '/api/resources', { name: 'Bench API', indicator: benchResource });
    const read = await call('POST', `/api/resources/${resource.id}/scopes`, { name: 'read:data' });
    const write = await call('POST', `/api/resources/${resource.id}/scopes`, { name: 'write:data' });
    const reader = await call('POST', '/api/roles', { name: 'reader', type: 'User', scopeIds: [read.id] });
    const machineReader = await call('POST', '/api/roles', { name: 'machine reader', type: 'MachineToMachine', scopeIds: [read.id] });
    const orgScope = await call('POST', '/api/organization-scopes', { name: 'org:read' });
    const member = await call('POST', '/api/organization-roles', { name: 'member', organizationScopeIds: [orgScope.id], resourceScopeIds: [write.id] });
    const machineMember = await call('POST', '/api/organization-roles', {
      name: 'machine member',
      type: 'MachineToMachine',
      organizationScopeIds: [orgScope.id],
      resourceScopeIds: [write.id],
    });
    const organization = await call('POST', '/api/organizations', { name: 'Bench Inc' });
    // Other organizations, so that the member is not alone in the store.
    for (let i = 0; i < 20; i += 1) await call('POST', '/api/organizations', { name: `Other ${i}` });

    const user = await call('POST', '/api/users', { username: 'bench_member', password });
    await call('POST', `/api/users/${user.id}/roles`, { roleIds: [reader.id] });
    await call('POST', `/api/organizations/${organization.id}/users`, { userIds: [user.id] });
    await call('POST', `/api/organizations/${organization.id}/users/${user.id}/roles`, { organizationRoleIds: [member.id] });
    const machine = await call('POST', '/api/applications', { name: 'Bench machine', type: 'MachineToMachine' });
    await call('POST', `/api/applications/${machine.id}/roles`, { roleIds: [machineReader.id] });
    await call('POST', `/api/organizations/${organization.id}/applications`, { applicationIds: [machine.id] });
    await call('POST', `/api/organizations/${organization.id}/applications/${machine.id}/roles`, { organizationRoleIds: [machineMember.id] });

    // A confidential web application's refresh token (it does not rotate: one token serves every request).
    const web = await call('POST', '/api/applications', {
      name: 'Web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const webAuth = basic(web.id, web.secret);
    const { code, verifier } = await authorizationCode(new TestBrowser(server.url, '198.51.100.1'), {
      clientId: web.id,
      redirectUri,
      username: 'bench_member',
      password,
      params: {
        scope: 'openid offline_access urn:logto:scope:organizations org:read read:data write:data',
        resource: [benchResource, organizationsResource],
        prompt: 'consent',
      },
    });
    const redeemed = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { authorization: webAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }),
    });
    const refreshToken = ((await redeemed.json()) as { refresh_token?: string }).refresh_token;
    if (!refreshToken) throw new Error('no refresh token');
    const machineAuth = basic(machine.id, machine.secret);

    const form = (params: Record<string, string>) => () => new URLSearchParams(params).toString();
    const refresh = (extra: Record<string, string>) => form({ grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });
    const credentials = (extra: Record<string, string>) => form({ grant_type: 'client_credentials', scope: 'org:read read:data write:data', ...extra });
    const variants = [
      { name: 'refresh, plain (resource)', auth: webAuth, body: refresh({ resource: benchResource }) },
      { name: 'refresh, organization token', auth: webAuth, body: refresh({ organization_id: organization.id }), plain: 0 },
      { name: 'refresh, organization + resource', auth: webAuth, body: refresh({ organization_id: organization.id, resource: benchResource }), plain: 0 },
      { name: 'client_credentials, plain (resource)', auth: machineAuth, body: credentials({ resource: benchResource }) },
      { name: 'client_credentials, organization token', auth: machineAuth, body: credentials({ organization_id: organization.id }), plain: 3 },
      {
        name: 'client_credentials, organization + resource',
        auth: machineAuth,
        body: credentials({ organization_id: organization.id, resource: benchResource }),
        plain: 3,
      },
    ];
    say('set up; warming');
    for (const variant of variants) await load(server, roundSize, variant.auth, variant.body, 16);

    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    for (const connections of loads) {
      const cpu = variants.map(() => [] as number[]);
      for (let round = 1; round <= rounds; round += 1) {
        for (const [index, variant] of variants.entries())
          cpu[index]!.push((await load(server, roundSize, variant.auth, variant.body, connections)).cpuMicros / roundSize / 1000);
        say(`${connections} connections, round ${round}: ${variants.map(({ name }, index) => `${name} ${cpu[index]!.at(-1)!.toFixed(2)} ms`).join('; ')}`);
      }
      for (const [index, variant] of variants.entries()) {
        const ratios = variant.plain === undefined ? undefined : cpu[index]!.map((value, round) => value / cpu[variant.plain!]![round]!);
        lines.push(
          `| ${connections} | ${variant.name} | ${median(cpu[index]!).toFixed(2)} ms | ${
            ratios ? `**${median(ratios).toFixed(2)}×** (rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')})` : '—'
          } |`,
        );
      }
    }
  } finally {
    await server.stop();
    await embedded?.stop();
  }
  console.log(
    `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ` +
      `${new Date().toISOString().slice(0, 10)}; ${pinning ? 'server pinned to core 0, load generator to core 1' : 'no CPU pinning'}; ` +
      `${rounds} rounds of ${roundSize} tokens for each variant at each load; ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log('| concurrent requests | token | CPU per token (median) | against its plain one |\n|---|---|---|---|');
  for (const line of lines) console.log(line);
  process.exit(0);
}

await main();
