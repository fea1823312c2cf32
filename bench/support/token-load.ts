/** Load on the token endpoint, and the requests that set a benchmark up (`run.ts`, `tokens.ts`). */
import autocannon from 'autocannon';
import type { Db } from 'mongodb';

import { subjectTokenSeal } from '../../impersonation/subject-token.js';
import { loadProviderSecrets } from '../../provider/keys.js';
import { sealSubjectToken } from '../../impersonation/subject-tokens.js';
import { accessTokenType, tokenExchangeGrantType } from '../../provider/token-types.js';
import { benchResource } from './fixtures.js';
import type { ServerChild } from './processes.js';

export const admin = { BOOTSTRAP_CLIENT_ID: 'bench-admin', BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789' };
export const baseUrl = 'http://id.bench.test';
export const actorPassword = 'correct horse battery staple';
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The custom-claims function of docs/impersonation.md, stored as the operator would. */
export const customClaimsScript = `const getCustomJwtClaims = async ({ token, context, environmentVariables }) => {
  if (context.grant?.type === 'urn:ietf:params:oauth:grant-type:token-exchange') {
    return { impersonation_context: context.grant.subjectTokenContext, tier: environmentVariables.TIER };
  }
  return {};
};`;

export interface Load {
  count: number;
  cpuMicros: number;
  commands: number;
  p50: number;
  p99: number;
  rps: number;
}

/** Sends `amount` POSTs to the token endpoint, each with the body `body(i)`, and measures the server meanwhile. */
export async function load(server: ServerChild, amount: number, authorization: string, body: (index: number) => string, connections = 50): Promise<Load> {
  let next = 0;
  const before = await server.stats();
  const result = await autocannon({
    url: server.url,
    connections: Math.min(connections, amount),
    amount,
    timeout: 60,
    requests: [
      {
        method: 'POST',
        path: '/oidc/token',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (request) => ({ ...request, body: body(next++) }),
      },
    ],
  });
  const after = await server.stats();
  if (result.non2xx > 0 || result.errors > 0) {
    // One more, by hand, to say what the answers were.
    const sample = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: body(0),
    });
    throw new Error(`${server.kind}: ${result.non2xx} answers were not 2xx, ${result.errors} errors; one of them: ${sample.status} ${await sample.text()}`);
  }
  return {
    count: amount,
    cpuMicros: after.cpuMicros - before.cpuMicros,
    commands: after.commands - before.commands,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
  };
}

export const combine = (loads: Load[]): Load => ({
  count: loads.reduce((sum, l) => sum + l.count, 0),
  cpuMicros: loads.reduce((sum, l) => sum + l.cpuMicros, 0),
  commands: loads.reduce((sum, l) => sum + l.commands, 0),
  // Rounds are alike: their mean latency and rate stand for the whole.
  p50: loads.reduce((sum, l) => sum + l.p50, 0) / loads.length,
  p99: Math.max(...loads.map((l) => l.p99)),
  rps: loads.reduce((sum, l) => sum + l.rps, 0) / loads.length,
});

/** What the benchmarks' set-up reads of a Management API answer: text fields (the id of what it made, a secret); none for a 204. */
export type ApiAnswer = Record<string, string>;

export async function api(server: ServerChild, token: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response.status === 204 ? {} : (response.json() as Promise<ApiAnswer>);
}

export async function tokenRequest(server: ServerChild, authorization: string, params: Record<string, string>) {
  const response = await fetch(`${server.url}/oidc/token`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * Subject tokens sealed and written straight to the database, as `POST /api/subject-tokens` would
 * (its issuance is not what is measured): sealed with the deployment's key and the user's roles.
 */
export async function seedSubjectTokens(db: Db, count: number, userId: string, clientId: string) {
  const seal = subjectTokenSeal((await loadProviderSecrets(db)).mfaKey);
  const roleIds = (await db.collection<{ userId: string; roleId: string }>('users_roles').find({ userId }).toArray()).map(({ roleId }) => roleId);
  const terms = { context: { ticket: 'BENCH-1', reason: 'benchmark' } };
  const issued = Array.from({ length: count }, () => sealSubjectToken(seal, { userId, roleIds }, terms, clientId, 600));
  await db.collection('subject_tokens').insertMany(issued.map(({ document }) => document as never));
  return issued.map(({ token }) => token);
}

export const exchangeBody = (token: string, actorToken?: string) =>
  new URLSearchParams({
    grant_type: tokenExchangeGrantType,
    subject_token: token,
    subject_token_type: accessTokenType,
    resource: benchResource,
    scope: 'read:data',
    ...(actorToken && { actor_token: actorToken, actor_token_type: accessTokenType }),
  }).toString();
