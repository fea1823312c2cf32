export default async function globalTeardown() {
  await globalThis.embeddedMongo?.stop();
}
