import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * An HTTP server for a test's own side (an embedding host, a webhook receiver, an upstream
 * provider): it keeps an idle connection until the client closes it, as the test service does
 * (`HTTP_KEEP_ALIVE_MS=0`). With Node's 5 s it would close one on the real clock, while fetch's
 * pool counts its idle time in ticks of the client's event loop, which a loaded machine makes late,
 * and a request sent on a connection being closed fails with ECONNRESET.
 */
export function lastingServer(handler?: RequestListener): Server {
  const server = createServer(handler);
  server.keepAliveTimeout = 0;
  return server;
}
