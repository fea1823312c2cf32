/**
 * What the one write path records: who caused a write (`Origin`), each change it made to an entity
 * (`Change`), and the record of it in the change log (`ChangeRecord`). The unit of work
 * (`unit-of-work.ts`) writes them; the intents (`intents.ts`), the outbox and the change log read them.
 */

/** What caused a write: the Management API request, or a flow of the provider. */
export interface Origin {
  method?: string;
  path?: string;
  /** The matched route pattern, e.g. `/api/users/:userId`. */
  route?: string;
  params?: Record<string, string>;
  /** The status the request answers with when it succeeds (the change commits only then). */
  status?: number;
  /** The client whose token made the request. */
  clientId?: string;
  /** A person made the request (an administrator, through the console): `type` is `user`, `id` theirs. No `clientId` then. */
  type?: 'user';
  id?: string;
  ip?: string;
  userAgent?: string;
  /** The request that made it (`X-Request-Id`): on the events it announces, and their deliveries' log lines. */
  requestId?: string;
  /** For a write made by a sign-in interaction (a sign-up's user, a reset's password): which, and for which application. */
  interaction?: {
    /** Logto's name of the interaction: `Register`, `SignIn`, `ForgotPassword`. */
    event: string;
    /** The interaction's id. */
    sessionId?: string;
    applicationId?: string;
  };
}

/** One change to one entity, as the webhooks issue will announce it. Never holds a secret. */
export interface Change {
  entity: string;
  /** What happened: `created`, `updated`, `deleted`, or a named part (`scopes.updated`). */
  action: string;
  id: string;
  /** The entity after the change; before it, for a delete; the ids added and removed, for a relation. */
  data: unknown;
  /** For an update, what it changed, as field paths (`primaryEmail`, `customData.plan`, `password`); never a value. */
  changes?: string[];
}

export interface ChangeRecord extends Change {
  _id: string;
  origin: Origin;
  createdAt: Date;
  /** When the record leaves the log (a TTL index removes it). */
  expiresAt: Date;
}

/** How long change records are kept by default, in days. */
export const defaultChangeRetentionDays = 90;

/**
 * A change whose `Entity.action` is one of the keys `K`: a part of the service that names the
 * changes it records (its vocabulary) gets a misspelt one refused by the compiler.
 */
export type ChangeOf<K extends string> = string extends K
  ? Change
  : K extends `${infer E}.${infer A}`
    ? { entity: E; action: A; id: string; data: unknown; changes?: string[] }
    : never;

/** The entity and action a key names, one object type per key. */
export type ChangeNameOf<K extends string> = K extends `${infer E}.${infer A}` ? { entity: E; action: A } : never;

/**
 * A change to come: its entity, action and id, as `ChangeOf` names them, and for a relation the
 * owner's linked ids before the write (or how to read them, read only if the intent is stored).
 */
export type IntentOf<K extends string> = Omit<ChangeOf<K>, 'data'> & { before?: string[] | (() => Promise<string[]>); key?: string };

/**
 * Where change records go besides `changes`, inside the same transaction: the webhooks outbox.
 * `record` answers whether it queued anything, and `committed` is then called once the unit of
 * work has committed.
 */
export interface ChangeSink {
  /** Runs in the unit of work (`session.ts`): what it writes commits with the change. */
  record(records: ChangeRecord[]): Promise<boolean>;
  committed(): void;
}

export const changesCollection = 'changes';
