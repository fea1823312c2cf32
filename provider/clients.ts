import type { ClientMetadata } from 'oidc-provider';

import { tokenExchangeGrantType } from './token-types.js';
import { asClientJwks } from './internals.js';
import { hashedSecretsMetadata } from './client-secret.js';
import { policyMetadataOf } from './client-policies.js';
import { isConfidential, type ApplicationDocument, type ApplicationSecretDocument, type ApplicationType } from '../lib/store/models.js';

/** How each application type authenticates and which grants it may use. */
const clientProfiles: Record<ApplicationType, Pick<ClientMetadata, 'grant_types' | 'response_types' | 'application_type'>> = {
  Traditional: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'web',
  },
  SPA: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'web',
  },
  Native: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'native',
  },
  MachineToMachine: {
    grant_types: ['client_credentials'],
    response_types: [],
    application_type: 'web',
  },
};

/** The oidc-provider client an application stands for. */
export function toClientMetadata(application: ApplicationDocument, secrets: ApplicationSecretDocument[]): ClientMetadata {
  const profile = clientProfiles[application.type];
  const { oidcClientMetadata: oidc } = application;
  const interactive = application.type !== 'MachineToMachine';
  // Until it has a redirect URI an interactive application cannot sign anyone in, and
  // oidc-provider would refuse its metadata; Logto lets one be created first and configured after.
  const signInReady = !interactive || oidc.redirectUris.length > 0;
  // Token exchange (impersonation) only where the operator turned it on, and never for third parties.
  const exchanges = application.customClientMetadata.allowTokenExchange === true && !application.isThirdParty;
  const grantTypes = [...(signInReady ? (profile.grant_types ?? []) : []), ...(exchanges ? [tokenExchangeGrantType] : [])];
  return {
    client_id: application._id,
    client_name: application.name,
    ...profile,
    token_endpoint_auth_method: isConfidential(application.type) ? 'client_secret_basic' : 'none',
    grant_types: grantTypes,
    ...(!signInReady && { response_types: [] }),
    ...(isConfidential(application.type) && {
      client_secret: hashedSecretsMetadata(secrets),
      ...(oidc.tokenEndpointAuthMethod && { token_endpoint_auth_method: oidc.tokenEndpointAuthMethod }),
      ...(oidc.jwks && { jwks: asClientJwks(oidc.jwks) }),
      ...(oidc.jwksUri && { jwks_uri: oidc.jwksUri }),
    }),
    redirect_uris: interactive ? oidc.redirectUris : [],
    post_logout_redirect_uris: interactive ? oidc.postLogoutRedirectUris : [],
    ...(interactive &&
      oidc.backchannelLogoutUri && {
        backchannel_logout_uri: oidc.backchannelLogoutUri,
        backchannel_logout_session_required: oidc.backchannelLogoutSessionRequired ?? false,
      }),
    ...(oidc.logoUri && { logo_uri: oidc.logoUri }),
    // Its own look on the sign-in pages, read there from the provider's cache of clients.
    ...(application.signInExperience && { signInExperience: application.signInExperience }),
    ...policyMetadataOf(application),
  };
}
