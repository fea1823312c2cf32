import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createOutboundPolicy } from '../../lib/outbound-addresses.js';
import { createProviderFetch } from '../../provider/fetch.js';

/** A loopback server answering each path with `answer(path)`, recording the paths it was asked for. */
async function serve(host: string, answer: (path: string) => { status: number; location?: string; body?: string }) {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const { status, location, body } = answer(req.url ?? '');
    if (location) res.setHeader('location', location);
    res.statusCode = status;
    res.end(body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, asked, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** What oidc-provider fetches (an application's jwksUri, back-channel logout) cannot be steered inside by a redirect. */
describe("the provider's outbound fetch", () => {
  it('checks every redirect hop: an allowed host cannot redirect to an address the policy refuses, even as a literal', async () => {
    // 127.0.0.2 is loopback too, and not on the allow-list.
    const inside = await serve('127.0.0.2', () => ({ status: 200, body: 'internal' }));
    const outside = await serve('127.0.0.1', (path) =>
      path === '/jwks'
        ? { status: 200, body: '{"keys":[]}' }
        : path === '/hop'
          ? { status: 302, location: '/jwks' }
          : { status: 302, location: `${inside.url}/latest/meta-data` },
    );
    try {
      const fetch = createProviderFetch(createOutboundPolicy(['127.0.0.1']));
      // An allowed redirect is followed.
      const followed = await fetch(`${outside.url}/hop`, { method: 'GET' });
      expect([followed.status, await followed.text()]).toEqual([200, '{"keys":[]}']);
      // A redirect inside is refused before any connection, and nothing reaches the inside server.
      await expect(fetch(`${outside.url}/steer`, { method: 'GET' })).rejects.toThrow(/private, loopback or reserved/);
      expect(inside.asked).toEqual([]);
      // A request that asks for redirects not to be followed gets the redirect itself (back-channel logout does).
      const manual = await fetch(`${outside.url}/steer`, { method: 'POST', redirect: 'manual', body: 'x' });
      expect(manual.status).toBe(302);
      expect(inside.asked).toEqual([]);
    } finally {
      await Promise.all([inside.close(), outside.close()]);
    }
  });

  it('refuses an address literal and a name that resolves inside, unless allowed', async () => {
    const fetch = createProviderFetch(createOutboundPolicy([]));
    await expect(fetch('http://127.0.0.1:8080/jwks')).rejects.toThrow(/private, loopback or reserved/);
    // A name is refused when it is resolved: the connection fails, naming the policy as its cause.
    await expect(fetch('http://localhost:8080/jwks')).rejects.toMatchObject({
      cause: { code: 'ADDRESS_REFUSED', message: expect.stringMatching(/localhost resolves to a private, loopback or reserved address/) },
    });
    await expect(fetch('file:///etc/passwd')).rejects.toThrow(/not http or https/);
  });
});
