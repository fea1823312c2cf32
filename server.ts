/** `npm start`: the standalone server, configured from the environment (see README, Settings). */
import { ConfigError, loadSettings } from './settings.js';
import { consoleLogger } from './lib/logger.js';

async function main() {
  let settings;
  try {
    settings = loadSettings();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  // Loaded only once the settings are good, so that a bad one is the only line printed
  // (oidc-provider prints notices as soon as it is imported).
  const { startStandaloneServer } = await import('./standalone.js');
  const server = await startStandaloneServer(settings, { logger: consoleLogger });
  consoleLogger.info(`oidc-identity listening on port ${server.port}, base URL ${server.url}`);
  consoleLogger.info(`  issuer            ${server.issuer}`);
  consoleLogger.info(`  discovery         ${server.issuer}/.well-known/openid-configuration`);
  consoleLogger.info(`  Management API    ${server.identity.managementApiIndicator}`);
  if (server.createdCredentials) {
    const { clientId, clientSecret } = server.createdCredentials;
    consoleLogger.info('Created a machine-to-machine application for the Management API (shown once, keep it):');
    consoleLogger.info(`  client id         ${clientId}`);
    consoleLogger.info(`  client secret     ${clientSecret}`);
  }

  let closing = false;
  const shutdown = (why: string, code = 0) => {
    if (closing) return;
    closing = true;
    consoleLogger.info(`${why}, closing`);
    server.close().then(
      () => process.exit(code),
      (error: unknown) => {
        consoleLogger.error('close failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM received'));
  process.on('SIGINT', () => shutdown('SIGINT received'));
  // Exits 1, so that a supervisor starts it again on the database as it now is.
  void server.failed.then((error) => shutdown(`cannot go on: ${error.message}`, 1));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `startup failed: ${error.message}` : error);
  process.exit(1);
});
