import type { Server, ServerResponse } from 'node:http';

/**
 * Lets an HTTP server stop without cutting off what it is answering: it stops accepting
 * connections, answers every request it holds (and any that arrives meanwhile on a connection
 * already open) with `Connection: close`, waits until they are done or `graceMs` has passed, and
 * only then closes the connections left. A client whose request was taken gets its answer, so it
 * can tell a write that committed from one that did not.
 */
export function createDrain() {
  const active = new Set<ServerResponse>();
  let draining = false;
  let onIdle: (() => void) | undefined;

  return {
    /** Call first for every request the server takes. */
    track(response: ServerResponse) {
      active.add(response);
      if (draining) response.setHeader('connection', 'close');
      response.once('close', () => {
        active.delete(response);
        if (active.size === 0) onIdle?.();
      });
    },

    /** Stops `server` as above; answers how many requests were still unanswered when the grace period ended. */
    async drain(server: Server, graceMs: number): Promise<number> {
      draining = true;
      for (const response of active) if (!response.headersSent) response.setHeader('connection', 'close');
      // Node's close also closes the idle keep-alive connections (since Node 19); those carrying a
      // request stay open until it is answered.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (active.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const cutOff = active.size;
      server.closeAllConnections();
      await closed;
      return cutOff;
    },
  };
}
