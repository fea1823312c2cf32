import { interactionKinds, type OptInEvent } from '../catalog.js';
import { closed, string, stringList, type Schema } from './parts.js';

/** The opt-in, high-volume events: tokens issued, refused and revoked, authorizations and sign-ins that failed. Never a token, a code or a password. */

const applicationId = { ...string, description: 'The application (OAuth client), when the request named one the provider knows.' };
const userId = { ...string, description: 'The user the token is for (none for a machine-to-machine token).' };
const grantId = { ...string, description: 'The grant the token was issued under.' };
const grantType = { ...string, description: 'The token request’s `grant_type`.' };
const error = { ...string, description: 'The OAuth 2.0 error code answered.' };
const errorDescription = { ...string, description: 'The `error_description` answered.' };
const ip = string;
const userAgent = string;

const optInFields: Record<OptInEvent, { properties: Record<string, unknown>; required: string[]; description: string }> = {
  'Token.Issued': {
    properties: {
      grantType,
      applicationId,
      userId,
      grantId,
      sessionUid: { ...string, description: 'The session the tokens belong to (the session routes’ `:sessionId`).' },
      resource: { ...string, description: 'The API resource the access token is for (none: the provider’s own, for UserInfo).' },
      scope: string,
      tokens: { ...stringList, description: 'What was issued: `access_token`, `id_token`, `refresh_token`.' },
      act: { type: 'object', description: 'For a token exchange: the actor the token names (RFC 8693 §4.1).' },
      ip,
      userAgent,
    },
    required: ['grantType', 'applicationId', 'tokens'],
    description: 'Opt-in: tokens were issued at the token endpoint (every grant type, the token exchange included).',
  },
  'Token.Failed': {
    properties: { grantType, applicationId, error, errorDescription, ip, userAgent },
    required: ['error'],
    description: 'Opt-in: a token request was refused.',
  },
  'Token.Revoked': {
    properties: {
      tokenType: { enum: ['access_token', 'refresh_token'], description: 'What was revoked.' },
      applicationId,
      userId,
      grantId,
      ip,
      userAgent,
    },
    required: ['tokenType', 'applicationId'],
    description: 'Opt-in: a token was revoked at the revocation endpoint (RFC 7009). A refresh token’s revocation ends its grant too (`Grant.Revoked`).',
  },
  'Authorization.Failed': {
    properties: { applicationId, error, errorDescription, prompt: string, ip, userAgent },
    required: ['error'],
    description:
      'Opt-in: an authorization request was answered with an error; the answers a `prompt=none` request expects (`login_required`, `consent_required`, `interaction_required`, `account_selection_required`) are left out.',
  },
  'SignIn.Failed': {
    properties: {
      identifierType: { enum: ['username', 'email', 'phone'] },
      reason: {
        ...string,
        description:
          'The error code the sign-in was answered with (`session.invalid_credentials`, `session.verification_blocked_too_many_attempts`, `session.too_many_attempts`, `user.suspended`).',
      },
      interactionEvent: { enum: interactionKinds },
      applicationId,
      ip,
      userAgent,
    },
    required: ['reason', 'interactionEvent'],
    description:
      'Opt-in: a password sign-in through the sign-in experience (its pages or the Experience API) was refused. Never the password or the identifier’s value.',
  },
};

export const optInSchema = (event: OptInEvent): Schema => {
  const { properties, required, description } = optInFields[event];
  return closed(event, properties, required, description);
};
