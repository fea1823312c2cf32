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
const clientFields = {
  clientId: { type: 'string', minLength: 1, maxLength: 512 },
  clientSecret: { type: 'string', minLength: 1, maxLength: 2048 },
  scope: { type: 'string', minLength: 1, maxLength: 1024 },
  // Logto's field: take an email the provider did not say it verified as verified (off by default).
  trustUnverifiedEmail: { type: 'boolean' },
} as const;
/** Which fields of the upstream profile are the id, name, email and picture (dotted paths allowed). */
const profileMap = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, avatar: { type: 'string' } },
  additionalProperties: false,
} as const;

const oidcSchema = {
  type: 'object',
  properties: { issuer: url, ...clientFields },
  required: ['issuer', 'clientId', 'clientSecret'],
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
