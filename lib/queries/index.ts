import type { Db } from 'mongodb';

import { createApplicationQueries } from './applications.js';
import { createResourceQueries } from './resources.js';
import { createRoleQueries } from './roles.js';

/** Every query factory, built once over one database and handed to whoever needs it. */
export function createQueries(db: Db) {
  return {
    applications: createApplicationQueries(db),
    resources: createResourceQueries(db),
    roles: createRoleQueries(db),
  };
}

export type Queries = ReturnType<typeof createQueries>;
