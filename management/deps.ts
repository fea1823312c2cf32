import type Router from '@koa/router';
import type { ClientMetadata } from 'oidc-provider';

import type { Hooks } from '../hooks/index.js';
import type { CacheRegistry } from '../lib/store/cache.js';
import type { Database } from '../lib/store/database.js';
import type { KeyRing } from '../provider/oidc-keys.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Sandbox } from '../provider/sandbox/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';

/** What the Management API's routes need, built once and passed in: no module-level state. */
export interface ManagementDeps {
  database: Database;
  queries: Queries;
  /** The one write path: every mutation runs through it and records what it changed. */
  write: Writer;
  caches: Pick<CacheRegistry, 'changed'>;
  /** oidc-provider's own check of client metadata, so that we never store a client it would refuse. */
  validateClientMetadata(metadata: ClientMetadata): Promise<void>;
  /** Where the JWT customizer's dry runs run: a sandbox apart from the one tokens use. */
  sandbox: Sandbox;
  /** Lifetime of a subject token, in seconds. */
  subjectTokenTtl: number;
  /** Webhooks: the hooks API's queries, test sends and the worker's wake-up. */
  hooks: Hooks;
  /** The provider's signing and cookie keys, when they are ours to rotate (not a host's own). */
  keyRing: KeyRing | undefined;
  /** Indicator of the Management API itself. */
  managementApiIndicator: string;
}

export type ApiRouter = Router;
