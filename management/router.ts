import type { IncomingMessage } from 'node:http';

import Router from '@koa/router';
import type Koa from 'koa';
import type { Middleware } from 'koa';

import { bearerAuth, type BearerAuthOptions } from '../lib/http/auth.js';
import { jsonApiApp } from '../lib/http/api-app.js';
import { jsonBody } from '../lib/http/json-body.js';
import { mountApp } from '../lib/http/mount.js';
import { applicationRoutes } from './applications.js';
import { applicationSignInExperienceRoutes } from './application-sign-in-experience.js';
import type { ManagementDeps } from './deps.js';
import type { ErrorLogger } from '../lib/http/api-errors.js';
import { guard } from '../lib/http/guard.js';
import { databaseAnswers, databaseUnavailable } from '../lib/store/availability.js';
import { ApiError } from '../lib/errors.js';
import { packageVersion } from '../lib/version.js';
import { apiDocsRoutes } from './docs.js';
import { buildOpenApiDocument } from './openapi.js';
import { asOpenApi30 } from './openapi-30.js';
import { organizationRoutes } from './organizations/entities.js';
import { memberRoleRoutes } from './organizations/member-roles.js';
import { consentOrganizationRoutes } from './organizations/consent-organizations.js';
import { invitationRoutes } from './organizations/invitations.js';
import { oneTimeTokenRoutes } from './one-time-tokens.js';
import { personalAccessTokenRoutes } from './personal-access-tokens.js';
import { jitRoutes } from './organizations/jit.js';
import { relationRoutes } from './relations/catalog.js';
import { resourceRoutes } from './resources.js';
import { hookKeysRoute, hookRotationRoutes } from './hooks/keys.js';
import { hookRoutes } from './hooks/hooks.js';
import { deliveryRoutes } from './hooks/deliveries.js';
import { impersonationRoutes } from './impersonations.js';
import { changeRoutes } from './changes.js';
import { jwtCustomizerRoutes } from './jwt-customizer.js';
import { oidcKeyRoutes } from './oidc-keys.js';
import { roleRoutes } from './roles.js';
import { signInExperienceRoutes } from './sign-in-experience.js';
import { subjectTokenRoutes } from './subject-tokens.js';
import { userRoutes } from './users.js';
import { userIdentityRoutes } from './user-identities.js';
import { sessionRoutes } from './sessions.js';
import { mfaVerificationRoutes } from './mfa-verifications.js';
import { connectorRoutes } from './connectors.js';
import { ssoConnectorRoutes } from './sso-connectors.js';
import { hookEventRoutes } from './hook-events.js';

export interface ManagementApiOptions {
  auth: BearerAuthOptions;
  bodyLimit: number;
  log: ErrorLogger;
  /** Trust `X-Forwarded-Proto` and `-Host` (behind a reverse proxy). */
  proxy?: boolean;
  /** The caller's address, as the trusted proxies tell it. */
  clientAddress: (req: IncomingMessage) => string;
}

/** Each resource's routes, in the order they are mounted. */
const routeTables = [
  applicationRoutes,
  applicationSignInExperienceRoutes,
  resourceRoutes,
  userRoutes,
  userIdentityRoutes,
  sessionRoutes,
  mfaVerificationRoutes,
  personalAccessTokenRoutes,
  roleRoutes,
  organizationRoutes,
  memberRoleRoutes,
  consentOrganizationRoutes,
  invitationRoutes,
  oneTimeTokenRoutes,
  jitRoutes,
  relationRoutes,
  subjectTokenRoutes,
  impersonationRoutes,
  changeRoutes,
  jwtCustomizerRoutes,
  signInExperienceRoutes,
  connectorRoutes,
  ssoConnectorRoutes,
  oidcKeyRoutes,
  hookRoutes,
  hookRotationRoutes,
  deliveryRoutes,
  hookEventRoutes,
];

export const managementPrefix = '/api';

/** How long the health check waits for the database's answer to its ping. */
const statusPingMs = 2_000;

export interface ManagementApi {
  /** Koa middleware answering everything under `/api`; other paths pass through. */
  middleware: Middleware;
  /** The routes, for introspection (the OpenAPI document). */
  router: Router;
}

