import { ApiError, assertThat } from '../lib/errors.js';
import { assertIdentitiesFree } from '../lib/store/identities.js';
import { userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import { originOf } from '../management/origin.js';
import { accountCodeOwner, createCodes, type CodeTarget } from '../sign-in/codes.js';
import { createCounters, defaultLimits } from '../sign-in/counters.js';
import { budgetedHashing } from '../sign-in/hash-gate.js';
import { currentPasswordProof } from '../sign-in/proofs.js';
import { verificationHeader, type AccountApiDeps, type AccountKit, type AccountState } from './context.js';
import { createVerificationRecords } from './verifications.js';

const permissionDenied = (message: string) => new ApiError('verification_record.permission_denied', message);
const notUsable = () => permissionDenied('the verification has expired, was used, or is not this account’s');

export function createAccountKit(deps: AccountApiDeps): AccountKit {
  const { queries } = deps;
  const records = createVerificationRecords(deps.db);
  // Wrong passwords at the step-up: the account lockout of the sign-in (5 per 15 minutes, or the sentinel policy), so that a stolen token cannot guess the password.
  const counters = createCounters(deps.db, {
    limits: { ...defaultLimits, ...deps.limits },
    sentinel: async () => (await deps.signInSettings()).sentinelPolicy,
  });
  const codes = createCodes(deps.db);

  const codeOwner = (state: AccountState) => accountCodeOwner(state.user._id, state.auth.clientId);
  const ownTargets = (user: Pick<UserDocument, 'primaryEmail' | 'primaryPhone'>): CodeTarget[] => [
    ...(user.primaryEmail ? [{ type: 'email' as const, value: user.primaryEmail }] : []),
    ...(user.primaryPhone ? [{ type: 'phone' as const, value: user.primaryPhone }] : []),
  ];

  return {
    records,
    codes,
    counters,
    hashFor: budgetedHashing(counters, deps.hashing),
    passwords: deps.passwords,
    codeOwner,
    ownTargets,

    stepUpOf: (ctx) => {
      const id = ctx.get(verificationHeader);
      assertThat(id, () => permissionDenied(`a recent verification is needed: send its id as ${verificationHeader}`));
      return id;
    },

    // A made-up id costs the server one read, never a password hash.
    assertStepUpUsable: async (state, id) => {
      const usable =
        (await records.isSpendable(id, state.user._id, state.auth.clientId, currentPasswordProof(state.user))) ||
        (await codes.isSpendable(codeOwner(state), id, 'Account', ownTargets(state.user)));
      assertThat(usable, notUsable);
    },

    /**
     * A password record made with the password the account has now, or a verified code sent to an
     * email address or phone number the account has now, made with a token of this user and
     * application. The account is read again here, in the change's unit of work: a password or an
     * address changed since the request began (by another session, a reset, an administrator)
     * voids what proved the old one. 401 when it is unknown, expired, spent, another's, or proves
     * what the account no longer has.
     */
    spendStepUp: async (state, id) => {
      const user = await queries.users.findById(state.user._id);
      assertThat(user, notUsable);
      if (await records.spend(id, user!._id, state.auth.clientId, currentPasswordProof(user!))) return;
      const spent = await codes.spend(codeOwner(state), id, 'Account', { accept: ownTargets(user!) }).catch((error: unknown) => {
        if (error instanceof ApiError) return undefined;
        throw error;
      });
      assertThat(spent, notUsable);
    },

    update: async (ctx, set, first) => {
      const userId = ctx.state.user._id;
      return deps.write(originOf(ctx), async ({ intend, record }) => {
        await first?.();
        await intend({ entity: 'User', action: 'updated', id: userId });
        const before = await queries.users.findByIdOrThrow(userId);
        const changes = typeof set === 'function' ? set(before) : set;
        await assertIdentitiesFree(queries.users.collection, userId, changes.identityKeys ?? []);
        const after = await queries.users.update(userId, { ...changes, updatedAt: Date.now() });
        record({ entity: 'User', action: 'updated', id: userId, data: userToApi(after), changes: userChanges(before, after) });
        return after;
      });
    },
  };
}
