/** `npm start`: the standalone server, configured from the environment (docs/configuration.md). */
import { ConfigError, loadSettings } from './settings.js';
import { createLogger } from './lib/logger.js';

async function main() {
  let settings;
  try {
    settings = loadSettings();
    // `npm start -- --in-memory`: the embedded engine's data in memory only, as `DATA_DIR=` does.
    if (process.argv.includes('--in-memory')) settings = { ...settings, dataDir: undefined };
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
  const logger = createLogger(settings.log);
  const server = await startStandaloneServer(settings, { logger });
  logger.info('oidc-identity listening', {
    port: server.port,
    baseUrl: server.url,
    issuer: server.issuer,
    discovery: `${server.issuer}/.well-known/openid-configuration`,
    managementApi: server.identity.managementApiIndicator,
    apiReference: `${server.url}/api/docs`,
    ...(server.consoleUrl && { console: server.consoleUrl }),
  });
  if (server.createdCredentials) {
    const { clientId, clientSecret } = server.createdCredentials;
    // On the terminal, not in the log stream: a secret has no place in collected logs.
    process.stdout.write(
      `Created a machine-to-machine application for the Management API (shown once, keep it):\n  client id         ${clientId}\n  client secret     ${clientSecret}\n`,
    );
  }

  if (server.createdAdministrator) {
    const { username, password, offeredTotp } = server.createdAdministrator;
    process.stdout.write(
      `Created the admin console's first administrator (shown once, keep it; a second factor is enrolled at the first sign-in):\n  console           ${server.consoleUrl}\n  username          ${username}\n  password          ${password}\n` +
        (offeredTotp ? `Authenticator apps are now offered as a second factor (policy NoPrompt: no one else is asked to enrol).\n` : ''),
    );
  }

  let closing = false;
  const shutdown = (why: string, code = 0) => {
    if (closing) return;
    closing = true;
    logger.info(`${why}, closing`);
    server.close().then(
      () => process.exit(code),
      (error: unknown) => {
        logger.error('close failed', error);
        process.exit(1);
      },
    );
  };
  // Started by a parent with an IPC channel (a test run, a supervisor that wants it so): it goes
  // when the parent goes, whatever way the parent ended (a kill, a crash, Ctrl-C).
  if (process.send) process.once('disconnect', () => shutdown('the parent process is gone'));
  process.on('SIGTERM', () => shutdown('SIGTERM received'));
  process.on('SIGINT', () => shutdown('SIGINT received'));
  // Exits 1, so that a supervisor starts it again on the database as it now is.
  void server.failed.then((error) => shutdown(`cannot go on: ${error.message}`, 1));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `startup failed: ${error.message}` : error);
  process.exit(1);
});
