import type { Middleware } from 'koa';

import { packageVersion } from '../lib/version.js';

/**
 * `GET /` of the standalone server: where to go from here, as JSON (the issuer, its discovery
 * document, the Management API's reference and OpenAPI document), instead of a bare Not Found.
 */
export function frontDoor({ baseUrl, issuer, consoleUrl }: { baseUrl: string; issuer: string; consoleUrl?: string | undefined }): Middleware {
  const body = {
    service: 'oidc-identity',
    version: packageVersion,
    issuer,
    discovery: `${issuer}/.well-known/openid-configuration`,
    managementApi: { reference: `${baseUrl}/api/docs`, openapi: `${baseUrl}/api/openapi.json` },
    health: `${baseUrl}/api/status`,
    ...(consoleUrl && { console: consoleUrl }),
  };
  return async (ctx, next) => {
    if (ctx.path !== '/' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.body = body;
  };
}
