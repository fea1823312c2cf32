import type Provider from 'oidc-provider';

import { createUserTokenReader } from '../grants/token-exchange/user-token.js';
import * as tokenExchange from '../grants/token-exchange/index.js';
import { organizationResourceServer, registerOrganizationGrants } from '../grants/organization-tokens.js';
import type { MintedToken } from '../provider/token-types.js';
import type { Configured } from './configure.js';
import type { Installed } from './install-provider.js';
import type { Parts } from './parts.js';

/**
 * The token exchange (RFC 8693) on the provider, with what it reads: subject tokens sealed with the
 * deployment's key, actor tokens verified with the provider's keys, the resources, roles and
 * impersonation policy from their caches, and the audit whose record spends a subject token.
 */
export function registerTokenExchange(
  provider: Provider,
  parts: Parts,
  { getResourceServerInfo, accessTokenAlg }: Configured,
  { getKey }: Installed,
  minted: WeakMap<object, MintedToken>,
) {
  const { caches, impersonation, queries } = parts;
  provider.registerGrantType(
    tokenExchange.grantType,
    tokenExchange.buildHandler({
      impersonation,
      resourceServerInfo: getResourceServerInfo,
      ...createUserTokenReader(provider, getKey, queries, impersonation.audit, parts.impersonationAccounts.findHost),
      resourceScopes: async (indicator) => (await caches.resources.get(indicator))?.scopes ?? [],
      roles: caches.roles,
      rolesOf: async (userId) => caches.roles((await caches.userRoleIds.get(userId)) ?? []),
      minted,
      policy: async () => (await caches.impersonationPolicy.get('policy'))!,
      subjectTokens: parts.subjectTokenSeal,
      organizations: parts.organizationAccess,
      findHostAccount: parts.impersonationAccounts.findHost,
      organizationServer: (organizationId, available, ttl) => organizationResourceServer(provider, accessTokenAlg, organizationId, available, ttl),
    }),
    tokenExchange.parameters,
  );
}

/** Organization tokens on the provider's own `refresh_token` and `client_credentials` grants (`grants/organization-tokens.ts`). */
export function registerOrganizationTokens(provider: Provider, parts: Parts, { accessTokenAlg }: Configured) {
  registerOrganizationGrants(provider, parts.organizationAccess, accessTokenAlg);
}
