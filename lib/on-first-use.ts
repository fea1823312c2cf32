/**
 * A value made at its first use and kept: for a dependency only some deployments use (passkeys,
 * SAML, SMTP, outbound fetches), so that loading it is not part of every start. A load that
 * failed is tried again at the next use.
 */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}
