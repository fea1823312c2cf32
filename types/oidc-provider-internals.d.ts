// Ambient declarations of the oidc-provider internals that lib/provider-internals.ts uses.
declare module 'oidc-provider/lib/helpers/initialize_keystore.js' {
  /** oidc-provider's key-store initializer, called with the provider as `this`. */
  export default function initializeKeystore(this: object, jwks: { keys: object[] }): void;
}
