import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where the server may send requests on an operator's behalf (webhooks). By default not to
 * loopback, private, link-local or otherwise special addresses: a webhook URL must not become a
 * way to reach the server's own network (SSRF). Special-purpose ranges from RFC 6890 and its
 * IANA registries.
 */
const specialRanges: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'], // RFC 1918
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT, RFC 6598
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local, and cloud metadata services
  ['172.16.0.0', 12, 'ipv4'], // RFC 1918
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation
  ['192.168.0.0', 16, 'ipv4'], // RFC 1918
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation
  ['203.0.113.0', 24, 'ipv4'], // documentation
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, and broadcast
  ['::', 96, 'ipv6'], // unspecified, loopback, and IPv4-compatible (deprecated, RFC 4291 §2.5.5.1)
  ['64:ff9b::', 96, 'ipv6'], // NAT64 (RFC 6052): reaches IPv4 addresses, private ones included
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64 (RFC 8215)
  ['2001::', 32, 'ipv6'], // Teredo (RFC 4380): tunnels to IPv4 addresses
  ['2002::', 16, 'ipv6'], // 6to4 (RFC 3056): embeds an IPv4 address
  ['100::', 64, 'ipv6'], // discard
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['fc00::', 7, 'ipv6'], // unique local
  ['fe80::', 10, 'ipv6'], // link-local
  ['ff00::', 8, 'ipv6'], // multicast
];

const special = new BlockList();
for (const [address, prefix, family] of specialRanges) special.addSubnet(address, prefix, family);

export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  readonly code = 'ADDRESS_REFUSED';
}

export interface OutboundPolicy {
  /** Throws AddressRefusedError when `hostname` (a name or an IP literal) may not be reached as `address`. */
  check(hostname: string, address: string): void;
  /** A `lookup` for node:http that resolves, then refuses the whole name if any address is refused. */
  lookup: LookupFunction;
}

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** `host`, `1.2.3.4`, `1.2.3.0/24`, `::1`, `fd00::/8`; a TypeError names a malformed entry. */
function parseEntry(entry: string, hosts: Set<string>, ranges: BlockList) {
  const [address, prefix, extra] = entry.split('/');
  const version = isIP(address);
  if (extra !== undefined || (prefix !== undefined && version === 0)) throw new TypeError(`\`${entry}\` is neither a host name nor a CIDR range`);
  if (version === 0) {
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(entry)) throw new TypeError(`\`${entry}\` is not a host name`);
    hosts.add(entry.toLowerCase().replace(/\.$/, ''));
    return;
  }
  const bits = prefix === undefined ? (version === 4 ? 32 : 128) : Number(prefix);
  if (!/^\d{1,3}$/.test(prefix ?? '0') || bits > (version === 4 ? 32 : 128)) throw new TypeError(`\`${entry}\` has a bad prefix length`);
  ranges.addSubnet(address, bits, familyOf(address));
}

/**
 * The policy for an allow-list of host names (allowed whatever they resolve to) and of IP
 * addresses or CIDR ranges (allowed although special). Everything public is always allowed.
 */
export function createOutboundPolicy(allowList: string[] = []): OutboundPolicy {
  const hosts = new Set<string>();
  const ranges = new BlockList();
  for (const entry of allowList.filter(Boolean)) parseEntry(entry, hosts, ranges);
  const hostAllowed = (hostname: string) => hosts.has(hostname.toLowerCase().replace(/\.$/, ''));

  const check = (hostname: string, address: string) => {
    if (hostAllowed(hostname)) return;
    const family = familyOf(address);
    // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is checked as the IPv4 address it carries.
    if (special.check(address, family) && !ranges.check(address, family)) {
      // A name's address is not told: the caller must not learn what internal names resolve to.
      throw new AddressRefusedError(
        isIP(hostname.replace(/^\[|\]$/g, ''))
          ? `${address} is a private, loopback or reserved address`
          : `${hostname} resolves to a private, loopback or reserved address`,
      );
    }
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return (callback as (e: Error) => void)(error);
      try {
        // Every address, not only the first: a name that also points inside must not be reachable.
        for (const { address } of addresses) check(hostname, address);
      } catch (refused) {
        return (callback as (e: Error) => void)(refused as Error);
      }
      if (options.all) (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };

  return { check, lookup };
}

/** Whether the allow-list is well formed; the message names the first bad entry. */
export function allowListProblem(allowList: string[]): string | undefined {
  try {
    createOutboundPolicy(allowList);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
