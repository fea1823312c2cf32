import type { Db, IndexDescription } from 'mongodb';

import { expiring, type CollectionIndexes } from '../lib/store/database.js';
import type { EndedOfAccount } from '../hooks/lifecycle-events.js';
import { inUnit } from '../lib/store/session.js';

/** oidc-provider models we persist, each in a collection of its own. */
export const providerModels = [
  'Session',
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'InitialAccessToken',
  'RegistrationAccessToken',
  'Interaction',
  'ReplayDetection',
  'PushedAuthorizationRequest',
  'Grant',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
] as const;

/** Models that belong to a grant and are revoked with it (oidc-provider's `revokeByGrantId`). */
export const grantableModels = new Set<string>([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export const providerCollection = (model: string) => `oidc_${model}`;

/** Where and how each session began (`session-contexts.ts`), by the session's `uid`: shown by the session routes. */
export const sessionContexts = 'oidc_session_contexts';

function providerModelIndexes(model: string): IndexDescription[] {
  // By account, so that deleting or suspending a user can revoke its sessions, grants and tokens.
  const indexes = [expiring, { key: { accountId: 1 }, name: 'accountId', partialFilterExpression: { accountId: { $type: 'string' } } }];
  if (grantableModels.has(model)) indexes.push({ key: { grantId: 1 }, name: 'grantId' });
  if (model === 'Session') indexes.push({ key: { uid: 1 }, name: 'uid', unique: true, partialFilterExpression: { uid: { $type: 'string' } } });
  if (model === 'DeviceCode')
    indexes.push({ key: { userCode: 1 }, name: 'userCode', unique: true, partialFilterExpression: { userCode: { $type: 'string' } } });
  return indexes;
}

/** The provider's collections and their indexes. */
export const providerCollections: CollectionIndexes = {
  ...Object.fromEntries(providerModels.map((model) => [providerCollection(model), providerModelIndexes(model)])),
  [sessionContexts]: [expiring, { key: { accountId: 1 }, name: 'accountId' }],
};

/** Ends everything the provider keeps for an account: sessions, grants and tokens. Answers the sessions and grants it ended. */
export async function revokeAccount(db: Db, accountId: string): Promise<EndedOfAccount> {
  const stored = (model: string) => db.collection<{ _id: string; payload: string }>(providerCollection(model)).find({ accountId }, inUnit()).toArray();
  // One after the other: in a unit of work, a session takes one operation at a time.
  const sessions = await stored('Session');
  const grants = await stored('Grant');
  for (const model of providerModels) await db.collection(providerCollection(model)).deleteMany({ accountId }, inUnit());
  await db.collection(sessionContexts).deleteMany({ accountId }, inUnit());
  const payloadOf = (document: { payload: string }) =>
    JSON.parse(document.payload) as { uid?: string; authorizations?: Record<string, unknown>; clientId?: string };
  return {
    // Named by `uid`, as the session routes name them: the stored id (`jti`) is the value of the session's cookie.
    sessions: sessions.map((session) => ({ id: payloadOf(session).uid ?? session._id, applicationIds: Object.keys(payloadOf(session).authorizations ?? {}) })),
    grants: grants.map((grant) => ({ id: grant._id, applicationId: payloadOf(grant).clientId })),
  };
}
