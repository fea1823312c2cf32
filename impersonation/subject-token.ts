import { hkdfSync } from 'node:crypto';

import { secretBox } from '../lib/mfa/secret-box.js';

/**
 * What a subject token says, sealed inside it: everything the exchange needs besides the
 * spending write. The user's role ids are those it held when the token was issued; a change to
 * them, the user's suspension or deletion, and the impersonation's revocation void the token
 * (`voidSubjectTokens`), so the exchange can trust them without reading.
 */
export interface SubjectTokenFacts {
  userId: string;
  /** The client that asked for it (the integrator's backend). */
  clientId: string;
  impersonationId: string;
  /** RFC 8693 §4.4 `may_act`: the one user who may exchange it. */
  actorId?: string;
  reason?: string;
  ticketId?: string;
  context: Record<string, unknown>;
  roleIds: string[];
  /** The user is an embedding host's account (`hostAccounts`), not ours: the exchange asks the host again, since nothing the host changes voids the token. */
  hostAccount?: true;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Additional data of every sealed subject token: a value sealed for another purpose does not open as one. */
const purpose = 'oidc-identity subject token';

/**
 * Seals subject tokens with AES-256-GCM under a key derived (HKDF-SHA256) from the deployment's
 * secret, so that they are opaque to whoever carries them (the context is the integrator's) and
 * cannot be made or altered without the key.
 */
export function subjectTokenSeal(deploymentKey: Buffer) {
  const box = secretBox(Buffer.from(hkdfSync('sha256', deploymentKey, Buffer.alloc(0), purpose, 32)));
  return {
    seal: (facts: SubjectTokenFacts): string => box.seal(JSON.stringify(facts), purpose),
    /** The facts of a token sealed here, or undefined for anything else (forged, altered, truncated, another deployment's). */
    open(token: string): SubjectTokenFacts | undefined {
      let facts: Partial<SubjectTokenFacts>;
      try {
        facts = JSON.parse(box.open(token, purpose)) as Partial<SubjectTokenFacts>;
      } catch {
        return undefined;
      }
      const wellFormed =
        typeof facts.userId === 'string' &&
        typeof facts.clientId === 'string' &&
        typeof facts.impersonationId === 'string' &&
        typeof facts.expiresAt === 'number' &&
        Array.isArray(facts.roleIds) &&
        typeof facts.context === 'object' &&
        facts.context !== null;
      return wellFormed ? (facts as SubjectTokenFacts) : undefined;
    },
  };
}

export type SubjectTokenSeal = ReturnType<typeof subjectTokenSeal>;