/**
 * The Management API's protected routes behind another authentication, as one Koa app answering
 * under `/api`, errors and all as the API answers them: for a face that calls the same handlers
 * in process instead of over HTTP (the admin console, whose administrators hold a session, not a
 * token). `authenticate` sets `ctx.state.auth` as the bearer check would. Bodies come parsed.
 */
export function managementRoutesBehind(
  deps: ManagementDeps,
  authenticate: Middleware,
  { log, proxy = false, clientAddress }: Pick<ManagementApiOptions, 'log' | 'proxy' | 'clientAddress'>,
): Koa {
  const router = new Router({ prefix: managementPrefix });
  router.use(authenticate);
  for (const routes of routeTables) routes(router, deps);
  const app = jsonApiApp({ proxy, clientAddress, log });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

export function createManagementApi(deps: ManagementDeps, { auth, bodyLimit, log, proxy = false, clientAddress }: ManagementApiOptions): ManagementApi {
  const authenticate = bearerAuth(auth);
  const router = new Router({ prefix: managementPrefix });

  // Liveness, as Logto's: the process answers. Cheap, and never tied to the database, so that an
  // orchestrator does not restart every process of a deployment while its database is away.
  router.get('/status', guard({ status: 204, public: true, summary: 'Liveness: the process answers' }), (ctx) => {
    ctx.status = 204;
  });

  // Readiness: whether this process can serve now. Its database must answer a ping in time, and its
  // webhook delivery worker (when it delivers) must be running and turning; 503 otherwise, so that
  // a balancer sends requests elsewhere.
  router.get(
    '/status/ready',
    guard({
      public: true,
      summary: 'Readiness: the database answers and the delivery worker runs',
      response: {
        type: 'object',
        properties: { database: { const: 'ok' }, worker: { enum: ['ok', 'off'] } },
        required: ['database', 'worker'],
      },
    }),
    async (ctx) => {
      if (!(await databaseAnswers(deps.database.db, statusPingMs))) throw databaseUnavailable();
      const { worker, reason } = deps.hooks.health();
      if (worker === 'down') throw new ApiError('service.worker_unavailable', reason ?? 'the webhook delivery worker is not running', undefined, 503);
      ctx.body = { database: 'ok', worker };
    },
  );

  // The hooks' v1a public keys: public, as the provider's JWKS is.
  hookKeysRoute(router, deps);

  // The API reference: the OpenAPI document holds no data, so it needs no token; built on first
  // request, once every route is declared, and rendered by the page at /api/docs.
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  const documentOf = () =>
    (document ??= buildOpenApiDocument(router, {
      serverUrl: deps.managementApiIndicator.replace(/\/api$/, ''),
      version: packageVersion,
      tokenUrl: `${auth.issuer}/token`,
    }));
  router.get('/openapi.json', guard({ response: { type: 'object' }, public: true, summary: 'The OpenAPI 3.1 document of this API' }), (ctx) => {
    ctx.body = documentOf();
  });
  // Logto's path, in Logto's version (3.0), for tools that read no other.
  let document30: Record<string, unknown> | undefined;
  router.get(
    '/swagger.json',
    guard({ response: { type: 'object' }, public: true, summary: 'The OpenAPI 3.0 document of this API (as Logto serves it)' }),
    (ctx) => {
      ctx.body = document30 ??= asOpenApi30(documentOf() as Record<string, unknown>);
    },
  );
  apiDocsRoutes(router, managementPrefix);

  // Declared after /status and the hooks' keys, so that it runs for every route but those.
  router.use(authenticate, jsonBody(bodyLimit));
  for (const routes of routeTables) routes(router, deps);

  // No route answered: the caller must still authenticate before learning anything; then
  // allowedMethods (which looks after the middleware below it) answers 405 for a known path
  // with another method, and apiErrors answers 404 for the rest.
  const app = jsonApiApp({ proxy, clientAddress, log });
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use((ctx) => authenticate(ctx, async () => undefined));
  const middleware = mountApp(managementPrefix, app);
  return { middleware, router };
}
