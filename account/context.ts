import type { IncomingMessage } from 'node:http';

import type Router from '@koa/router';
import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';

import type { ErrorLogger } from '../lib/http/api-errors.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import type { RelyingParty } from '../lib/mfa/webauthn.js';
import type { UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { ChangeKey, SessionRevocationCause } from '../hooks/catalog.js';
import type { EndedOfAccount } from '../hooks/lifecycle-events.js';
import type { ExceptionReport } from '../hooks/outbox.js';
import type { Catalogs } from '../i18n/index.js';
import type { SessionStore } from '../provider/sessions.js';
import type { RouteContext } from '../management/origin.js';
import type { Codes, CodeTarget } from '../sign-in/codes.js';
import type { Counters, Limits } from '../sign-in/counters.js';
import type { BudgetedHashing, HashGate } from '../sign-in/hash-gate.js';
import type { CodeMessenger } from '../sign-in/messages.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { Upstream } from '../social/upstream.js';
import type { createVerificationRecords } from './verifications.js';
import type { Passwords } from '../lib/password.js';

export const accountPrefix = '/api/my-account';
export const verificationsPrefix = '/api/verifications';
/** The header that carries a step-up verification record, as Logto names it. */
export const verificationHeader = 'logto-verification-id';

export interface AccountApiDeps {
  db: Db;
  provider: Provider;
  queries: Queries;
  write: Writer<ChangeKey>;
  /** Sends the verification codes; none when the sign-in experience (and so its connectors) is off. */
  sendCode: CodeMessenger | undefined;
  /** The languages a code's message may be written in: the request's Accept-Language picks one. */
  catalogs?: Catalogs | undefined;
  /** How people may sign up and sign in: an identifier the settings require cannot be removed. */
  signInSettings(): Promise<SignInSettings>;
  /** Announces a code send refused by a limit (Message.RateLimited). */
  reportException(report: ExceptionReport): Promise<void>;
  /** The attempt limits, as the sign-in experience's. */
  limits?: Partial<Limits>;
  /** The process's cap on concurrent password hashes, shared with the sign-in experience. */
  hashing: HashGate;
  /** Hashes and checks passwords at the configured cost. */
  passwords: Passwords;
  /** Seals TOTP secrets. */
  mfaBox: SecretBox;
  /** The WebAuthn relying party (our name, host and origin). */
  rp: RelyingParty;
  /** The social connectors, and upstream sign-in through them (linking an identity). */
  connectors: ConnectorStore;
  upstream: Upstream;
  bodyLimit: number;
  log: ErrorLogger;
  proxy: boolean;
  clientAddress: (req: IncomingMessage) => string;
  /** Users' sessions and grants as the provider keeps them. */
  sessions: SessionStore;
  /** Announces the sessions and grants a route ended, in its unit of work. */
  announceEnded(userId: string, ended: EndedOfAccount, cause: SessionRevocationCause): Promise<void>;
}

/** Who is calling: the user of the access token, through which first-party application, with which scopes. */
export interface AccountState {
  /** `sessionUid`: the provider session the token was issued in, if any (`isCurrent` in the session list). */
  auth: { clientId: string; scopes: Set<string>; sessionUid?: string | undefined };
  user: UserDocument;
}

export type AccountRouter = Router<AccountState>;
export type AccountContext = RouteContext & { state: AccountState };

/** What every part of the Account API shares: the stores, the limits, the step-up and the one way to change the account. */
export interface AccountKit {
  records: ReturnType<typeof createVerificationRecords>;
  codes: Codes;
  counters: Counters;
  /** Every hash and check of a password counts toward the address's budget and takes a slot of the process's cap. */
  hashFor: BudgetedHashing;
  passwords: Passwords;
  /** Who owns the codes sent for this account and application. */
  codeOwner(state: AccountState): string;
  /** The account's own email address and phone number, to which a code is a step-up. */
  ownTargets(user: Pick<UserDocument, 'primaryEmail' | 'primaryPhone'>): CodeTarget[];
  /** The step-up record this request names (401 without one); spent later, by `spendStepUp`, in the change's unit of work. */
  stepUpOf(ctx: { get(name: string): string }): string;
  /** Refuses (401) a step-up that `spendStepUp` would refuse, without spending it: before anything costly. */
  assertStepUpUsable(state: AccountState, id: string): Promise<void>;
  /** Spends the step-up in the change's unit of work (401 when it is not good). */
  spendStepUp(state: AccountState, id: string): Promise<void>;
  /**
   * Applies `set` to the caller's account in a unit of work, announced as `User.Data.Updated` with
   * what changed. `first` runs first in the unit (spending the verifications the change needs), so
   * that with transactions a change that fails leaves them unspent.
   */
  update(
    ctx: AccountContext,
    set: Partial<UserDocument> | ((current: UserDocument) => Partial<UserDocument>),
    first?: () => Promise<void>,
  ): Promise<UserDocument>;
}

export const recordId = { type: 'string', minLength: 1, maxLength: 64 } as const;
/** `{verificationRecordId, expiresAt}`, as Logto's verification routes answer. */
export const recordAnswer = {
  type: 'object',
  properties: { verificationRecordId: { type: 'string' }, expiresAt: { type: 'string' } },
  required: ['verificationRecordId', 'expiresAt'],
} as const;

/** `{password}`, for the step-up and for a new password alike (the policy checks a new one). */
export const passwordBody = {
  type: 'object',
  properties: { password: { type: 'string', minLength: 1, maxLength: 256 } },
  required: ['password'],
  additionalProperties: false,
} as const;
