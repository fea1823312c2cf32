import type Provider from 'oidc-provider';

import type { Catalogs } from '../i18n/index.js';
import type { AccountRevocationCause, ChangeKey, InteractionKind } from '../hooks/catalog.js';
import type { ExceptionReport, InteractionReport } from '../hooks/outbox.js';
import type { Logger } from '../lib/logger.js';
import type { SignInInteraction } from '../provider/sessions.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { Codes } from '../sign-in/codes.js';
import type { Counters } from '../sign-in/counters.js';
import type { EmailConnector } from '../sign-in/email.js';
import type { HashGate } from '../sign-in/hash-gate.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { SmsConnector } from '../sign-in/sms.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import type { ExperienceMfa } from './mfa/index.js';
import type { OfferedConnectors } from './offered-connectors.js';
import type { ExperienceSocial } from './social.js';
import type { ExperienceSso } from './sso.js';
import type { ExperienceStore } from './state.js';
import type { Passwords } from '../lib/password.js';

/** What the sign-in experience's flows are built with, and who asks them (`Caller`). */

/** Who is asking, for limits, audit and the events: the request's address, agent and route. */
/** What `SignIn.Failed` says of a refused sign-in. */
export interface SignInFailure {
  identifierType: string;
  reason: string;
  interactionEvent: string;
  ip: string;
  userAgent?: string;
}

export interface Caller {
  ip: string;
  userAgent?: string;
  method: string;
  path: string;
  /** The language the person reads (a catalog's tag): the codes sent for them are written in it. */
  locale?: string;
}

export interface ExperienceServiceDeps {
  provider: Provider;
  queries: Queries;
  write: Writer<ChangeKey>;
  store: ExperienceStore;
  codes: Codes;
  counters: Counters;
  /** The per-process cap on concurrent password hashes. */
  hashing: HashGate;
  /** Hashes and checks passwords at the configured cost. */
  passwords: Passwords;
  email: EmailConnector;
  sms: SmsConnector;
  /** How people may sign up and sign in (`/api/sign-in-exp`), from the per-process cache. */
  signInSettings(): Promise<SignInSettings>;
  /** Announces an exception event to the webhooks (a lockout, a refused code send). */
  reportException(report: ExceptionReport): Promise<void>;
  /** Announces an interaction event no sign-in ends with (a password reset). */
  reportInteraction(report: InteractionReport): Promise<void>;
  /** The opt-in `SignIn.Failed`: a refused password sign-in (recorded only while a hook names it; never awaited). */
  reportSignInFailure?(fields: SignInFailure): void;
  productName: string;
  /** The languages a code's message may be written in. */
  catalogs?: Catalogs | undefined;
  logger: Logger;
  /** Ends every session, grant and token the provider keeps for a user. */
  revokeAccount(userId: string, cause: AccountRevocationCause): Promise<void>;
  /** MFA: the factors' verifications, binding, and the submit's gate. */
  mfa: ExperienceMfa;
  /** Social sign-in through the connectors. */
  social: ExperienceSocial;
  /** Enterprise SSO through the SSO connectors. */
  sso: ExperienceSso;
  connectors: ConnectorStore;
  ssoConnectors: SsoConnectorStore;
  /** What the sign-in page offers (`loadOfferedConnectors`), from the per-process cache. */
  offeredConnectors(): Promise<OfferedConnectors>;
}

/** What the interaction result carries besides the login, for the events to name the flow. */
export interface ExperienceResult {
  identityEvent: InteractionKind;
  /** What the sign-in proved (`provider/session-contexts.ts` keeps it with the session). */
  signIn: SignInInteraction;
}
