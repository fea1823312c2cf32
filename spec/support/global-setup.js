// Runs before any suite, outside jest's module system, so it uses the built package
// (`npm test` builds first): one database server for the whole run, the embedded engine or
// the real MongoDB that MONGODB_URI names. Each suite then works in databases of its own.
import { startEmbeddedMongo } from '../../dist/lib/store/embedded-mongo.js';

export default async function globalSetup() {
  if (process.env.MONGODB_URI) {
    process.env.TEST_MONGODB_URI = process.env.MONGODB_URI;
    return;
  }
  const embedded = await startEmbeddedMongo();
  process.env.TEST_MONGODB_URI = embedded.uri;
  globalThis.embeddedMongo = embedded;
}
