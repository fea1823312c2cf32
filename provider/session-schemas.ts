/** The JSON Schemas of a session and a grant as the session routes answer them (`sessions.ts`), and Logto's `revokeGrantsTarget`. */

export const sessionViewSchema = {
  type: 'object',
  properties: {
    payload: {
      type: 'object',
      properties: {
        uid: { type: 'string', description: 'The session’s id in the session routes.' },
        accountId: { type: 'string' },
        loginTs: { type: 'number' },
        iat: { type: 'number' },
        exp: { type: 'number' },
        kind: { const: 'Session' },
        authorizations: { type: 'object', description: 'Per application signed in to: `{sid, grantId, persistsLogout}`.' },
        acr: { type: 'string' },
        amr: { type: 'array', items: { type: 'string' } },
        transient: { type: 'boolean' },
      },
      required: ['uid'],
      // Closed: a sign-out in progress keeps its form's secret in the session (`state`), and the
      // session's `jti` is the value of its cookie: neither is shown.
    },
    lastSubmission: {
      type: ['object', 'null'],
      properties: { signInContext: { type: 'object', properties: { ip: { type: 'string' }, userAgent: { type: 'string' } } } },
      description: 'Where the session began: the address and user agent of its sign-in (`null` for a session that began before they were kept).',
    },
    clientId: { type: ['string', 'null'], description: 'The application the session began with.' },
    accountId: { type: ['string', 'null'] },
    expiresAt: { type: 'number', description: 'When it ends (milliseconds since the epoch).' },
    lastActiveAt: { type: 'string', description: 'When the browser holding it was last at the provider (ISO 8601).' },
  },
  required: ['payload', 'lastSubmission', 'clientId', 'accountId', 'expiresAt'],
} as const;

export const grantViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    payload: {
      type: 'object',
      properties: { clientId: { type: 'string' }, accountId: { type: 'string' }, iat: { type: 'number' }, exp: { type: 'number' }, kind: { const: 'Grant' } },
      required: ['clientId', 'accountId'],
      additionalProperties: true,
    },
    expiresAt: { type: 'number' },
  },
  required: ['id', 'payload', 'expiresAt'],
} as const;

/** Logto's `revokeGrantsTarget`: which of a session's grants end with it. */
export const grantsTargetQuery = {
  type: 'object',
  properties: {
    revokeGrantsTarget: {
      enum: ['all', 'firstParty'],
      description:
        '`all`: every grant of the session; `firstParty`: first-party applications’ only; none: those that do not outlive a sign-out (without `offline_access`).',
    },
  },
  additionalProperties: false,
} as const;
