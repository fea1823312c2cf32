/**
 * The integrator's own backend of the impersonation flow (step 1). It is not part of
 * oidc-identity: it decides who may act as whom. Here: the caller's access token for this
 * backend's API must carry the `impersonate:users` permission; then the backend asks the
 * Management API for a subject token, with a token that holds only the `impersonation` scope.
 *
 *   POST /impersonate   Authorization: Bearer <actor's access token>   {userId, reason, ticketId}
 *   → 201 {subjectToken, expiresIn}
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createRemoteJWKSet, jwtVerify } from 'jose';
import Koa from 'koa';

export interface IntegratorBackendOptions {
  /** The identity service's issuer and Management API indicator. */
  issuer: string;
  managementApi: string;
  /** Where to reach the identity service (its base URL). */
  identityUrl: string;
  /** This backend's machine-to-machine credentials (with the `impersonation` scope). */
  clientId: string;
  clientSecret: string;
  /** This backend's own API resource, the audience of the actors' tokens. */
  audience: string;
  port?: number;
}

async function readJson(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export async function startIntegratorBackend(options: IntegratorBackendOptions) {
  const jwks = createRemoteJWKSet(new URL(`${options.identityUrl}/oidc/jwks`));

  async function managementToken(): Promise<string> {
    const response = await fetch(`${options.identityUrl}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: options.managementApi, scope: 'impersonation' }),
    });
    const body = (await response.json()) as { access_token?: string };
    if (!body.access_token) throw new Error("the identity service refused this backend's credentials");
    return body.access_token;
  }

  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'POST' || ctx.path !== '/impersonate') {
      ctx.status = 404;
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
    let actor: string | undefined;
    let scopes: string[] = [];
    try {
      const { payload } = await jwtVerify(bearer ?? '', jwks, { issuer: options.issuer, audience: options.audience, typ: 'at+jwt' });
      actor = payload.sub;
      scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    } catch {
      ctx.status = 401;
      ctx.body = { error: 'a valid access token for this API is required' };
      return;
    }
    // The integrator's rule: only holders of impersonate:users may act as someone else.
    if (!scopes.includes('impersonate:users')) {
      ctx.status = 403;
      ctx.body = { error: 'impersonate:users is required' };
      return;
    }
    const { userId, reason, ticketId } = await readJson(ctx);
    if (typeof userId !== 'string' || typeof reason !== 'string' || typeof ticketId !== 'string') {
      ctx.status = 400;
      ctx.body = { error: 'userId, reason and ticketId are required strings' };
      return;
    }
    const response = await fetch(`${options.identityUrl}/api/subject-tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await managementToken()}`, 'content-type': 'application/json' },
      // Bound to this engineer (RFC 8693 §4.4): only their own token can exchange it, should the subject token leak.
      body: JSON.stringify({ userId, actorId: actor, reason, ticketId, context: { actor } }),
    });
    const { subjectToken, expiresIn, impersonationId, code, message } = (await response.json()) as Record<string, unknown>;
    ctx.status = response.status;
    ctx.body = response.ok ? { subjectToken, expiresIn, impersonationId } : { error: code, message };
  });

  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
