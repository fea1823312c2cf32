import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { ConfigError, loadSettings } from '../../settings.js';
import { startTestServer, type TestServer } from '../support/server.js';

const discovery = 'GET /oidc/.well-known/openid-configuration HTTP/1.1\r\nHost: localhost\r\n\r\n';

/** A raw connection to the server: each response's head as it arrives, and whether the server closed it. */
async function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  let closed = false;
  const ended = new Promise<void>((resolve) => socket.once('close', () => ((closed = true), resolve())));
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return {
    /** Sends a request and answers the head of its response. */
    async request(raw: string): Promise<string> {
      const start = received.length;
      socket.write(raw);
      for (let waited = 0; !received.slice(start).includes('\r\n\r\n'); waited += 20) {
        if (closed) throw new Error('the server closed the connection');
        if (waited > 60_000) throw new Error('no response in 60 s');
        await sleep(20);
      }
      return received.slice(start).split('\r\n\r\n')[0]!;
    },
    ended,
    isClosed: () => closed,
    close: () => socket.destroy(),
  };
}

describe('HTTP_KEEP_ALIVE_MS: how long an idle connection is kept', () => {
  const servers: TestServer[] = [];
  afterAll(() => Promise.all(servers.map((server) => server.close())));

  it('is announced (`Keep-Alive: timeout=`), and the server closes a connection idle for that long', async () => {
    const server = await startTestServer('keep-alive-1s', { HTTP_KEEP_ALIVE_MS: '1000' });
    servers.push(server);
    const connection = await rawConnection(server.port);
    const head = await connection.request(discovery);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/^keep-alive: timeout=1$/im);
    // Closed by the server, with nothing asked of it: the test waits for the close, not for a time.
    await connection.ended;
  });

  it('0 keeps an idle connection until the client closes it: no timeout announced, and a request after more than the default 5 s idle is answered on it', async () => {
    const server = await startTestServer('keep-alive-off', { HTTP_KEEP_ALIVE_MS: '0' });
    servers.push(server);
    const connection = await rawConnection(server.port);
    try {
      const head = await connection.request(discovery);
      expect(head).toMatch(/^connection: keep-alive$/im);
      expect(head).not.toMatch(/^keep-alive:/im);
      await sleep(6000);
      expect(connection.isClosed()).toBe(false);
      expect(await connection.request(discovery)).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      connection.close();
    }
  });

  it('is 5 s by default, and refuses what is not a whole number of milliseconds from 0 to 3600000', () => {
    expect(loadSettings({}).httpKeepAliveMs).toBe(5000);
    expect(loadSettings({ HTTP_KEEP_ALIVE_MS: '65000' }).httpKeepAliveMs).toBe(65000);
    for (const bad of ['-1', '1.5', '3600001', 'soon']) expect(() => loadSettings({ HTTP_KEEP_ALIVE_MS: bad })).toThrow(ConfigError);
  });
});
