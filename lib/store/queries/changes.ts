import type { Db, Filter } from 'mongodb';

import type { Page } from '../models.js';
import { changesCollection, type ChangeRecord } from '../changes.js';
import { createdWithin } from './time-range.js';

export interface ChangeFilter {
  entity?: string;
  entityId?: string;
  /** Epoch milliseconds, inclusive. */
  since?: number;
  until?: number;
}

/** The change log the write path keeps: read newest first, whole or by entity. */
export function createChangeQueries(db: Db) {
  const changes = db.collection<ChangeRecord>(changesCollection);
  const toFilter = ({ entity, entityId, since, until }: ChangeFilter): Filter<ChangeRecord> => ({
    ...(entity && { entity }),
    ...(entityId && { id: entityId }),
    ...createdWithin(since, until, (at) => new Date(at)),
  });
  return {
    find: (filter: ChangeFilter, page: Page) => changes.find(toFilter(filter)).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
    count: (filter: ChangeFilter) => changes.countDocuments(toFilter(filter)),
  };
}
