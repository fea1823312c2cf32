/**
 * The standalone server started from code rather than `npm start`: settings from the
 * environment, plus a look at what it created.
 *
 *   npm run build && node dist/examples/standalone.js
 */
import { pathToFileURL } from 'node:url';

import { consoleLogger, loadSettings, startStandaloneServer, type Settings, type StandaloneOptions } from '../index.js';

export async function startStandaloneExample(settings: Settings = loadSettings(), options: StandaloneOptions = {}) {
  const server = await startStandaloneServer(settings, options);
  const logger = options.logger ?? consoleLogger;
  logger.info(`standalone oidc-identity on ${server.url}; discovery at ${server.issuer}/.well-known/openid-configuration`);
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await startStandaloneExample();
  process.once('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
  });
  process.once('SIGINT', () => {
    void server.close().then(() => process.exit(0));
  });
}
