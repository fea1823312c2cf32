import type { Configuration } from 'oidc-provider';

import { createGrantLoader } from '../experience/consent.js';
import { interactionUrl } from '../experience/index.js';
import { messagePage, signOutPage } from '../experience/views/pages.js';
import { configureProvider } from '../provider/configure.js';
import { organizationTokenClaims } from '../grants/organization-tokens.js';
import { bindingOrganization } from '../provider/organization-binding.js';
import type { MintedToken } from '../provider/token-types.js';
import type { AccessTokenAlg } from '../lib/config.js';
import type { ResolvedOptions } from './options.js';
import type { Parts } from './parts.js';

/**
 * The host's provider configuration with ours composed in. `minted` is what a grant tells
 * `extraTokenClaims` about a token it mints, through the token itself.
 */
export function configureWith(host: Configuration, options: ResolvedOptions, parts: Parts, minted: WeakMap<object, MintedToken>) {
  const { logger, branding, catalogs } = options;
  const { caches, customClaimsFor } = parts;
  // Whether the provider's keys are ours (and so rotated through the Management API), not a host's own.
  const keysManaged = !host.jwks && !host.cookies?.keys;
  // Ours: the algorithm of the family the current key set was made for (ACCESS_TOKEN_ALG's until a rotation picks another); a host's keys: the setting.
  const accessTokenAlg = keysManaged ? () => parts.keyRing.signingAlg() : () => options.accessTokenAlg as AccessTokenAlg;
  if (host.features?.devInteractions?.enabled === true) {
    logger.warn(
      "oidc-provider's development interactions (features.devInteractions) are on: anyone can sign in as any account id with any password. Never in production.",
    );
  }
  const { configuration, getResourceServerInfo } = configureProvider(host, {
    db: parts.db,
    queries: parts.queries,
    organizationAccess: parts.organizationAccess,
    clients: caches.clients,
    keyRing: parts.keyRing,
    resources: caches.resources,
    defaultResource: () => caches.defaultResource.get('default'),
    held: caches.held,
    organizations: caches.organizations,
    accessTokenAlg,
    managementApiTokenTtl: options.managementApiTokenTtl,
    outboundAllowedHosts: options.outboundAllowedHosts,
    extraTokenClaims: async (ctx, token) => ({
      ...(await customClaimsFor(ctx, token as Parameters<typeof customClaimsFor>[1], minted.get(token)?.facts)),
      ...organizationTokenClaims(ctx, token),
      ...minted.get(token)?.claims,
    }),
    ...(branding &&
      catalogs && {
        experience: {
          interactionUrl: (uid: string) => interactionUrl(uid),
          loadExistingGrant: (hostLoader) =>
            bindingOrganization(
              createGrantLoader((id) => parts.caches.applications.get(id), hostLoader),
              () => parts.organizationAccess,
            ),
          languages: catalogs.languages(),
          // oidc-provider's error page (an unknown client, a redirect URI not registered): in our look, without its web font.
          renderError: (ctx, out) => {
            const t = catalogs.forRequest(ctx.oidc?.params?.ui_locales, ctx.get('accept-language'));
            const said = String(out.error_description ?? out.error ?? '');
            ctx.type = 'html';
            ctx.body = messagePage({ branding, t }, t.t('message.failed.title'), said, t.locale === 'en' ? undefined : 'en');
          },
          logoutSource: (ctx, form) => {
            ctx.type = 'html';
            // RP-Initiated Logout §2 `ui_locales`, then the browser's Accept-Language.
            ctx.body = signOutPage({ branding, t: catalogs.forRequest(ctx.oidc?.params?.ui_locales, ctx.get('accept-language')) }, form);
          },
          postLogoutSuccessSource: (ctx) => {
            const t = catalogs.forRequest(ctx.oidc?.params?.ui_locales, ctx.get('accept-language'));
            ctx.type = 'html';
            ctx.body = messagePage({ branding, t }, t.t('signedOut.title'), t.t('signedOut.lead'));
          },
        },
      }),
  });
  // A host's adapter keeps the provider's models: the session routes cannot see them.
  if (host.adapter) parts.sessions.storedElsewhere();
  return { configuration, getResourceServerInfo, keysManaged, accessTokenAlg };
}

export type Configured = ReturnType<typeof configureWith>;
