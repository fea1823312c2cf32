// Ambient declarations of the oidc-provider internals that provider/internals.ts uses.
declare module 'oidc-provider/lib/helpers/initialize_keystore.js' {
  /** oidc-provider's key-store initializer, called with the provider as `this`. */
  export default function initializeKeystore(this: object, jwks: { keys: object[] }): void;
}

/** oidc-provider's own grant handlers, called with the provider and its grant helpers (`provider/internals.ts`). */
declare module 'oidc-provider/lib/actions/grants/refresh_token.js' {
  export const handler: (provider: object, helpers: Record<string, unknown>, ctx: import('oidc-provider').KoaContextWithOIDC) => Promise<void>;
  export const parameters: Set<string>;
}
declare module 'oidc-provider/lib/actions/grants/client_credentials.js' {
  export const handler: (provider: object, helpers: Record<string, unknown>, ctx: import('oidc-provider').KoaContextWithOIDC) => Promise<void>;
  export const parameters: Set<string>;
}
/** The steps the built-in grants share, each taking the provider first. */
declare module 'oidc-provider/lib/helpers/grants.js' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Step = (provider: object, ...args: any[]) => any;
  export const resolveRequestedResources: Step;
  export const applyAuthorizationDetails: Step;
}
/** oidc-provider's private state of a provider: its resolved configuration and features. */
declare module 'oidc-provider/lib/helpers/weak_cache.js' {
  export default function instance(provider: object): unknown;
}
