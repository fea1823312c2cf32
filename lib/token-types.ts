/** RFC 8693 identifiers. */
export const tokenExchangeGrantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/** RFC 8693 §4.1: who acts, and, nested, on whose behalf that actor acted. */
export interface ActClaim {
  sub: string;
  act?: ActClaim;
}
