import { MongoBulkWriteError, type ClientSession, type Collection, type Document, type Filter, type OptionalUnlessRequiredId, type WithId } from 'mongodb';

import { currentSession } from './session.js';
import { isDuplicateKeyError } from '../errors.js';

/** What became of one document: stored, refused because its unique key was taken, or another failure. */
export type InsertOutcome = 'inserted' | 'duplicate' | Error;

/**
 * Inserts documents whose unique keys may be taken already, each succeeding or failing on its
 * own, in one unordered command. MongoDB names each document that failed; an engine that
 * refuses the whole command without naming them (the embedded one does) gets each document
 * again on its own, so that a duplicate never costs the others their insert.
 *
 * A driver retries an insert whose answer the network lost (a retryable write), and a server that
 * does not recognise the retry refuses it as a duplicate key although the first try stored it; a
 * document that went in on the first of the embedded engine's two tries is refused on the second.
 * With `ours`, which tells a stored document by what only its writer can know (a fresh token id),
 * such a document reads as inserted. Without it, the caller's unique key decided either way.
 */
export async function insertEach<T extends Document>(
  collection: Collection<T>,
  documents: Array<OptionalUnlessRequiredId<T>>,
  { ours }: { ours?: (stored: WithId<T>, sent: OptionalUnlessRequiredId<T>) => boolean } = {},
): Promise<InsertOutcome[]> {
  const outcomes = await insertEachOnce(collection, documents);
  const refused = outcomes.flatMap((outcome, index) => (outcome === 'duplicate' && documents[index]!._id !== undefined ? [index] : []));
  if (!ours || refused.length === 0) return outcomes;
  const stored = await collection.find({ _id: { $in: refused.map((index) => documents[index]!._id) } } as Filter<T>).toArray();
  const byId = new Map(stored.map((document) => [String(document._id), document]));
  return outcomes.map((outcome, index) => {
    const found = refused.includes(index) ? byId.get(String(documents[index]!._id)) : undefined;
    return found && ours(found, documents[index]!) ? 'inserted' : outcome;
  });
}

async function insertEachOnce<T extends Document>(collection: Collection<T>, documents: Array<OptionalUnlessRequiredId<T>>): Promise<InsertOutcome[]> {
  const one = async (document: OptionalUnlessRequiredId<T>): Promise<InsertOutcome> => {
    try {
      await collection.insertOne(document);
      return 'inserted';
    } catch (error) {
      if (isDuplicateKeyError(error)) return 'duplicate';
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  if (documents.length === 1) return [await one(documents[0])];
  try {
    await collection.insertMany(documents, { ordered: false });
    return documents.map(() => 'inserted');
  } catch (error) {
    // A write concern error leaves every document's fate unknown: the whole command failed.
    if (!(error instanceof MongoBulkWriteError) || error.writeConcernError) throw error;
    const writeErrors = [error.writeErrors].flat();
    if (error.result.insertedCount + writeErrors.length !== documents.length) {
      // In order, so that of two documents with one key the first wins, as in MongoDB's own answer.
      const outcomes: InsertOutcome[] = [];
      for (const document of documents) outcomes.push(await one(document));
      return outcomes;
    }
    const failed = new Map(writeErrors.map((writeError) => [writeError.index, writeError]));
    return documents.map((_, index) => {
      const writeError = failed.get(index);
      if (!writeError) return 'inserted';
      return isDuplicateKeyError(writeError) ? 'duplicate' : new Error(writeError.errmsg ?? 'the document could not be inserted');
    });
  }
}

/** Throws the first failure other than a taken key; answers the outcomes otherwise. */
export function throwingFailures(outcomes: InsertOutcome[]): Array<'inserted' | 'duplicate'> {
  const failure = outcomes.find((outcome): outcome is Error => outcome instanceof Error);
  if (failure) throw failure;
  return outcomes as Array<'inserted' | 'duplicate'>;
}

/** Inserts each document unless its unique key is taken already; throws any other failure. */
export async function insertMissing<T extends Document>(collection: Collection<T>, documents: Array<OptionalUnlessRequiredId<T>>): Promise<void> {
  throwingFailures(await insertEach(collection, documents));
}

/**
 * Inserts documents whose `_id` we generated (random, so no one else's document has it), in the
 * unit of work's session. A driver retries an insert whose answer the network lost (a retryable
 * write); a server that does not recognise the retry then refuses it as a duplicate key, of `_id`
 * or of another unique key, although the first try stored it. That document being there under our
 * `_id` is the success the first answer would have brought. Inside a transaction the refusal
 * stands: the transaction is aborted, and a real replica set recognises retries anyway.
 */
export async function insertOwn<T extends Document & { _id: string }>(
  collection: Collection<T>,
  documents: T[],
  session: ClientSession | undefined = currentSession(),
): Promise<void> {
  try {
    const writable = documents as Array<OptionalUnlessRequiredId<T>>;
    if (writable.length === 1) await collection.insertOne(writable[0], { session });
    else await collection.insertMany(writable, { session });
  } catch (error) {
    if (!isDuplicateKeyError(error) || session?.inTransaction()) throw error;
    const ids = documents.map(({ _id }) => _id);
    const stored = new Set((await collection.find({ _id: { $in: ids } } as Filter<T>, { session }).toArray()).map(({ _id }) => _id as string));
    if (stored.size === 0) throw error;
    const missing = documents.filter(({ _id }) => !stored.has(_id));
    if (missing.length > 0) await insertOwn(collection, missing, session);
  }
}
