import type { IncomingMessage } from 'node:http';

import { addressKey, createClientAddress } from '../../lib/http/client-address.js';

const request = (peer: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('client addresses behind proxies (X-Forwarded-For is written from the right by each proxy)', () => {
  it('trusts no header without TRUST_PROXY: the peer is the client, whatever it claims', () => {
    expect(createClientAddress({ hops: 0 })(request('203.0.113.9', '198.51.100.1'))).toBe('203.0.113.9');
  });

  it('with one proxy, takes the address that proxy saw (the rightmost entry), not the leftmost one the client wrote', () => {
    const address = createClientAddress({ hops: 1 });
    expect(address(request('10.0.0.2', '1.2.3.4, 198.51.100.7'))).toBe('198.51.100.7');
    expect(address(request('10.0.0.2', '198.51.100.7'))).toBe('198.51.100.7');
    expect(address(request('::ffff:10.0.0.2'))).toBe('10.0.0.2');
  });

  it('with two proxies, takes the address the outer proxy saw', () => {
    expect(createClientAddress({ hops: 2 })(request('10.0.0.2', 'spoofed, 198.51.100.7, 10.0.0.9'))).toBe('198.51.100.7');
  });

  it('with proxy addresses, walks from the right past the trusted ones', () => {
    const address = createClientAddress({ proxies: ['10.0.0.0/8', '2001:db8::1'] });
    expect(address(request('10.0.0.2', '1.2.3.4, 198.51.100.7, 10.1.1.1'))).toBe('198.51.100.7');
    // A peer that is not a trusted proxy is the client, whatever it forwards.
    expect(address(request('192.0.2.50', '198.51.100.7'))).toBe('192.0.2.50');
    expect(address(request('2001:db8::1', '2001:db8:aaaa:bbbb::5'))).toBe('2001:db8:aaaa:bbbb::5');
    // A trusted proxy passing on garbage vouches for no one.
    expect(address(request('10.0.0.2', 'not-an-address'))).toBe('10.0.0.2');
  });

  it('counts IPv6 clients per /64 and IPv4 clients per address', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    expect(addressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('198.51.100.7')).toBe('198.51.100.7');
  });
});
