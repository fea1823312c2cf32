import { AsyncLocalStorage } from 'node:async_hooks';

import type { ClientSession } from 'mongodb';

const storage = new AsyncLocalStorage<ClientSession | undefined>();

/**
 * The session of the unit of work the caller runs in (`unit-of-work.ts`), if any: the store's
 * queries read it here, so that every read and write of a unit joins its transaction without the
 * session being handed from call to call. Read it when a query starts (synchronously), never from
 * a timer or a batch that outlives the call: those take the session they were given.
 */
export const currentSession = (): ClientSession | undefined => storage.getStore();

/** Runs `work` with `session` as the current one (none: outside any unit, even inside another). */
export const withSession = <T>(session: ClientSession | undefined, work: () => Promise<T>): Promise<T> => storage.run(session, work);

/** Runs `work` outside any unit of work: what it writes commits on its own, whatever the caller's unit does. */
export const outsideUnit = <T>(work: () => Promise<T>): Promise<T> => storage.run(undefined, work);

/** The options that make a command part of the current unit of work (none outside one). */
export const inUnit = (): { session?: ClientSession } => {
  const session = currentSession();
  return session ? { session } : {};
};
