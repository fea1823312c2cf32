/**
 * Waits until `items` (filled by a local server as messages arrive) holds one that `matches` and that
 * no earlier call took; takes and answers it. Polls every 25 ms, up to `timeoutMs`.
 */
export async function takeNext<T>(items: T[], taken: Set<T>, matches: (item: T) => boolean, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const item = items.find((candidate) => !taken.has(candidate) && matches(candidate));
    if (item) {
      taken.add(item);
      return item;
    }
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The 6-digit code a message says (`verification code is 123456`), or an error naming the message. */
export function codeIn(text: string, what: string): string {
  // The English message's phrase, else the one 6-digit number of a message in another language.
  const code = /verification code is (\d{6})/.exec(text)?.[1] ?? /(?<!\d)\d{6}(?!\d)/.exec(text)?.[0];
  if (!code) throw new Error(`no code in ${what}: ${text}`);
  return code;
}
