import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import type { ApplicationDocument, CustomClientMetadata } from '../lib/store/models.js';

/**
 * An application's `customClientMetadata` as oidc-provider's client sees it: the settings the
 * token lifetimes, rotation, refresh-token issuance, CORS and the organization chooser read, under these names in
 * `client.metadata()`.
 */
export const clientPolicyProperties = [
  'idTokenTtl',
  'refreshTokenTtlInDays',
  'rotateRefreshToken',
  'alwaysIssueRefreshToken',
  'corsAllowedOrigins',
  'requireOrganization',
] as const;

type PolicyMetadata = Pick<CustomClientMetadata, (typeof clientPolicyProperties)[number]>;

/** Logto's defaults for the settings an application leaves out. */
const clientPolicyDefaults = { idTokenTtl: 3600, refreshTokenTtlInDays: 14, rotateRefreshToken: true, alwaysIssueRefreshToken: false };

/**
 * What an application's settings put in its client's metadata. A third-party application never
 * gets refresh tokens it was not consented: the consent page asks for `offline_access`, so
 * `alwaysIssueRefreshToken` is for first-party applications only.
 */
export const policyMetadataOf = ({
  customClientMetadata: custom,
  isThirdParty,
}: Pick<ApplicationDocument, 'customClientMetadata' | 'isThirdParty'>): PolicyMetadata =>
  Object.fromEntries(
    clientPolicyProperties.filter((key) => custom[key] !== undefined && !(isThirdParty && key === 'alwaysIssueRefreshToken')).map((key) => [key, custom[key]]),
  );

type Client = NonNullable<KoaContextWithOIDC['oidc']['client']>;
const metadataOf = (client: Client) => client.metadata() as PolicyMetadata;
const day = 24 * 60 * 60;

/**
 * The client-dependent parts of the configuration, each as Logto reads the same setting, within
 * what OAuth's security advice allows: a public client's refresh tokens always rotate (RFC 9700
 * §4.14.2), and a browser application's rotated refresh token never outlives the first one.
 */
export const clientPolicies = {
  /** Whether every sign-in to the application is for one of the user's organizations (the chooser asks for one). */
  requiresOrganization: (client: Client): boolean => metadataOf(client).requireOrganization === true,

  idTokenTtl: (client: Client): number => metadataOf(client).idTokenTtl ?? clientPolicyDefaults.idTokenTtl,

  refreshTokenTtl(ctx: KoaContextWithOIDC | undefined, token: { isSenderConstrained(): boolean }, client: Client): number {
    const rotated = ctx?.oidc.entities.RotatedRefreshToken;
    if (rotated && client.applicationType === 'web' && client.clientAuthMethod === 'none' && !token.isSenderConstrained()) return rotated.remainingTTL;
    return (metadataOf(client).refreshTokenTtlInDays ?? clientPolicyDefaults.refreshTokenTtlInDays) * day;
  },

  /** A grant lives at least `floor` seconds, and as long as the longest refresh token its application issues. */
  grantTtl(client: Client | undefined, floor: number): number {
    const refreshDays = (client && metadataOf(client).refreshTokenTtlInDays) ?? clientPolicyDefaults.refreshTokenTtlInDays;
    return Math.max(floor, refreshDays * day);
  },

  rotateRefreshToken(ctx: KoaContextWithOIDC): boolean {
    const { RefreshToken: refreshToken, Client: client } = ctx.oidc.entities;
    if (!refreshToken || !client) return false;
    const publicClient = client.clientAuthMethod === 'none' && !refreshToken.isSenderConstrained();
    if (publicClient) return true;
    if (!(metadataOf(client).rotateRefreshToken ?? clientPolicyDefaults.rotateRefreshToken)) return false;
    // oidc-provider's own rule for the rest: rotate a token past 70% of its life, for at most a year.
    if (refreshToken.totalLifetime() >= 365.25 * day) return false;
    return refreshToken.ttlPercentagePassed() >= 70;
  },

  /** With `offline_access`, or always for a web application that asks for it, if it may refresh at all. */
  issueRefreshToken(_ctx: KoaContextWithOIDC, client: Client, source: { scopes: Set<string> }): boolean {
    if (!client.grantTypeAllowed('refresh_token')) return false;
    return source.scopes.has('offline_access') || (client.applicationType === 'web' && metadataOf(client).alwaysIssueRefreshToken === true);
  },

  /**
   * Which browser origins may call the provider for this client: the ones its settings list, and
   * as oidc-provider does, its redirect URIs' origins for the UserInfo endpoint and for public clients.
   */
  clientBasedCORS(ctx: KoaContextWithOIDC, origin: string, client: Client): boolean {
    if (origin === 'null') return false;
    if (metadataOf(client).corsAllowedOrigins?.some((allowed) => URL.canParse(allowed) && new URL(allowed).origin === origin)) return true;
    if (ctx.oidc.route !== 'userinfo' && client.clientAuthMethod !== 'none') return false;
    return client.redirectUris?.some((uri) => URL.canParse(uri) && new URL(uri).origin === origin) ?? false;
  },
} satisfies Partial<Record<string, unknown>>;

/** Merges our client properties into a host's `extraClientMetadata`. */
export function extraClientMetadata(host: Configuration['extraClientMetadata']): Configuration['extraClientMetadata'] {
  return { ...host, properties: [...new Set([...(host?.properties ?? []), ...clientPolicyProperties, 'signInExperience'])] };
}
