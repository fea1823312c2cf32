/**
 * The three steps of impersonation, end to end, as a support engineer's application runs them:
 *   1. ask the integrator's backend for impersonation (it checks the engineer may);
 *   2. the backend gets a subject token from the Management API (inside step 1's answer);
 *   3. exchange the subject token at /oidc/token (RFC 8693), naming the engineer as actor.
 * The result is an access token that represents the user, bound to one resource, with `act`.
 */
import * as oauth from 'openid-client';

export interface ImpersonationFlowOptions {
  /** The identity service's issuer, and where its discovery can be fetched. */
  issuer: string;
  /** The engineer's application: allowed to exchange tokens. */
  clientId: string;
  clientSecret?: string;
  /** The integrator backend's URL. */
  backendUrl: string;
  /** The engineer's access token for the integrator backend's API. */
  actorAccessToken: string;
  /** The engineer's own openid access token, sent as the actor token. */
  actorIdentityToken: string;
  userId: string;
  reason: string;
  ticketId: string;
  /** The API the impersonation token is for. */
  resource: string;
  scope?: string;
}

export async function impersonate(options: ImpersonationFlowOptions) {
  // Step 1 (and 2, behind it).
  const response = await fetch(`${options.backendUrl}/impersonate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.actorAccessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: options.userId, reason: options.reason, ticketId: options.ticketId }),
  });
  const answer = (await response.json()) as { subjectToken?: string; expiresIn?: number; error?: string };
  if (!response.ok || !answer.subjectToken) throw new Error(`impersonation refused: ${answer.error ?? response.status}`);

  // Step 3.
  const config = await oauth.discovery(
    new URL(options.issuer),
    options.clientId,
    options.clientSecret,
    options.clientSecret ? oauth.ClientSecretBasic(options.clientSecret) : oauth.None(),
    { execute: options.issuer.startsWith('http:') ? [oauth.allowInsecureRequests] : [] },
  );
  return oauth.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
    subject_token: answer.subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    actor_token: options.actorIdentityToken,
    actor_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    resource: options.resource,
    ...(options.scope && { scope: options.scope }),
  });
}
