import { grantRevocationCauses, sessionRevocationCauses, type LifecycleEvent } from '../catalog.js';
import { closed, string, stringList, type Schema } from './parts.js';

/** The provider's lifecycle: sign-outs, sessions and grants ended, replays caught. Fields at the top, as Logto's `PostSignIn`. */

const sessionId = { ...string, description: 'The session’s `uid`: the session routes’ `:sessionId`, and the `sessionId` of `PostSignIn`.' };
const grantId = { ...string, description: 'The grant’s id: every token issued under it carries it.' };
const userId = { ...string, description: 'The user the session or grant was for.' };
const applicationId = { ...string, description: 'The application (OAuth client).' };
const applicationIds = { ...stringList, description: 'The applications signed out of.' };
const ip = { ...string, description: 'The address of whoever made the request.' };
const userAgent = string;

const lifecycleFields: Record<LifecycleEvent, { properties: Record<string, unknown>; required: string[]; description: string }> = {
  PostSignOut: {
    properties: {
      sessionId,
      userId,
      applicationIds,
      initiatedBy: {
        enum: ['user', 'rp'],
        description: '`rp` when an application sent the user to sign out (its `client_id` or `id_token_hint`), `user` otherwise.',
      },
      ip,
      userAgent,
    },
    required: ['sessionId', 'userId', 'applicationIds', 'initiatedBy'],
    description:
      'A user signed out at the end-session endpoint (OpenID Connect RP-Initiated Logout): the session ended, or the named application’s part of it.',
  },
  'Session.Revoked': {
    properties: {
      sessionId,
      userId,
      applicationIds: { ...stringList, description: 'The applications the session had signed in to.' },
      cause: { enum: sessionRevocationCauses },
    },
    required: ['sessionId', 'userId', 'applicationIds', 'cause'],
    description:
      'A session ended by anything other than the user’s own sign-out: the user suspended, deleted, or their password reset; ended by an administrator (`DELETE /api/users/:userId/sessions[/:sessionId]`) or by the user (`DELETE /api/my-account/sessions/:sessionId`).',
  },
  'Grant.Created': {
    properties: {
      grantId,
      userId,
      applicationId,
      scopes: { ...stringList, description: 'The OpenID Connect scopes granted.' },
      resources: {
        type: 'array',
        items: { type: 'object', properties: { resource: string, scopes: stringList }, required: ['resource', 'scopes'], additionalProperties: false },
        description: 'Each API resource granted, with its permissions.',
      },
    },
    required: ['grantId', 'userId', 'applicationId', 'scopes', 'resources'],
    description: 'A user’s consent to an application: given on the consent page, or given for them (a first-party application).',
  },
  'Grant.Revoked': {
    properties: { grantId, userId, applicationId, cause: { enum: grantRevocationCauses } },
    required: ['grantId', 'cause'],
    description:
      'A grant ended, and every token under it: at the revocation endpoint, at sign-out, on a refresh token’s reuse or a code’s replay, with the user’s suspension, deletion or password reset, or ended by an administrator or the user (with a session, or on its own).',
  },
  'RefreshToken.ReuseDetected': {
    properties: { grantId, userId, applicationId, ip, userAgent },
    required: ['grantId', 'applicationId'],
    description: 'A refresh token was presented after it had been rotated: the grant is revoked (a stolen token, or a client’s bug).',
  },
  'AuthorizationCode.ReplayDetected': {
    properties: { grantId, applicationId, ip, userAgent },
    required: ['grantId', 'applicationId'],
    description: 'An authorization code was redeemed a second time (RFC 6749 §4.1.2): the grant and what it issued are revoked.',
  },
  'BackchannelLogout.Failed': {
    properties: {
      sessionId,
      userId,
      applicationId,
      sid: { ...string, description: 'The `sid` the logout token named.' },
      error: { ...string, description: 'Why the application’s back-channel logout URI did not take it, naming the URI (without user information or query).' },
    },
    required: ['userId', 'applicationId', 'sid', 'error'],
    description: 'An application’s back-channel logout URI did not accept the logout token (OpenID Connect Back-Channel Logout 1.0).',
  },
};

export const lifecycleSchema = (event: LifecycleEvent): Schema => {
  const { properties, required, description } = lifecycleFields[event];
  return closed(event, properties, required, description);
};
