import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/**
 * Which proxies in front of the server are trusted to say who their client was
 * (`X-Forwarded-For`): none, how many (each appends the address it saw), or which addresses.
 */
export type ProxyTrust = { hops: number } | { proxies: string[] };

export const noProxy: ProxyTrust = { hops: 0 };

/** `::ffff:203.0.113.7` is 203.0.113.7. */
const plain = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address);

function blockListOf(proxies: string[]): BlockList {
  const list = new BlockList();
  for (const entry of proxies) {
    const [address, bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/** Why a `TRUST_PROXY` list is not one of addresses and CIDR ranges, or undefined when it is. */
export function proxyListProblem(proxies: string[]): string | undefined {
  for (const entry of proxies) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return `\`${entry}\` is not an IP address or CIDR range`;
    if (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))) return `\`${entry}\` has a bad prefix length`;
  }
  return undefined;
}

/**
 * The address of the client as the nearest trusted proxy saw it. `X-Forwarded-For` is a list
 * that each proxy appends to, so only its right end is written by proxies we trust; its left end
 * is whatever the client sent. Reading from the right, past the trusted proxies, gives the first
 * address no trusted proxy vouches for: the client's.
 */
export function createClientAddress(trust: ProxyTrust): (req: IncomingMessage) => string {
  const trusted = 'proxies' in trust ? blockListOf(trust.proxies) : undefined;
  const isTrusted = (address: string) => trusted!.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  const known = new WeakMap<IncomingMessage, string>();

  function resolve(req: IncomingMessage): string {
    const peer = plain(req.socket.remoteAddress ?? '');
    if ('hops' in trust && trust.hops === 0) return peer;
    const header = req.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((entry) => plain(entry.trim()))
      .filter(Boolean);
    // From the nearest hop (our peer) outwards.
    const chain = [peer, ...forwarded.reverse()];
    if ('hops' in trust) {
      const address = chain[Math.min(trust.hops, chain.length - 1)];
      return isIP(address) ? address : peer;
    }
    let index = 0;
    while (index < chain.length - 1 && isIP(chain[index]) && isTrusted(chain[index])) index += 1;
    // A trusted proxy that passed on something that is not an address vouches for no one: it is the client.
    return isIP(chain[index]) ? chain[index] : chain[index - 1];
  }

  return (req) => {
    let address = known.get(req);
    if (address === undefined) known.set(req, (address = resolve(req)));
    return address;
  };
}

/**
 * The key that limits count a client address under: an IPv4 address itself, an IPv6 address by
 * its /64 (one subscriber's network: its hosts choose the rest of the address freely).
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // A trailing dotted IPv4 part stands for two groups.
  const width = (groups: string[]) => groups.reduce((sum, group) => sum + (group.includes('.') ? 2 : 1), 0);
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - width(left) - width(right))).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Koa middleware: `ctx.ip` becomes the client address as the trusted proxies tell it. */
export const useClientAddress =
  (address: (req: IncomingMessage) => string) => (ctx: { req: IncomingMessage; request: { ip: string } }, next: () => Promise<unknown>) => {
    ctx.request.ip = address(ctx.req);
    return next();
  };
