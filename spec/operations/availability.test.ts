import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

import { MongoNetworkTimeoutError, MongoOperationTimeoutError, MongoServerError, MongoServerSelectionError, MongoServerClosedError } from 'mongodb';

import { ApiError } from '../../lib/errors.js';
import { isDatabaseUnavailable } from '../../lib/store/availability.js';

/** A server's refusal, as the driver raises it. */
const serverError = (code: number, labels: string[] = []) => {
  const error = new MongoServerError({ ok: 0, code, errmsg: `code ${code}`, errorLabels: labels });
  return error;
};

/**
 * The outside attack's outage finding: during an outage some requests were answered 500 (an error
 * the service did not know meant "not now") or, worse, as bad credentials. Every way the driver says
 * "the database cannot answer now" is an outage (503 with the documented code); a refusal is not.
 */
describe('what counts as the database being unavailable', () => {
  it.each([
    ['a network timeout', new MongoNetworkTimeoutError('timed out')],
    ['no server to select', new MongoServerSelectionError('no server', { type: 'Unknown' } as never)],
    ['a client-side operation timeout (CSOT)', new MongoOperationTimeoutError('timed out')],
    ['a closed server', new MongoServerClosedError()],
    [
      'no connection free in time (the pool’s wait queue)',
      Object.assign(new Error('Timed out while checking out a connection'), { name: 'MongoWaitQueueTimeoutError' }),
    ],
    ['a closed pool', Object.assign(new Error('pool closed'), { name: 'MongoPoolClosedError' })],
    ['a host unreachable', serverError(6)],
    ['a network timeout on the server', serverError(89)],
    ['a socket exception', serverError(9001)],
    ['a primary stepping down', serverError(189)],
    ['a server shutting down', serverError(91)],
    ['an error the driver labels retryable', serverError(11, ['RetryableWriteError'])],
    ['one wrapped as the cause of another', new Error('while loading a client', { cause: new MongoNetworkTimeoutError('timed out') })],
    ['our own 503', new ApiError('database.unavailable', 'later')],
  ])('%s is an outage', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a duplicate key', serverError(11000)],
    ['a query the server refuses', serverError(2)],
    ['a search past its time limit (the caller narrows it)', serverError(50)],
    ['another API error', new ApiError('guard.invalid_input', 'no')],
    ['a programming error', new TypeError('undefined is not a function')],
  ])('%s is not', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('a socket the server ended, met by a write (the raw EPIPE the driver 7.8 lets through, seen in CI during an engine swap) is an outage; an outbound fetch that failed is not', async () => {
    const server = createServer((socket) => socket.end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const socket: Socket = connect(port, '127.0.0.1');
      await once(socket, 'end');
      const failed = once(socket, 'error');
      socket.write('after the end');
      const [error] = (await failed) as [Error & { code?: string }];
      expect(error.code).toBe('EPIPE');
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isDatabaseUnavailable(new Error('while loading a client', { cause: error }))).toBe(true);
    } finally {
      server.close();
    }
    await once(server, 'close');
    // An outbound call's failure (fetch's TypeError; here a refused connection) is that call's, not the database's.
    const fetchFailure = await fetch(`http://127.0.0.1:${port}/`).catch((caught: unknown) => caught);
    expect((fetchFailure as Error).name).toBe('TypeError');
    expect(isDatabaseUnavailable(fetchFailure)).toBe(false);
  });
});
