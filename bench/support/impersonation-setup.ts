import autocannon from 'autocannon';

import { benchResource } from './fixtures.js';
import type { ServerChild } from './processes.js';
import { admin, api, basic, baseUrl, tokenRequest } from './token-load.js';

/** A Management API token (they live 10 minutes: each round asks for its own). */
export const managementToken = (identity: ServerChild) =>
  tokenRequest(identity, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
    grant_type: 'client_credentials',
    resource: `${baseUrl}/api`,
    scope: 'all',
  });

/** The deployment a bench server is part of, set up through the Management API as an operator would. */
export async function setUpImpersonation(identity: ServerChild) {
  const adminToken = await managementToken(identity);
  const resource = await api(identity, adminToken, 'POST', '/api/resources', { name: 'Bench API', indicator: benchResource });
  const scope = await api(identity, adminToken, 'POST', `/api/resources/${resource.id}/scopes`, { name: 'read:data' });
  const role = await api(identity, adminToken, 'POST', '/api/roles', { name: 'reader', scopeIds: [scope.id] });
  const target = await api(identity, adminToken, 'POST', '/api/users', { username: 'target' });
  await api(identity, adminToken, 'POST', `/api/users/${target.id}/roles`, { roleIds: [role.id] });
  const app = await api(identity, adminToken, 'POST', '/api/applications', {
    name: 'support console',
    type: 'Traditional',
    customClientMetadata: { allowTokenExchange: true },
    oidcClientMetadata: { redirectUris: ['http://localhost/callback'], postLogoutRedirectUris: [] },
  });
  return { userId: target.id, appAuth: basic(app.id, app.secret) };
}

/**
 * Up to `amount` subject tokens for `userId`, through the Management API at `connections` at once,
 * and how many requests were answered otherwise, by status (the embedded engine answers too slowly
 * past a few thousand records at 50 connections: those requests are 503, and the round goes on).
 */
export async function issueSubjectTokens(server: ServerChild, token: string, userId: string, amount: number, connections: number) {
  const tokens: string[] = [];
  const refused = new Map<number, number>();
  const result = await autocannon({
    url: server.url,
    connections: Math.min(connections, amount),
    amount,
    timeout: 60,
    requests: [
      {
        method: 'POST',
        path: '/api/subject-tokens',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId, reason: 'benchmark', ticketId: 'BENCH-1' }),
        onResponse: (status: number, body: string) => {
          if (status === 201) tokens.push((JSON.parse(body) as { subjectToken: string }).subjectToken);
          else refused.set(status, (refused.get(status) ?? 0) + 1);
        },
      },
    ],
  });
  if (tokens.length === 0 || result.errors > 0)
    throw new Error(`issuance: ${tokens.length} of ${amount} subject tokens (${result.non2xx} not 2xx, ${result.errors} errors)`);
  return { tokens, refused: [...refused].map(([status, count]) => `${count} answered ${status}`).join(', ') };
}
