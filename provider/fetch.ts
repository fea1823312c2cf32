import { isIP } from 'node:net';

import { onFirstUse } from '../lib/on-first-use.js';
import type { OutboundPolicy } from '../lib/outbound-addresses.js';
import { asGlobalFetch } from './internals.js';

/** Redirects followed at most, for a request that asks them followed. */
const maxRedirects = 5;

/**
 * oidc-provider's `fetch` (back-channel logout, an application's `jwksUri`), through the same
 * outbound policy as webhooks: a name that resolves to a private, loopback or reserved address,
 * or such an address itself, is refused unless the allow-list names it. It takes the place of
 * oidc-provider's own guard, which would refuse those addresses even when allowed.
 *
 * Names are checked when they are resolved (the dispatcher's lookup), addresses before each
 * request. Redirects are followed here, hop by hop, so that every hop is checked: a redirect to
 * an address literal is never resolved, so the lookup alone would not see it.
 */
export function createProviderFetch(policy: OutboundPolicy): typeof fetch {
  // undici, loaded at the first outbound request (most starts make none).
  const undici = onFirstUse(async () => {
    const { Agent, fetch } = await import('undici');
    return { fetch, dispatcher: new Agent({ connect: { lookup: policy.lookup } }) };
  });
  const checkAddress = (url: URL) => {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`the URL's scheme ${url.protocol} is not http or https`);
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) policy.check(literal, literal);
  };
  const guarded = async (input: string | URL | Request, init: RequestInit = {}) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init.method ?? 'GET').toUpperCase();
    // Only a request without a body is followed; any other answer is the caller's to read.
    const follow = (init.redirect ?? 'follow') === 'follow' && (method === 'GET' || method === 'HEAD');
    const { fetch: undiciFetch, dispatcher } = await undici();
    for (let hop = 0; ; hop += 1) {
      checkAddress(url);
      // oidc-provider hands its own dispatcher; ours replaces it.
      const response = await undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), redirect: 'manual', dispatcher });
      const location = response.headers.get('location');
      if (!follow || response.status < 300 || response.status > 399 || !location) return response;
      await response.body?.cancel();
      if (hop >= maxRedirects) throw new TypeError(`more than ${maxRedirects} redirects`);
      url = new URL(location, url);
    }
  };
  return asGlobalFetch(guarded);
}
