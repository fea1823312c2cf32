import { isIP } from 'node:net';

import { Agent, fetch as undiciFetch } from 'undici';

import type { OutboundPolicy } from '../lib/outbound-addresses.js';

/**
 * oidc-provider's `fetch` (back-channel logout, an application's `jwksUri`), through the same
 * outbound policy as webhooks: a name that resolves to a private, loopback or reserved address,
 * or such an address itself, is refused unless the allow-list names it. It takes the place of
 * oidc-provider's own guard, which would refuse those addresses even when allowed.
 */
export function createProviderFetch(policy: OutboundPolicy): typeof fetch {
  const dispatcher = new Agent({ connect: { lookup: policy.lookup } });
  const guarded = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) policy.check(literal, literal);
    // oidc-provider hands its own dispatcher; ours replaces it.
    return undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher });
  };
  return guarded as unknown as typeof fetch;
}
