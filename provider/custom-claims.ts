import { errors, type KoaContextWithOIDC } from 'oidc-provider';

import { createBatch } from '../lib/store/batch.js';
import type { KeyedCache } from '../lib/store/cache.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import { userToApi } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import { customizerId, type CustomizerType, type JwtCustomizer } from '../lib/store/queries/jwt-customizer.js';
import type { RoleLookup } from './role-facts.js';
import type { SignInInteraction } from './sessions.js';
import { SandboxError, type Sandbox } from './sandbox/index.js';
import type { GrantFacts } from './token-types.js';

/** The operator's function: returns claims to merge into an access token. */
export type GetCustomJwtClaims = (input: CustomClaimsInput) => Promise<Record<string, unknown>> | Record<string, unknown>;

export interface CustomClaimsInput {
  token: Record<string, unknown>;
  context: Record<string, unknown>;
  environmentVariables: Record<string, string>;
}

/** What happens when the customizer throws or times out: refuse the token, or issue it without custom claims. */
export const customClaimsFailurePolicies = ['omit', 'refuse'] as const;
export type CustomClaimsFailurePolicy = (typeof customClaimsFailurePolicies)[number];

/**
 * Claims a customizer may not set: they say who the token is for, for whom, what it allows, and
 * how and when its user authenticated (OIDC Core §2, RFC 9068 §2.2), which a resource server
 * trusts as the provider's own word.
 */
export const reservedClaims = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'act',
  'impersonation_id',
  'client_id',
  'scope',
  'cnf',
  'gty',
  'azp',
  'acr',
  'amr',
  'auth_time',
  'sid',
  'typ',
]);

export const withoutReserved = (claims: Record<string, unknown>) => Object.fromEntries(Object.entries(claims).filter(([name]) => !reservedClaims.has(name)));

/**
 * The JWT customizer's dry run (`POST /api/configs/jwt-customizer/test`): what a script would add,
 * reserved claims dropped as for real tokens, or why it failed.
 */
export function createDryRun(sandbox: Sandbox) {
  return async (script: string, input: CustomClaimsInput): Promise<{ claims: Record<string, unknown> } | { failure: { code: string; message: string } }> => {
    try {
      return { claims: withoutReserved(await sandbox.run(script, input)) };
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return { failure: { code: error.code, message: error.message } };
    }
  };
}

export interface CustomClaimsDeps {
  queries: Queries;
  /** Roles from the roles cache, for grants that did not load the user's. */
  roles: RoleLookup;
  customizer: KeyedCache<JwtCustomizer>;
  sandbox: Sandbox;
  /** A function handed in by an embedding host: trusted code, run as it is. */
  hostFunction?: GetCustomJwtClaims;
  /** The policy where a customizer does not say (`blockIssuanceOnError`), and for the host's function. */
  onError: CustomClaimsFailurePolicy;
  /** Tokens for these audiences are never customized (the Management API's own). */
  exemptAudiences: Set<string>;
  logger: Logger;
  /** Counts script runs and their outcomes, when metrics are on. */
  metrics?: Metrics;
  /** What the sign-in behind a session proved, for its account's tokens (`session-contexts.ts`). */
  signInOf(sessionUid: string, accountId: string): Promise<SignInInteraction | undefined>;
}

type IssuedToken = {
  jti?: string;
  accountId?: string;
  clientId?: string;
  aud?: string | string[];
  scope?: string;
  gty?: string;
  kind?: string;
  /** The session a token descends from (an authorization code's, and the refresh tokens after it). */
  sessionUid?: string;
};

export function createCustomClaims(deps: CustomClaimsDeps) {
  // Tokens customized at the same time read their users in one command (a token exchange carries only the user's id).
  const userById = createBatch(async (ids: string[]) => {
    const found = new Map((await deps.queries.users.findByIds([...new Set(ids)])).map((user) => [user._id, user]));
    return ids.map((id) => found.get(id) ?? null);
  });
  const grantTypeOf = (ctx: KoaContextWithOIDC, token: IssuedToken, facts: GrantFacts | undefined) =>
    facts?.type ?? (ctx.oidc?.params?.grant_type as string | undefined) ?? token.gty ?? 'unknown';

  async function contextFor(ctx: KoaContextWithOIDC, token: IssuedToken, facts: GrantFacts | undefined) {
    const grantType = grantTypeOf(ctx, token, facts);
    // The grant may have loaded the user already; else it is read here.
    const user = facts?.user ?? (token.accountId ? await userById(token.accountId) : null);
    const roles = facts?.roles ?? (user ? await deps.roles(await deps.queries.links.usersRoles.rightsOf(user._id)) : []);
    const client = ctx.oidc?.client;
    // The sign-in a user's token descends from (Logto's `interaction`); a token exchange has none.
    const interaction = token.sessionUid && user ? await deps.signInOf(token.sessionUid, user._id) : undefined;
    return {
      grant: { type: grantType, ...(facts?.subjectTokenContext && { subjectTokenContext: facts.subjectTokenContext }) },
      ...(user && { user: { ...userToApi(user), roles: roles.map(({ id, name, type }) => ({ id, name, type })) } }),
      ...(client && { application: { id: client.clientId, name: client.clientName ?? null } }),
      ...(interaction && { interaction }),
    };
  }

  return async function customClaimsFor(ctx: KoaContextWithOIDC, token: IssuedToken, facts?: GrantFacts): Promise<Record<string, unknown>> {
    const audiences = Array.isArray(token.aud) ? token.aud : token.aud ? [token.aud] : [];
    if (audiences.some((audience) => deps.exemptAudiences.has(audience))) return {};
    // As Logto's: a machine's own token (client_credentials) has its customizer, a user's token the access-token one.
    const type: CustomizerType = grantTypeOf(ctx, token, facts) === 'client_credentials' ? 'client-credentials' : 'access-token';
    const stored = deps.hostFunction ? undefined : await deps.customizer.get(customizerId(type));
    // No customizer, or one stored without a script (Logto accepts an empty one): no claims, and no run.
    if (!deps.hostFunction && !stored?.script.trim()) return {};
    const refuse = stored?.blockIssuanceOnError ?? deps.onError === 'refuse';

    const input: CustomClaimsInput = {
      token: { jti: token.jti, sub: token.accountId ?? token.clientId, aud: token.aud, scope: token.scope, client_id: token.clientId },
      context: await contextFor(ctx, token, facts),
      environmentVariables: stored?.environmentVariables ?? {},
    };
    try {
      const claims = deps.hostFunction ? await deps.hostFunction(input) : await deps.sandbox.run(stored!.script, input);
      deps.metrics?.sandboxRuns.inc({ outcome: 'ok' });
      return withoutReserved(claims ?? {});
    } catch (error) {
      deps.metrics?.sandboxRuns.inc({ outcome: error instanceof SandboxError ? error.code : 'host_error' });
      // `api.denyAccess(message)` (Logto's): the token is refused, whatever the failure policy, with the script's message.
      if (error instanceof SandboxError && error.code === 'access_denied') throw new errors.AccessDenied(error.message);
      const reason = error instanceof SandboxError ? `${error.code}: ${error.message}` : (error as Error).message;
      deps.logger.warn(`custom JWT claims failed (${reason}); ${refuse ? 'token refused' : 'token issued without them'}`);
      if (refuse) {
        // The client learns that the claims failed; why is for the operator's log.
        throw new errors.InvalidRequest('the access token could not be issued: its custom JWT claims failed');
      }
      return {};
    }
  };
}
