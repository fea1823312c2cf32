// Runs before any suite, outside jest's module system, so it uses the built package
// (`npm test` builds first): one database server for the whole run, the embedded engine or
// the real MongoDB that MONGODB_URI names. Each suite then works in databases of its own.
import { startEmbeddedMongo } from '../../dist/lib/store/embedded-mongo.js';
import { generateSigningKeys } from '../../dist/provider/keys.js';

export default async function globalSetup() {
  // One set of signing keys for the servers the suites start (`spec/support/server.ts`), made by the service's own generator.
  process.env.TEST_SIGNING_KEYS = JSON.stringify(await generateSigningKeys());
  if (process.env.MONGODB_URI) {
    process.env.TEST_MONGODB_URI = process.env.MONGODB_URI;
    return;
  }
  const embedded = await startEmbeddedMongo();
  process.env.TEST_MONGODB_URI = embedded.uri;
  globalThis.embeddedMongo = embedded;
}
