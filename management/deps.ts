import type { ConnectorStore } from '../social/connectors.js';
import type { Upstream } from '../social/upstream.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import type { SubjectTokenSeal } from '../impersonation/subject-token.js';
import type { ImpersonationPolicy } from '../impersonation/policy.js';
import type { ImpersonationQueries } from '../impersonation/queries.js';
import type { AccountLookup } from '../impersonation/accounts.js';
import type Router from '@koa/router';

import type { AccountRevocationCause, ChangeKey, SessionRevocationCause } from '../hooks/catalog.js';
import type { EndedOfAccount } from '../hooks/lifecycle-events.js';
import type { SessionStore } from '../provider/sessions.js';
import type { Hooks } from '../hooks/index.js';
import type { Database } from '../lib/store/database.js';
import type { ApplicationDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { SearchGate } from '../lib/http/search.js';
import type { InvitationMessage } from './organizations/invitations.js';
import type { Passwords } from '../lib/password.js';

export type OidcKeyType = 'private-keys' | 'cookie-keys';
export type SigningKeyFamily = 'EC' | 'OKP' | 'RSA';

/** A key as the Management API shows it: never its material. */
export interface OidcKeyView {
  id: string;
  createdAt: number;
  signingKeyAlgorithm?: SigningKeyFamily;
  alg?: string;
  /** `current` signs; `previous` only verifies; `next` is staged, published ahead and signing from `activatesAt`. */
  status: 'next' | 'current' | 'previous';
  activatesAt?: number;
}

/** The provider's key ring as the key routes use it (`provider/oidc-keys.ts`). */
export interface KeyRotation {
  list: (type: OidcKeyType) => Promise<OidcKeyView[]>;
  rotate: (type: OidcKeyType, family?: SigningKeyFamily, gracePeriodSeconds?: number) => Promise<OidcKeyView[]>;
  remove: (type: OidcKeyType, id: string) => Promise<void>;
}

/** What the Management API's routes need, built once and passed in: no module-level state. */
export interface ManagementDeps {
  database: Database;
  queries: Queries;
  /** The one write path: every mutation runs through it and records what it changed. */
  write: Writer<ChangeKey>;
  /**
   * oidc-provider's own check of the client an application stands for, so that we never store one
   * it would refuse; rejects with the provider's `error_description`.
   */
  validateApplication(application: ApplicationDocument): Promise<void>;
  /**
   * The JWT customizer's dry run, in a sandbox apart from the one tokens use: the claims a script
   * would add (reserved ones dropped), or why it failed.
   */
  dryRunCustomClaims(
    script: string,
    input: { token: Record<string, unknown>; context: Record<string, unknown>; environmentVariables: Record<string, string> },
  ): Promise<{ claims: Record<string, unknown> } | { failure: { code: string; message: string } }>;
  /** Hashes and checks passwords at the configured cost. */
  passwords: Passwords;
  /** Lifetime of a subject token, in seconds. */
  subjectTokenTtl: number;
  /** Seals subject tokens with what the exchange needs (`impersonation/subject-token.ts`). */
  subjectTokenSeal: SubjectTokenSeal;
  /** The impersonation policy as the exchange reads it (the per-process cache its changes clear). */
  impersonationPolicy(): Promise<ImpersonationPolicy>;
  /** Impersonation's storage: subject tokens and the audit (`impersonation/queries.ts`). */
  impersonation: ImpersonationQueries;
  /** Who may be impersonated or act: our users, then an embedding host's accounts (`impersonation/accounts.ts`). */
  impersonationAccounts: AccountLookup;
  /** Webhooks: the hooks API's queries, test sends and the worker's wake-up. */
  hooks: Hooks;
  /** The provider's signing and cookie keys, when they are ours to rotate (not a host's own). */
  keyRing: KeyRotation | undefined;
  /** Ends every session, grant and token the provider keeps for a user (suspension, deletion). */
  revokeAccount(userId: string, cause: AccountRevocationCause): Promise<void>;
  /** Users' sessions and grants as the provider keeps them (`provider/sessions.ts`). */
  sessions: SessionStore;
  /** Announces the sessions and grants a route ended, in its unit of work. */
  announceEnded(userId: string, ended: EndedOfAccount, cause: SessionRevocationCause): Promise<void>;
  /** Indicator of the Management API itself. */
  managementApiIndicator: string;
  /** Seals the MFA secrets an operator adds. */
  mfaBox: SecretBox;
  /** The issuer name authenticator apps show beside a TOTP code. */
  productName: string;
  /** The social connectors (their client secrets sealed). */
  connectors: ConnectorStore;
  /** The enterprise SSO connectors. */
  ssoConnectors: SsoConnectorStore;
  /** Runs a list's search, with at most a few by a written pattern at once (`lib/http/search.ts`). */
  searching: SearchGate;
  /** The public email domains no SSO connector may claim (the built-in list unless the operator gives one). */
  ssoPublicEmailDomains?: readonly string[] | undefined;
  /** Our public origin (a SAML connector's service provider URLs). */
  origin: string;
  /** Fetches from outside (a SAML IdP's metadata URL), through the outbound guard. */
  outboundFetch: typeof globalThis.fetch;
  /** Talks to upstream providers (a code given as connector data is exchanged through it). */
  upstream: Upstream;
  /**
   * Sends an organization invitation by email, under the send limits (429 past them); undefined
   * when the service has no email connector (the sign-in experience off).
   */
  sendInvitation?: ((to: string, message: InvitationMessage) => Promise<void>) | undefined;
}

export type ApiRouter = Router;
