import 'oidc-provider';

declare module 'oidc-provider' {
  interface AccessToken {
    /**
     * Picks the token's id and, for an access token, its format (opaque or JWT, from its resource
     * server). `save()` calls it when no id is set; a grant that must name the id before saving
     * (the token-exchange audit) calls it itself.
     */
    generateTokenId(): string;
  }
}
