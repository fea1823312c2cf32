import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { ApplicationDocument } from '../lib/store/models.js';

type Grant = InstanceType<Provider['Grant']>;

/** What a consent prompt asks for beyond what the grant holds (oidc-provider's prompt details). */
export interface MissingConsent {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

/** Adds everything the consent prompt found missing to `grant`. */
export function grantMissing(grant: Grant, missing: MissingConsent): void {
  if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
}

/**
 * oidc-provider's `loadExistingGrant`: a first-party application (one of ours that is not
 * third-party) is consented automatically, by a grant of what it asks for; everyone else gets
 * the grant they consented to, and the consent page for anything more.
 */
export function createGrantLoader(
  findApplication: (id: string) => Promise<ApplicationDocument | undefined>,
  host?: Configuration['loadExistingGrant'],
): NonNullable<Configuration['loadExistingGrant']> {
  return async (ctx: KoaContextWithOIDC) => {
    const { oidc } = ctx;
    const application = await findApplication(oidc.client!.clientId);
    if (!application || application.isThirdParty) {
      if (host) return host(ctx);
      const grantId = (oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId ?? oidc.session!.grantIdFor(oidc.client!.clientId);
      return grantId ? oidc.provider.Grant.find(grantId) : undefined;
    }
    const { clientId } = oidc.client!;
    const { accountId } = oidc.account!;
    const grantId = oidc.session!.grantIdFor(clientId);
    const existing = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    const grant = existing?.accountId === accountId ? existing : new oidc.provider.Grant({ clientId, accountId });
    const requested = oidc.requestParamScopes;
    grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '));
    grant.addOIDCClaims([...oidc.requestParamClaims]);
    for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {})) {
      const scopes = [...requested].filter((scope) => server.scopes.has(scope));
      if (scopes.length > 0) grant.addResourceScope(indicator, scopes.join(' '));
    }
    await grant.save();
    return grant;
  };
}
