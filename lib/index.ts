/** oidc-identity's public API. */
export { createIdentity, type Identity, type IdentityOptions } from './identity.js';
export { openDatabase, attachDatabase, ensureIndexes, type Database } from './database.js';
export { startEmbeddedMongo, type EmbeddedMongo } from './embedded-mongo.js';
export { startStandaloneServer, providerPrefix, type StandaloneServer, type StandaloneOptions } from './standalone.js';
export { loadSettings, ConfigError, accessTokenAlgs, type Settings, type AccessTokenAlg } from './config.js';
export { mountApp } from './mount.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';
export { ApiError, type ApiErrorCode } from './errors.js';
export type { BootstrapCredentials } from './bootstrap.js';
