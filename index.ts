/** oidc-identity's public API. */
export { createIdentity, type Identity, type IdentityOptions } from './identity.js';
export { openDatabase, attachDatabase, ensureIndexes, type Database } from './lib/store/database.js';
export { driverTimeouts, defaultDatabaseTimeouts, type DatabaseTimeouts } from './lib/store/availability.js';
export { startEmbeddedMongo, type EmbeddedMongo } from './lib/store/embedded-mongo.js';
export { startStandaloneServer, providerPrefix, type StandaloneServer, type StandaloneOptions } from './standalone.js';
export { loadSettings, type Settings } from './settings.js';
export { ConfigError, accessTokenAlgs, type AccessTokenAlg } from './lib/config.js';
export { defaultHookSettings, type HookSettings } from './hooks/settings.js';
export { hookEvents, interactionEvents, type InteractionReport } from './hooks/index.js';
export { mountApp } from './lib/http/mount.js';
export { consoleLogger, silentLogger, type Logger } from './lib/logger.js';
export { systemClock, type Clock } from './lib/clock.js';
export { ApiError, type ApiErrorCode } from './lib/errors.js';
export type { BootstrapCredentials } from './management/bootstrap.js';
export {
  smtpConnector,
  logConnector,
  httpSmsConnector,
  twilioSmsConnector,
  logSmsConnector,
  SmsSendError,
  type SmsConnector,
  type SmsMessage,
  defaultBranding,
  type EmailConnector,
  type EmailMessage,
  type Branding,
  type ExperienceOptions,
  type Catalog,
  type MessageKey,
} from './experience/index.js';
export { verifyImpersonationAudit, type AuditRecord, type AuditVerification } from './impersonation/verify.js';
export { defaultImpersonationPolicy, type ImpersonationPolicy } from './impersonation/policy.js';
export type { HostAccount, HostAccounts } from './impersonation/accounts.js';
export { nodeHandler } from './lib/http/node-handler.js';
export { createLogger, logLevels, logFormats } from './lib/logger.js';
export { requestIds, currentRequestId } from './lib/request-context.js';
export { accessLog } from './lib/http/access-log.js';
export { createMetrics, metricsEndpoint, type Metrics } from './lib/metrics.js';
