import { packageVersion } from '../lib/version.js';
import type { HookDocument } from './models.js';
import type { SendRequest } from './send.js';
import { activeKeyPairs, activeKeys, logtoSignature, signatureHeader } from './signing.js';

/**
 * The request that delivers one event to one hook. The body is serialized once and the
 * signatures are computed over exactly those bytes. The event's `sequence`, entity and `version`
 * are in the body and, for a receiver that routes before it parses, in headers. The hook's own headers may replace
 * `user-agent` and `content-type`, never the signature headers.
 */
export function webhookRequest(hook: HookDocument, eventId: string, payload: Record<string, unknown>, now = new Date()): SendRequest {
  const body = Buffer.from(JSON.stringify({ ...payload, hookId: hook._id }));
  const timestamp = Math.floor(now.getTime() / 1000);
  // HMAC `v1` unless the hook asked for `v1a` alone; Logto's own header goes with `v1`, as it uses the same secret.
  const schemes = hook.config.signatures ?? ['v1'];
  const keys = schemes.includes('v1') ? activeKeys(hook.signingKeys, now) : [];
  const pairs = schemes.includes('v1a') ? activeKeyPairs(hook.signingKeyPairs, now) : [];
  const { sequence, version, entity } = payload as { sequence?: number; version?: number; entity?: { type: string; id: string } };
  return {
    url: hook.config.url,
    body,
    headers: {
      'user-agent': `oidc-identity/${packageVersion}`,
      'content-type': 'application/json',
      ...hook.config.headers,
      'webhook-id': eventId,
      // The event's place in the one order, and among its entity's events (`hooks/sequencer.ts`).
      ...(sequence !== undefined && { 'webhook-sequence': String(sequence) }),
      ...(entity && { 'webhook-entity': `${entity.type}:${entity.id}` }),
      ...(version !== undefined && { 'webhook-entity-version': String(version) }),
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(keys, eventId, timestamp, body, pairs),
      ...(keys.length > 0 && { 'logto-signature-sha-256': logtoSignature(keys[0], body) }),
    },
  };
}
