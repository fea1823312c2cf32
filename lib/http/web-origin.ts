import { isIP } from 'node:net';

import type { Ajv } from 'ajv';

/** A DNS name of letters, digits and hyphens (RFC 1035 §2.3.1; the URL parser has lower-cased it and turned IDNs into A-labels). */
const dnsName = /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/;

/**
 * The origin of an http(s) URL, written anew from its parsed scheme, host and port, when its host
 * is a valid host name or IP address; undefined for anything else. What goes into a header (a
 * CSP's `img-src` or `form-action`) comes from here: the URL parser keeps characters such as `;`
 * in a host (`https://cdn.example%3Bsandbox/` has the host `cdn.example;sandbox`), which would end
 * a CSP directive and start another.
 */
export function webOrigin(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const { protocol, hostname, port } = parsed;
  if (protocol !== 'https:' && protocol !== 'http:') return undefined;
  const valid = dnsName.test(hostname) || isIP(hostname) === 4 || (hostname.startsWith('[') && isIP(hostname.slice(1, -1)) === 6);
  return valid ? `${protocol}//${hostname}${port ? `:${port}` : ''}` : undefined;
}

/**
 * JSON Schema formats for URLs that may reach a header, checked where they are saved (400 there,
 * rather than dropped later): `web-url`, an http(s) URL with a valid host; `header-safe-uri`, any
 * absolute URI, but one with an http(s) scheme must have a valid host.
 */
export function addWebUrlFormats(ajv: Ajv): Ajv {
  ajv.addFormat('web-url', { type: 'string', validate: (value: string) => webOrigin(value) !== undefined });
  ajv.addFormat('header-safe-uri', { type: 'string', validate: (value: string) => !/^https?:/i.test(value) || webOrigin(value) !== undefined });
  return ajv;
}
