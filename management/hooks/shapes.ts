import type { AttemptDocument, DeliveryDocument, HookConfigDocument, HookDocument } from '../../hooks/models.js';
import { activeKeyPairs, generateSigningKeyPair } from '../../hooks/signing.js';

/**
 * The hook as the API shows it: never its signing secret (shown once, when created or rotated),
 * and the `v1a` public keys that sign now, if it has any (public by nature).
 */
export function hookToApi({ _id, name, events, config, enabled, disabledReason, signingKeyPairs, createdAt, updatedAt }: HookDocument, now = new Date()) {
  const publicKeys = activeKeyPairs(signingKeyPairs, now).map(({ publicKey }) => publicKey);
  return { id: _id, name, events, config, enabled, disabledReason, ...(publicKeys.length > 0 && { publicKeys }), createdAt, updatedAt };
}

/** A key pair made now, for a hook that asks for `v1a` and has none that signs. */
export function keyPairsFor(config: HookConfigDocument, pairs: HookDocument['signingKeyPairs'], now: Date): HookDocument['signingKeyPairs'] | undefined {
  if (!config.signatures?.includes('v1a') || activeKeyPairs(pairs, now).length > 0) return undefined;
  return [{ ...generateSigningKeyPair(), createdAt: now, expiresAt: null }];
}

export const attemptToApi = ({ _id, startedAt, durationMs, ok, statusCode, response, error }: AttemptDocument) => ({
  id: _id,
  startedAt: startedAt.getTime(),
  durationMs,
  ok,
  statusCode,
  response,
  error,
});

export function deliveryToApi(delivery: DeliveryDocument, attempts: AttemptDocument[] = []) {
  const { _id, hookId, eventId, event, state, attempts: attemptCount, nextAttemptAt, lastStatus, lastError, createdAt, updatedAt, parked } = delivery;
  return {
    id: _id,
    hookId,
    eventId,
    event,
    state,
    attemptCount,
    // A parked delivery (waiting for the one before it about the same entity) is due at no time yet.
    nextAttemptAt: state === 'pending' && !parked ? nextAttemptAt.getTime() : null,
    ...(parked && { parked: true }),
    lastStatus,
    lastError,
    attempts: attempts.map(attemptToApi),
    createdAt: createdAt.getTime(),
    updatedAt: updatedAt.getTime(),
  };
}
