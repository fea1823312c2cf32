/**
 * What can be configured as a social connector (Logto's connector factories): a generic OpenID
 * Connect provider, a generic OAuth 2.0 one, and presets of each for Google and GitHub. Each
 * says how it talks upstream (`kind`), the `target` its identities are kept under, and its
 * configuration's schema (the client secret is write-only: never answered).
 */
export type UpstreamKind = 'oidc' | 'oauth2';

export interface ConnectorFactory {
  id: string;
  kind: UpstreamKind;
  /** Where identities are kept on the user (`identities.<target>`); a connector may name its own. */
  target: string;
  name: string;
  description: string;
  /** Defaults the configuration starts from. */
  defaults: Record<string, unknown>;
  configSchema: Record<string, unknown>;
}

const url = { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s]+$', format: 'web-url' } as const;
/** Authorization parameters a configuration may not set: each is this service's to choose per sign-in. */
export const reservedAuthorizationParameters = [
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  // A request object would stand for all of the above (OpenID Connect Core §6.1).
  'request',
  'request_uri',
];
const clientFields = {
  clientId: { type: 'string', minLength: 1, maxLength: 512 },
  clientSecret: { type: 'string', minLength: 1, maxLength: 2048 },
  scope: { type: 'string', minLength: 1, maxLength: 1024 },
  // Logto's field: take an email the provider did not say it verified as verified (off by default).
  trustUnverifiedEmail: { type: 'boolean' },
  // Logto's fields. Only the authorization code flow is built: these say so, or are refused.
  responseType: { const: 'code' },
  grantType: { const: 'authorization_code' },
  /** How this service authenticates at the token endpoint (Logto's choices but `private_key_jwt`). */
  tokenEndpointAuthMethod: { enum: ['client_secret_post', 'client_secret_basic', 'client_secret_jwt'] },
  // openid-client signs client assertions with HS256 only.
  clientSecretJwtSigningAlgorithm: { const: 'HS256' },
  /** More authorization request parameters, sent as given (none of `reservedAuthorizationParameters`). */
  customConfig: {
    type: 'object',
    propertyNames: { not: { enum: reservedAuthorizationParameters }, maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 1024 },
    maxProperties: 20,
  },
} as const;
/** Which fields of the upstream profile are the id, name, email and picture (dotted paths allowed). */
const profileMap = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, avatar: { type: 'string' } },
  additionalProperties: false,
} as const;

/**
 * Logto's OpenID Connect connector, configured by hand instead of by discovery: where people are
 * sent, where codes are redeemed, and how ID tokens are checked. Unlike Logto, the ID token's
 * issuer is required (OpenID Connect Core §3.1.3.7: it MUST match), one issuer, with the keys at `jwksUri`.
 */
const idTokenVerificationConfig = {
  type: 'object',
  properties: {
    jwksUri: url,
    issuer: { type: 'string', minLength: 1, maxLength: 2048 },
    algorithms: {
      type: 'array',
      items: { enum: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] },
      minItems: 1,
      maxItems: 1,
    },
  },
  required: ['jwksUri', 'issuer'],
  additionalProperties: false,
} as const;
/** Logto's optional authorization request parameters, by their names there. */
const authRequestOptionalConfig = {
  type: 'object',
  properties: Object.fromEntries(
    ['display', 'prompt', 'maxAge', 'uiLocales', 'idTokenHint', 'loginHint', 'acrValues'].map((name) => [name, { type: 'string', maxLength: 1024 }]),
  ),
  additionalProperties: false,
} as const;
const oidcSchema = {
  type: 'object',
  properties: {
    issuer: url,
    authorizationEndpoint: url,
    tokenEndpoint: url,
    userInfoEndpoint: url,
    idTokenVerificationConfig,
    authRequestOptionalConfig,
    ...clientFields,
  },
  // Discovery from the issuer, or Logto's endpoints and keys by hand.
  anyOf: [{ required: ['issuer'] }, { required: ['authorizationEndpoint', 'tokenEndpoint', 'idTokenVerificationConfig'] }],
  required: ['clientId', 'clientSecret'],
  additionalProperties: false,
} as const;
const oauth2Schema = {
  type: 'object',
  properties: {
    authorizationEndpoint: url,
    tokenEndpoint: url,
    userInfoEndpoint: url,
    /** GitHub's `/user/emails`: where a verified primary email is found when the profile has none. */
    emailsEndpoint: url,
    profileMap,
    /** Logto's: how the token endpoint answers, JSON or a form-encoded body (as GitHub's does without an Accept header). */
    tokenEndpointResponseType: { enum: ['json', 'query-string'] },
    ...clientFields,
  },
  required: ['authorizationEndpoint', 'tokenEndpoint', 'userInfoEndpoint', 'clientId', 'clientSecret'],
  additionalProperties: false,
} as const;

export const connectorFactories: ConnectorFactory[] = [
  {
    id: 'oidc',
    kind: 'oidc',
    target: 'oidc',
    name: 'OpenID Connect',
    description: 'Any OpenID Connect provider: its issuer (discovery), client id and secret, and scopes.',
    defaults: { scope: 'openid profile email' },
    configSchema: oidcSchema,
  },
  {
    id: 'oauth2',
    kind: 'oauth2',
    target: 'oauth2',
    name: 'OAuth 2.0',
    description: 'Any OAuth 2.0 provider: its authorization, token and profile endpoints, and which profile fields are the id, name, email and picture.',
    defaults: { scope: '', profileMap: { id: 'id', name: 'name', email: 'email', avatar: 'picture' } },
    configSchema: oauth2Schema,
  },
  {
    id: 'google-universal',
    kind: 'oidc',
    target: 'google',
    name: 'Google',
    description: 'Sign in with Google (OpenID Connect).',
    defaults: { issuer: 'https://accounts.google.com', scope: 'openid profile email' },
    configSchema: oidcSchema,
  },
  {
    id: 'github-universal',
    kind: 'oauth2',
    target: 'github',
    name: 'GitHub',
    description: 'Sign in with GitHub (OAuth 2.0; the verified primary email from /user/emails).',
    defaults: {
      authorizationEndpoint: 'https://github.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.com/login/oauth/access_token',
      userInfoEndpoint: 'https://api.github.com/user',
      emailsEndpoint: 'https://api.github.com/user/emails',
      scope: 'read:user user:email',
      profileMap: { id: 'id', name: 'name', email: 'email', avatar: 'avatar_url' },
    },
    configSchema: oauth2Schema,
  },
];

export const factoryById = (id: string) => connectorFactories.find((factory) => factory.id === id);

/** A factory as Logto's `GET /api/connector-factories` shows one. */
export const factoryToApi = ({ id, target, name, description, defaults, configSchema }: ConnectorFactory) => ({
  id,
  target,
  type: 'Social',
  platform: 'Universal',
  name: { en: name },
  description: { en: description },
  isStandard: id === 'oidc' || id === 'oauth2',
  configTemplate: JSON.stringify(defaults),
  formItems: Object.keys((configSchema as { properties: Record<string, unknown> }).properties).map((key) => ({
    key,
    type: key === 'profileMap' ? 'Json' : key === 'clientSecret' ? 'Password' : 'Text',
    required: ((configSchema as { required?: string[] }).required ?? []).includes(key),
  })),
});
