import { isIP } from 'node:net';

import type { Hooks } from '../../hooks/index.js';
import type { HookConfigDocument } from '../../hooks/models.js';
import { ApiError, assertThat } from '../../lib/errors.js';
import { AddressRefusedError } from '../../lib/outbound-addresses.js';
import { type HookConfig } from '../schemas/hooks.js';

/** Headers that the signature or the transport own: a hook's own headers may not set them. */
// Ours to set, and the hop-by-hop headers (RFC 9110 §7.6.1, §7.8, §10.1.1; `Proxy-*`), which would
// change how the request travels rather than what it says.
const reservedHeaders =
  /^(webhook-id|webhook-timestamp|webhook-signature|logto-signature-sha-256|host|content-length|transfer-encoding|connection|expect|upgrade|te|keep-alive|trailer|proxy-.*)$/i;

/** Checks a hook's URL and headers beyond their schema: literal private addresses, reserved headers. */
export function checkConfig(
  { url, headers = {}, excludeClientIds, sources, ordering, maxPerSecond, signatures }: HookConfig,
  hooks: Hooks,
): HookConfigDocument {
  const reserved = Object.keys(headers).find((name) => reservedHeaders.test(name));
  assertThat(
    reserved === undefined,
    () => new ApiError('guard.invalid_input', `body.config.headers may not set \`${reserved}\``, { field: `body.config.headers.${reserved}` }),
  );
  // The schema admits anything that starts like a URL; the WHATWG parser decides.
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError('guard.invalid_input', 'body.config.url is not a valid URL', { field: 'body.config.url' });
  }
  // Credentials in a URL travel wherever the URL is shown (events about the hook, logs): they go in a header.
  assertThat(
    parsed.username === '' && parsed.password === '',
    () =>
      new ApiError('guard.invalid_input', 'body.config.url may not carry user information (user:password@); send credentials in config.headers', {
        field: 'body.config.url',
      }),
  );
  const { hostname } = parsed;
  // `localhost.` is `localhost`: a trailing dot only makes the name fully qualified.
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  try {
    // Names are checked when a delivery resolves them; addresses written in the URL can be checked now.
    if (isIP(host)) hooks.policy.check(host, host);
    else if (host === 'localhost' || host.endsWith('.localhost')) hooks.policy.check(host, '127.0.0.1');
  } catch (error) {
    if (error instanceof AddressRefusedError)
      throw new ApiError('hook.url_not_allowed', `body.config.url: ${error.message}; see HOOKS_ALLOWED_HOSTS`, { field: 'body.config.url' });
    throw error;
  }
  return {
    url,
    headers,
    ...(excludeClientIds && { excludeClientIds }),
    ...(sources && { sources }),
    ...(ordering && { ordering }),
    ...(maxPerSecond !== undefined && { maxPerSecond }),
    ...(signatures && { signatures }),
  };
}
