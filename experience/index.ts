import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';

import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';

import { useClientAddress } from '../lib/http/client-address.js';
import type { Logger } from '../lib/logger.js';
import { mountApp } from '../lib/http/mount.js';
import type { ApplicationDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { AccountRevocationCause, ChangeKey } from '../hooks/catalog.js';
import type { OrganizationAccess } from '../provider/organization-access.js';
import { apiErrors } from '../lib/http/api-errors.js';
import { experienceApi } from './api/index.js';
import { experiencePrefix, pagesPrefix } from './http.js';
import type { SignInFailure } from './deps.js';
import { createCodes } from '../sign-in/codes.js';
import { createExperienceMfa } from './mfa/index.js';
import { createExperienceSocial } from './social.js';
import { createExperienceSso } from './sso.js';
import { logtoSamlPrefix, samlEndpoints, samlPrefix } from './saml-endpoints.js';
import { createSamlServiceProvider } from '../sso/saml.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { Upstream } from '../social/upstream.js';
import { secretBox } from '../lib/mfa/secret-box.js';
import { relyingPartyOf } from '../lib/mfa/webauthn.js';
import { createCounters, defaultLimits, type Limits } from '../sign-in/counters.js';
import type { HashGate } from '../sign-in/hash-gate.js';
import type { EmailConnector } from '../sign-in/email.js';
import type { SmsConnector } from '../sign-in/sms.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { ExceptionReport, InteractionReport } from '../hooks/outbox.js';
import { experiencePages } from './pages/index.js';
import { createExperienceService, type ExperienceService } from './service.js';
import { createExperienceStore } from './state.js';
import type { OfferedConnectors } from './offered-connectors.js';
import { colorsOfQuery, passkeyScriptPath, stylesheet, stylesheetPath, webAuthnLibraryPath, type Branding } from './views/pages.js';
import type { Catalog, Catalogs } from '../i18n/index.js';
import { passkeyScript } from './passkey-script.js';
import type { Passwords } from '../lib/password.js';

export { experiencePrefix, pagesPrefix } from './http.js';
export { logConnector, smtpConnector, type EmailConnector, type EmailMessage } from '../sign-in/email.js';
export { httpSmsConnector, logSmsConnector, twilioSmsConnector, SmsSendError, type SmsConnector, type SmsMessage } from '../sign-in/sms.js';
export type { Branding } from './views/pages.js';
export type { Catalog, MessageKey } from '../i18n/index.js';
export type { ExperienceResult } from './service.js';

export { defaultBranding } from './settings.js';

export interface ExperienceOptions {
  branding?: Partial<Branding>;
  /**
   * Catalogs by language tag, over the built-in `en`, `de` and `ja`, key by key: correct a
   * message of a built-in language, or add a language (what it leaves out is said in English).
   */
  catalogs?: Record<string, Catalog>;
  /** Where verification codes go; without one they are written to the log (development only). */
  email?: EmailConnector;
  /** Where phone codes go; without one they are written to the log (development only). */
  sms?: SmsConnector;
  /** Attempt limits, each defaulting as docs/sign-in.md says. */
  limits?: Partial<Limits>;
  /** Password hashes one process runs at once (default 8); more are refused with 429. */
  maxConcurrentHashes?: number;
}

export interface ExperienceDeps {
  db: Db;
  provider: Provider;
  queries: Queries;
  /** Ends every session, grant and token the provider keeps for a user (a password reset). */
  revokeAccount(userId: string, cause: AccountRevocationCause): Promise<void>;
  write: Writer<ChangeKey>;
  logger: Logger;
  email: EmailConnector;
  sms: SmsConnector;
  /** How people may sign up and sign in (`/api/sign-in-exp`). */
  signInSettings(): Promise<SignInSettings>;
  /** Announces an exception event (Identifier.Lockout, Message.RateLimited) to the webhooks. */
  reportException(report: ExceptionReport): Promise<void>;
  /** Announces an interaction event no sign-in ends with (PostResetPassword). */
  reportInteraction(report: InteractionReport): Promise<void>;
  /** The opt-in `SignIn.Failed` (never awaited). */
  reportSignInFailure?(fields: SignInFailure): void;
  branding: Branding;
  /** The languages of the pages and of the codes they send. */
  catalogs: Catalogs;
  /** The public origin (`https://id.example.com`): the JSON API refuses requests from any other. */
  origin: string;
  bodyLimit: number;
  /** Trust `X-Forwarded-Proto` and `-Host` (behind a reverse proxy). */
  proxy: boolean;
  /** The caller's address, as the trusted proxies tell it. */
  clientAddress: (req: IncomingMessage) => string;
  /** Attempt limits (tests and operators may tighten or loosen them). */
  limits?: Partial<Limits>;
  /** The process's cap on concurrent password hashes, shared with the Account API. */
  hashing: HashGate;
  /** Hashes and checks passwords at the configured cost (`passwordHashing`). */
  passwords: Passwords;
  /** Whether the database may be read now (false while it is unreachable, or not yet known to be ours): the pages answer 503. */
  databaseReady(): Promise<boolean>;
  /** Keys that sign the experience cookie (the provider's cookie keys). */
  cookieKeys: Koa['keys'];
  /** The 32-byte key that seals MFA secrets at rest. */
  mfaKey: Buffer;
  /** The social connectors and the upstream sign-in through them. */
  connectors: ConnectorStore;
  upstream: Upstream;
  /** The enterprise SSO connectors. */
  ssoConnectors: SsoConnectorStore;
  /** What the sign-in page offers (`loadOfferedConnectors`), kept by the caller as long as no connector changes. */
  offeredConnectors(): Promise<OfferedConnectors>;
  /** An application, as the caller keeps it (the provider's cache, cleared by the application's changes). */
  findApplication(id: string): Promise<ApplicationDocument | undefined>;
  /** Who may act in an organization (the organization chooser checks a pick as a token request would be). */
  organizationAccess: OrganizationAccess;
  /** Whether signing in to this application takes a second factor whatever the MFA policy (the admin console). */
  mfaRequiredBy?: (applicationId: string) => boolean;
}

export interface Experience {
  service: ExperienceService;
  /** Serves the pages under `/interaction`, their stylesheet, and the JSON API under `/api/experience`. */
  middleware: Middleware;
}

/** The interaction URL oidc-provider sends a browser to. */
export const interactionUrl = (uid: string) => `${pagesPrefix}/${uid}`;

/** @simplewebauthn/browser's UMD bundle (`window.SimpleWebAuthnBrowser`): its package exports no path to it, so it is found beside its entry point. */
function webAuthnBrowserBundle(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

export function createExperience(deps: ExperienceDeps): Experience {
  const { db, provider, queries, logger, branding } = deps;
  const store = createExperienceStore(db);
  const counters = createCounters(db, { limits: { ...defaultLimits, ...deps.limits }, sentinel: async () => (await deps.signInSettings()).sentinelPolicy });
  const mfa = createExperienceMfa({
    queries,
    store,
    counters,
    signInSettings: deps.signInSettings,
    box: secretBox(deps.mfaKey),
    rp: relyingPartyOf(deps.origin, branding.productName),
    productName: branding.productName,
    ...(deps.mfaRequiredBy && { mfaRequiredBy: deps.mfaRequiredBy }),
  });
  const saml = createSamlServiceProvider({ db, origin: deps.origin });
  const service = createExperienceService({
    provider,
    queries,
    write: deps.write,
    logger,
    email: deps.email,
    sms: deps.sms,
    signInSettings: deps.signInSettings,
    reportException: deps.reportException,
    reportInteraction: deps.reportInteraction,
    ...(deps.reportSignInFailure && { reportSignInFailure: deps.reportSignInFailure }),
    productName: branding.productName,
    catalogs: deps.catalogs,
    store,
    codes: createCodes(db),
    counters,
    mfa,
    social: createExperienceSocial({ store, connectors: deps.connectors, upstream: deps.upstream, origin: deps.origin }),
    sso: createExperienceSso({ db, store, ssoConnectors: deps.ssoConnectors, upstream: deps.upstream, saml, origin: deps.origin }),
    connectors: deps.connectors,
    ssoConnectors: deps.ssoConnectors,
    offeredConnectors: deps.offeredConnectors,
    hashing: deps.hashing,
    passwords: deps.passwords,
    revokeAccount: deps.revokeAccount,
  });

  const api = experienceApi(service, { origin: deps.origin, bodyLimit: deps.bodyLimit, catalogs: deps.catalogs });
  const apiApp = new Koa();
  apiApp.silent = true;
  apiApp.proxy = deps.proxy;
  apiApp.keys = deps.cookieKeys;
  apiApp.use(useClientAddress(deps.clientAddress));
  apiApp.use(apiErrors((error, { method, path }) => logger.error(`${method} ${path} failed`, error)));
  apiApp.use(api.routes());
  apiApp.use(api.allowedMethods());

  /** The organizations a user is a member of, by name. */
  const organizationsOf = async (userId: string) => {
    const organizations = await queries.organizations.findByIds(await queries.links.organizationUsers.leftsOf(userId));
    return organizations.map(({ _id, name }) => ({ id: _id, name })).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  };
  const pages = experiencePages(service, provider, {
    branding,
    catalogs: deps.catalogs,
    origin: deps.origin,
    databaseReady: deps.databaseReady,
    async describeResources(indicators) {
      const found = await Promise.all(indicators.map((indicator) => queries.resources.findByIndicator(indicator)));
      const resources = found.filter((resource) => resource !== null);
      const scopes = await queries.resources.scopes.findForResources(resources.map(({ _id }) => _id));
      return new Map(
        resources.map((resource) => [
          resource.indicator,
          { name: resource.name, scopes: new Map(scopes.filter((scope) => scope.resourceId === resource._id).map((scope) => [scope.name, scope.description])) },
        ]),
      );
    },
    isFirstParty: async (clientId) => {
      const application = await deps.findApplication(clientId);
      return application !== undefined && !application.isThirdParty;
    },
    async organizationLook(organizationId) {
      const organization = await queries.organizations.findById(organizationId);
      if (!organization) return undefined;
      const { branding = {}, color = {} } = organization;
      return { logoUrl: branding.logoUrl, darkLogoUrl: branding.darkLogoUrl, primaryColor: color.primaryColor, darkPrimaryColor: color.darkPrimaryColor };
    },
    organizationChooser: {
      // The user's organizations; for a third-party application, those the user let it into.
      async choices(applicationId, userId) {
        const mine = await organizationsOf(userId);
        if (!(await deps.findApplication(applicationId))?.isThirdParty) return mine;
        const allowed = new Set(await queries.consentOrganizations.organizationsOf(applicationId, userId));
        return mine.filter(({ id }) => allowed.has(id));
      },
      admit: async (organizationId, applicationId, userId) => void (await deps.organizationAccess.ofUser(organizationId, applicationId, userId)),
    },
    organizationConsent: {
      choices: organizationsOf,
      // Recorded as the Management API's consent routes record it, made by the interaction.
      give: (applicationId, userId, organizationIds, caller) =>
        deps.write(
          { ip: caller.ip, ...(caller.userAgent && { userAgent: caller.userAgent }), interaction: { event: 'SignIn', applicationId } },
          async ({ record }) => {
            const memberOf = new Set(await queries.links.organizationUsers.leftsOf(userId));
            const added = await queries.consentOrganizations.add(
              applicationId,
              userId,
              organizationIds.filter((id) => memberOf.has(id)),
            );
            if (added.length > 0) {
              record({
                entity: 'Application',
                action: 'consentOrganizations.updated',
                id: applicationId,
                data: { userId, addedOrganizationIds: added, removedOrganizationIds: [] },
              });
            }
          },
        ),
    },
  });
  const pagesApp = new Koa();
  pagesApp.proxy = deps.proxy;
  pagesApp.keys = deps.cookieKeys;
  pagesApp.use(useClientAddress(deps.clientAddress));
  pagesApp.on('error', (error) => logger.error('A sign-in page failed', error));
  pagesApp.use(pages.routes());
  pagesApp.use(pages.allowedMethods());

  const css = stylesheet(branding);
  // Static assets of the pages, from our origin: the stylesheet, the WebAuthn browser library and our passkey script.
  const assets = new Map<string, { type: string; body: string }>([
    [stylesheetPath, { type: 'text/css', body: css }],
    [webAuthnLibraryPath, { type: 'application/javascript', body: webAuthnBrowserBundle() }],
    [passkeyScriptPath, { type: 'application/javascript', body: passkeyScript }],
  ]);
  // An application's own colours: the stylesheet drawn in them, kept for the few applications there are.
  const applicationStyles = new Map<string, string>();
  const styleFor = (query: URLSearchParams) => {
    const colors = colorsOfQuery(query);
    if (!colors) return undefined;
    const key = `${colors.primaryColor}${colors.darkPrimaryColor}`;
    let css = applicationStyles.get(key);
    if (css === undefined) {
      if (applicationStyles.size >= 500) applicationStyles.delete(applicationStyles.keys().next().value!);
      css = stylesheet(colors);
      applicationStyles.set(key, css);
    }
    return { type: 'text/css', body: css };
  };
  const serveStylesheet: Middleware = async (ctx, next) => {
    if (ctx.method !== 'GET') return next();
    const asset = (ctx.path === stylesheetPath && styleFor(new URLSearchParams(ctx.querystring))) || assets.get(ctx.path);
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = asset.body;
  };
  // SAML's endpoints: our service provider metadata per connector, and the assertion consumer the IdP posts to.
  const samlApp = new Koa();
  samlApp.silent = true;
  samlApp.proxy = deps.proxy;
  samlApp.use(useClientAddress(deps.clientAddress));
  samlApp.use(apiErrors((error, { method, path }) => logger.error(`${method} ${path} failed`, error)));
  const samlRoutes = samlEndpoints(service, deps.ssoConnectors, saml);
  samlApp.use(samlRoutes.routes());
  samlApp.use(samlRoutes.allowedMethods());

  const serveApi = mountApp(experiencePrefix, apiApp);
  const serveSaml = mountApp(samlPrefix, samlApp);
  const serveLogtoSaml = mountApp(logtoSamlPrefix, samlApp);
  const servePages = mountApp(pagesPrefix, pagesApp);

  return {
    service,
    middleware: compose([serveStylesheet, serveApi, serveSaml, serveLogtoSaml, servePages]),
  };
}
