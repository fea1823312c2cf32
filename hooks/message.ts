import { packageVersion } from '../lib/version.js';
import type { HookDocument } from './models.js';
import type { SendRequest } from './send.js';
import { activeKeys, logtoSignature, signatureHeader } from './signing.js';

/**
 * The request that delivers one event to one hook. The body is serialized once and the
 * signatures are computed over exactly those bytes. The hook's own headers may replace
 * `user-agent` and `content-type`, never the signature headers.
 */
export function webhookRequest(hook: HookDocument, eventId: string, payload: Record<string, unknown>, now = new Date()): SendRequest {
  const body = Buffer.from(JSON.stringify({ ...payload, hookId: hook._id }));
  const timestamp = Math.floor(now.getTime() / 1000);
  const keys = activeKeys(hook.signingKeys, now);
  return {
    url: hook.config.url,
    body,
    headers: {
      'user-agent': `oidc-identity/${packageVersion}`,
      'content-type': 'application/json',
      ...hook.config.headers,
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(keys, eventId, timestamp, body),
      'logto-signature-sha-256': logtoSignature(keys[0], body),
    },
  };
}
