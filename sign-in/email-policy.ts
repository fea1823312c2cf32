import { createRequire } from 'node:module';

import { ApiError } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { onFirstUse } from '../lib/on-first-use.js';

/**
 * Logto's `emailBlocklistPolicy`: which email addresses may become an account's (at registration,
 * when a profile or the Account API adds one). Existing accounts still sign in with theirs.
 * - `blockSubaddressing`: no `+tag` in the local part (`ada+shop@example.com`);
 * - `customBlocklist`: addresses (`ada@example.com`) and domains (`@example.com`) refused; `*`
 *   stands for any run of characters (`foo*@example.com`, `@*.example.com`, `@example.*`);
 * - `customAllowlist`: when it names anything, only matching addresses are allowed (and the
 *   blocklist still refuses within it);
 * - `blockDisposableAddresses`: domains of the public list of disposable mail services
 *   (`disposable-email-domains`, read at its first use), and their subdomains where the list says so.
 * Compared as every address here is (`emailKey`: NFKC, case-folded).
 */
export interface EmailPolicy {
  blockDisposableAddresses?: boolean;
  blockSubaddressing?: boolean;
  customBlocklist?: string[];
  customAllowlist?: string[];
}

/** An address or a domain (`@...`), with `*` wildcards; no spaces, one `@` at most. */
const entry = { type: 'string', minLength: 2, maxLength: 254, pattern: '^[^@\\s]*@[^@\\s]+$' } as const;
export const emailPolicySchema = {
  type: 'object',
  properties: {
    blockDisposableAddresses: { type: 'boolean' },
    blockSubaddressing: { type: 'boolean' },
    customBlocklist: { type: 'array', items: entry, maxItems: 1000 },
    customAllowlist: { type: 'array', items: entry, maxItems: 1000 },
  },
  additionalProperties: false,
} as const;

/**
 * Whether `text` matches `pattern`, where `*` stands for any run of characters: the classic
 * two-pointer match (back to the last `*` on a mismatch), at most length × length steps, so that
 * no entry can make a check slow (a regular expression of many `*` could backtrack for long).
 */
function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      resume = t;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/** Whether the address (an `emailKey`) matches one of the entries: a domain entry its domain, an address entry all of it. */
function matchesAny(entries: string[], address: string): boolean {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return entries.some((raw) => {
    const item = emailKey(raw);
    return item.startsWith('@') ? globMatches(item.slice(1), domain) : globMatches(item, address);
  });
}

// The list (about 120,000 domains) is read at the first check that asks for it, not at start.
const disposableDomains = onFirstUse(async () => {
  const require = createRequire(import.meta.url);
  return {
    exact: new Set(require('disposable-email-domains') as string[]),
    withSubdomains: require('disposable-email-domains/wildcard.json') as string[],
  };
});

async function isDisposable(domain: string): Promise<boolean> {
  const { exact, withSubdomains } = await disposableDomains();
  return exact.has(domain) || withSubdomains.some((parent) => domain === parent || domain.endsWith(`.${parent}`));
}

const notAllowed = (email: string) =>
  new ApiError('session.email_blocklist.email_not_allowed', `the email address "${email}" is not allowed here; choose another`, { email });

/** Refuses (422, Logto's codes) an address the policy does not let become an account's. */
export async function assertEmailAllowed(policy: EmailPolicy | undefined, email: string): Promise<void> {
  if (!policy) return;
  const address = emailKey(email);
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (policy.blockSubaddressing && local.includes('+')) {
    throw new ApiError('session.email_blocklist.email_subaddressing_not_allowed', 'an email address with a +tag is not allowed here');
  }
  if (policy.customBlocklist?.length && matchesAny(policy.customBlocklist, address)) throw notAllowed(email);
  if (policy.customAllowlist?.length && !matchesAny(policy.customAllowlist, address)) throw notAllowed(email);
  if (policy.blockDisposableAddresses && (await isDisposable(domain))) throw notAllowed(email);
}
