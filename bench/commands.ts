/**
 * The database commands each common request sends (`npm run bench:commands`; BENCHMARKS.md,
 * "Commands per request"), counted with the driver's command monitoring: a sign-in through the
 * pages (from the authorization request to the code), a token refresh, `POST /api/users` and a
 * token exchange. Each request runs BENCH_COMMAND_RUNS times after a warm-up; the figure is the
 * median count, and the commands of the last run are listed by name and collection.
 */
import type { CommandStartedEvent } from 'mongodb';

import { loadSettings } from '../settings.js';
import { silentLogger } from '../lib/logger.js';
import { startStandaloneServer } from '../standalone.js';
import { TestBrowser } from '../spec/support/browser.js';
import { authorizationCode, refreshTokenOf } from './support/sign-in.js';
import { basic, managementClient } from './support/management-client.js';

const runs = Number(process.env.BENCH_COMMAND_RUNS ?? 5);
const admin = { BOOTSTRAP_CLIENT_ID: 'commands-admin', BOOTSTRAP_CLIENT_SECRET: 'commands-admin-secret-0123456789' };
const redirectUri = 'http://127.0.0.1:9/callback';
const resource = 'https://orders.commands.test';
const password = 'correct horse battery staple';

// Nothing polls while a request is counted: no delivery worker, and the caches' and the ledger's looks a minute apart.
const quiet = { HOOKS_DELIVERY: 'false', CACHE_REFRESH_MS: '600000', IMPERSONATION_LEDGER_POLL_MS: '600000', CHANGE_STREAMS: 'false' };
const server = await startStandaloneServer(
  { ...loadSettings({ PORT: '0', DATA_DIR: '', TRUST_PROXY: '1', ...quiet, ...admin }), mongodbUri: process.env.MONGODB_URI },
  { logger: silentLogger, dbName: `commands_${Date.now()}`, mongoClientOptions: { monitorCommands: true } },
);
const seen: string[] = [];
const ignored = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo']);
server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
  if (ignored.has(event.commandName)) return;
  const target: unknown = event.command[event.commandName];
  seen.push(`${event.commandName} ${typeof target === 'string' ? target : ''}`.trim());
});

const { tokenRequest, api } = await managementClient(server.url, { id: admin.BOOTSTRAP_CLIENT_ID, secret: admin.BOOTSTRAP_CLIENT_SECRET });

const web = await api('POST', '/applications', {
  name: 'Web',
  type: 'Traditional',
  oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
});
const support = await api('POST', '/applications', {
  name: 'Support',
  type: 'Traditional',
  customClientMetadata: { allowTokenExchange: true },
  oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
});
const orders = await api('POST', '/resources', { name: 'Orders', indicator: resource });
const read = await api('POST', `/resources/${orders.id}/scopes`, { name: 'read:orders' });
const role = await api('POST', '/roles', { name: 'reader', scopeIds: [read.id] });
const user = await api('POST', '/users', { username: 'bench_user', password });
await api('POST', `/users/${user.id}/roles`, { roleIds: [role.id] });
let refreshToken = await refreshTokenOf(new TestBrowser(server.url, '198.51.100.1'), tokenRequest, {
  clientId: web.id!,
  clientSecret: web.secret!,
  redirectUri,
  username: 'bench_user',
  password,
});
let people = 0;
let created = 0;

const requests: Record<string, () => Promise<unknown>> = {
  'sign-in through the pages': async () => {
    people += 1;
    const person = new TestBrowser(server.url, `198.51.${100 + Math.floor(people / 250)}.${people % 250}`);
    await authorizationCode(person, { clientId: web.id!, redirectUri, username: 'bench_user', password });
  },
  'token refresh': async () => {
    refreshToken =
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, basic(web.id!, web.secret!))).refresh_token ?? refreshToken;
  },
  'POST /api/users': () => api('POST', '/users', { username: `person_${(created += 1)}`, password }),
  'token exchange': async () => {
    const { subjectToken } = await api('POST', '/subject-tokens', { userId: user.id });
    await tokenRequest(
      {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: subjectToken!,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource,
      },
      basic(support.id!, support.secret!),
    );
  },
};

console.log(
  `engine: ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'embedded'} (transactions ${server.database.transactions ? 'on' : 'off'}); ${new Date().toISOString()}`,
);
console.log('| request | commands (median) | by kind, last run |\n|---|---|---|');
for (const [name, request] of Object.entries(requests)) {
  await request();
  const counts: number[] = [];
  let last: string[] = [];
  for (let run = 0; run < runs; run += 1) {
    // What the previous request left running in the background (a delivery, a sweep) settles first.
    await new Promise((resolve) => setTimeout(resolve, 200));
    seen.length = 0;
    await request();
    counts.push(seen.length);
    last = [...seen];
  }
  const byKind = new Map<string, number>();
  for (const command of last) byKind.set(command, (byKind.get(command) ?? 0) + 1);
  const median = [...counts].sort((a, b) => a - b)[Math.floor(counts.length / 2)];
  console.log(`| ${name} | ${median} | ${[...byKind].map(([kind, count]) => `${kind} ×${count}`).join(', ')} |`);
}
await server.close();
process.exit(0);
