import type Provider from 'oidc-provider';

import type { Catalogs, Translator } from '../../i18n/index.js';
import type { SignInSettings } from '../../sign-in/settings.js';
import type { Caller } from '../service.js';
import type { ExperienceDocument } from '../state.js';
import type * as views from '../views/pages.js';

export type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** What a page handler gets: the interaction, its experience, the submitted form. */
export interface PageRequest {
  details: Details;
  experience: ExperienceDocument;
  form: URLSearchParams;
  caller: Caller;
  /** What the page the form came from is drawn with (an error is added when the handler throws). */
  page: views.FormContext;
  /** The application's name, on a consent page. */
  applicationName: string;
  /** The page's language: `ui_locales`, then `Accept-Language`. */
  t: Translator;
  /** How people may sign up and sign in: the forms follow it. */
  settings: SignInSettings;
  /** The second factors the identified user may prove now (for the MFA pages). */
  mfaFactors: Array<'Totp' | 'WebAuthn' | 'BackupCode'>;
  /** The social connectors the sign-in page offers. */
  social: Array<{ id: string; name: string }>;
  /** Whether the sign-in page offers single sign-on (an enterprise SSO connector is configured). */
  sso: boolean;
  /** The route's parameters (`uid`, `connectorId`). */
  params: Record<string, string>;
  /** Remembers this interaction for the social callback (a path-scoped, signed cookie). */
  rememberForCallback(): void;
}

export type PageResult = { redirect: string } | { html: string; status?: number };
export type PageHandler = (request: PageRequest) => Promise<PageResult>;
/** Draws the page a route shows, with the error a POST met (said at its field). */
export type PageRender = (request: PageRequest, error?: views.PageError) => string | Promise<string>;

export interface PagesOptions {
  branding: views.Branding;
  /** The languages of the pages and of the codes they send. */
  catalogs: Catalogs;
  /** Each API resource's name and its permissions' descriptions, for the consent page. */
  describeResources(indicators: string[]): Promise<Map<string, { name: string; scopes: Map<string, string | null> }>>;
  /**
   * The organizations a third-party application may be let to act in: those the user is a member
   * of, to choose from on the consent page, and the consent to the chosen ones (recorded).
   */
  organizationConsent: {
    choices(userId: string): Promise<Array<{ id: string; name: string }>>;
    give(applicationId: string, userId: string, organizationIds: string[], caller: Caller): Promise<void>;
  };
  /**
   * The organization chooser: the organizations the user may pick for this application (their
   * memberships; for a third-party application only those it was let into), and the check of a pick
   * (refused with an `OrganizationRefusal`).
   */
  organizationChooser: {
    choices(applicationId: string, userId: string): Promise<Array<{ id: string; name: string }>>;
    admit(organizationId: string, applicationId: string, userId: string): Promise<void>;
  };
  /** An organization's look (logos, colours), for pages of an authorization request that names it (`organization_id`). */
  organizationLook(organizationId: string): Promise<{ logoUrl?: string; darkLogoUrl?: string; primaryColor?: string; darkPrimaryColor?: string } | undefined>;
  /** Our public origin: social providers send the browser back to it. */
  origin: string;
  /** Whether a client is one of our first-party applications (consented without asking). */
  isFirstParty(clientId: string): Promise<boolean>;
  /** Whether the database may be read now; false while it cannot be reached or is not yet known to be ours. */
  databaseReady(): Promise<boolean>;
}
