import type { ClientSession, Db } from 'mongodb';

import { generateId } from '../lib/ids.js';
import { currentRequestId } from '../lib/request-context.js';
import { userInfoOf, userToApi, withId, type ApplicationDocument, type UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { ChangeRecord, ChangeSink } from '../lib/store/changes.js';
import {
  changeEvents,
  interactionEvents,
  type ChangeKey,
  type ExceptionEvent,
  type InteractionEvent,
  type LifecycleEvent,
  type OperationalEvent,
  type OptInEvent,
} from './catalog.js';
import { hookCollections, type EventSource, type HookEventDocument } from './models.js';
import { insertEach, insertOwn } from '../lib/store/insert-each.js';
import { outsideUnit, withSession } from '../lib/store/session.js';

/** What sign-up, sign-in and password-reset code tells us about a finished interaction. */
export interface InteractionReport {
  event: InteractionEvent;
  userId: string;
  /** The client the person used. */
  applicationId?: string;
  /** The provider's session id (not the interaction's). */
  sessionId?: string;
  ip?: string;
  userAgent?: string;
}

export interface Outbox extends ChangeSink {
  /**
   * Records an interaction event, in the current unit of work (`lib/store/session.ts`) if any. A
   * host passes the session of its own unit that made the change (a sign-up's user), so that both
   * commit together.
   */
  /** `user`: the user as the caller has just read it, if it has (not read again). */
  reportInteraction(report: InteractionReport, session?: ClientSession, user?: UserDocument): Promise<void>;
  reportException(report: ExceptionReport): Promise<void>;
  /** Records an operational event about a hook (`Hook.Disabled`, ...): `data` says what, never a key or a header. */
  reportOperational(event: OperationalEvent, hookId: string, data: Record<string, unknown>): Promise<void>;
  /**
   * Records the impersonation events of audit records the ledger chains, under ids derived from the
   * records: writing one again (a ledger run that died after this) is a no-op.
   */
  reportImpersonations(items: Array<{ id: string; event: string; impersonationId?: string; clientId?: string; data: Record<string, unknown> }>): Promise<void>;
  /**
   * Records lifecycle events (`lifecycleEvents`): inside the current unit of work when there is
   * one (a user's sessions ended with their suspension commit with it), else on their own.
   */
  reportLifecycle(items: LifecycleReport[]): Promise<void>;
  /** Records opt-in events (`optInEvents`) in one insert, kept `optInRetentionMs`; answers each one's failure, if any. */
  reportOptIn(
    items: Array<Omit<LifecycleReport, 'event' | 'entity'> & { event: OptInEvent; entity?: LifecycleReport['entity'] }>,
  ): Promise<Array<void | Error>>;
}

/** A lifecycle event: what it is about (a session, a grant), where it came from, and its fields. */
export interface LifecycleReport {
  event: LifecycleEvent;
  entity: { type: 'Session' | 'Grant'; id: string };
  source: EventSource;
  applicationId?: string | undefined;
  fields: Record<string, unknown>;
}

/** An exception event (`exceptionEvents`) and the interaction it happened in. */
export interface ExceptionReport {
  event: ExceptionEvent;
  fields: Record<string, string>;
  interactionEvent?: string;
  applicationId?: string;
  sessionId?: string;
  ip?: string;
  userAgent?: string;
  /** Where it happened: a sign-in (the default) or the Account API. */
  source?: 'experience' | 'account';
}

export interface OutboxOptions {
  retentionMs: number;
  /** How long the opt-in events are kept (by default as the others). */
  optInRetentionMs?: number;
  /** Called after a commit that recorded events, so that this process's worker fans them out at once. */
  onQueued?: () => void;
  /** The worker (this process's) that will fan out what this outbox records; others take over if it does not. */
  fanOutBy?: string;
  /** The application an event names, as the caller keeps it (the provider's cache); by default read from the database. */
  findApplication?: FindApplication;
}

type FindApplication = (id: string) => Promise<ApplicationDocument | null | undefined>;

/** An event to record: its body, and the entity it is about when it is about one. */
interface RecordedEvent {
  id?: string;
  event: string;
  entity?: { type: string; id: string };
  source: EventSource;
  clientId?: string | undefined;
  requestId?: string | undefined;
  payload: Record<string, unknown>;
}

/** A lifecycle or opt-in report as the event it records: about its entity, if any, from its application. */
const recordedOf = ({
  event,
  entity,
  source,
  applicationId,
  fields,
}: Omit<LifecycleReport, 'event' | 'entity'> & { event: string; entity?: LifecycleReport['entity'] }): RecordedEvent => ({
  event,
  ...(entity && { entity }),
  source,
  clientId: applicationId,
  payload: fields,
});

/** Account API paths: a change made there is the user's own, through their application. */
const accountPaths = /^\/api\/(my-account|verifications)(\/|$)/;

/** Where a change came from, and the application that caused it. */
function sourceOf(origin: ChangeRecord['origin']): { source: EventSource; clientId?: string | undefined } {
  if (origin.interaction) return { source: 'experience', clientId: origin.interaction.applicationId };
  return { source: origin.path && accountPaths.test(origin.path) ? 'account' : 'management', clientId: origin.clientId };
}

/** Management API paths as Logto's receivers see them: relative to its root (`/users/:userId`). */
const managementApiRoot = '/api';
const relative = (path: string) => (path === managementApiRoot ? '/' : path.startsWith(`${managementApiRoot}/`) ? path.slice(managementApiRoot.length) : path);

/** The data event a change announces, if any: Logto's data-hook body without `hookId`. */
async function dataEventOf(change: ChangeRecord, queries: Queries, findApplication: FindApplication) {
  const rule = changeEvents[`${change.entity}.${change.action}` as ChangeKey];
  if (!rule) return undefined;
  const { origin } = change;
  return {
    // The change's id: written by a unit of work or by a resolver that found it unrecorded, it is one event.
    id: change._id,
    event: rule.event,
    entity: { type: change.entity, id: change.id },
    ...sourceOf(origin),
    requestId: origin.requestId,
    payload: {
      ...(rule.ownerKey && { [rule.ownerKey]: change.id }),
      ...(await carried(rule.carries, change, queries)),
      ...(origin.interaction ? await interactionOrigin(origin, findApplication) : requestOrigin(origin)),
    },
  };
}

/** What an event carries: the entity (`data`), or for a relation what its rule says. */
async function carried(carries: 'scopes' | 'organizationScopes' | 'delta' | 'user' | 'memberRoles' | undefined, change: ChangeRecord, queries: Queries) {
  switch (carries) {
    case 'user':
      // Beyond Logto: an update names what it changed (`changes`), so that a receiver need not diff.
      return { data: userInfoOf(change.data as ReturnType<typeof userToApi>), ...(change.changes && { changes: change.changes }) };
    case 'scopes': {
      const ids = await queries.links.rolesScopes.rightsOf(change.id);
      return { data: (await queries.scopes.findByIds(ids)).map(withId) };
    }
    case 'organizationScopes': {
      const ids = await queries.links.organizationRoleScopes.rightsOf(change.id);
      return { data: (await queries.organizationScopes.findByIds(ids)).map(withId) };
    }
    case 'memberRoles': {
      // The member, and the organization roles given and taken, each only when not empty.
      const { userId, addedOrganizationRoleIds: added, removedOrganizationRoleIds: removed } = change.data as Record<string, string & string[]>;
      return { userId, ...(added.length > 0 && { addedRoleIds: added }), ...(removed.length > 0 && { removedRoleIds: removed }) };
    }
    case 'delta':
      // Logto's membership delta: `addedUserIds` and `removedUserIds`, each only when not empty.
      return Object.fromEntries(Object.entries(change.data as Record<string, string[]>).filter(([, ids]) => ids.length > 0));
    default:
      return { data: change.data };
  }
}

/** A Management API request, as Logto's data hooks name it. */
const requestOrigin = (origin: ChangeRecord['origin']) => ({
  ...(origin.method !== undefined && { method: origin.method }),
  ...(origin.path !== undefined && { path: relative(origin.path) }),
  ...(origin.route !== undefined && { matchedRoute: relative(origin.route) }),
  ...(origin.params !== undefined && { params: origin.params }),
  ...(origin.status !== undefined && { status: origin.status }),
  ...(origin.clientId !== undefined && { clientId: origin.clientId }),
  // A change made in the admin console: the person, as the change record names them.
  ...(origin.type === 'user' && origin.id !== undefined && { administratorId: origin.id }),
  ...(origin.ip !== undefined && { ip: origin.ip }),
  ...(origin.userAgent !== undefined && { userAgent: origin.userAgent }),
});

/** A sign-in interaction, as Logto's data hooks name one: its event, session and application. */
async function interactionOrigin({ interaction, ip, userAgent }: ChangeRecord['origin'], findApplication: FindApplication) {
  const { event, sessionId, applicationId } = interaction!;
  const application = applicationId ? await findApplication(applicationId) : null;
  return {
    interactionEvent: event,
    ...(sessionId !== undefined && { sessionId }),
    ...(applicationId !== undefined && { applicationId }),
    ...(application && { application: applicationToEvent(application) }),
    ...(ip !== undefined && { ip }),
    ...(userAgent !== undefined && { userAgent }),
  };
}

const applicationToEvent = ({ _id, type, name, description }: ApplicationDocument) => ({ id: _id, type, name, description });

/**
 * The transactional outbox. Inside the unit of work that made a change it writes the change's
 * events, so that the change and its events commit or roll back together. That is the whole of
 * what a write pays, whether or not any hook wants the event: the deliveries (one per hook
 * subscribed to it) are made from the stored event by the delivery worker (`worker.ts`), at
 * once in this process and within a poll in the others. Events are kept even when no hook wants
 * them, so that a hook added later can replay them.
 */
export function createOutbox(
  db: Db,
  queries: Queries,
  { retentionMs, optInRetentionMs = retentionMs, onQueued, fanOutBy, findApplication = queries.applications.findById }: OutboxOptions,
): Outbox {
  const events = db.collection<HookEventDocument>(hookCollections.events);

  /** The stored form of events recorded together. */
  function documentsOf(found: RecordedEvent[], createdAt: Date, keptMs = retentionMs): HookEventDocument[] {
    const expiresAt = new Date(createdAt.getTime() + keptMs);
    return found.map(({ id = generateId(), event, entity, source, clientId, requestId = currentRequestId(), payload }, unitIndex) => {
      // `id`, `event` and `createdAt` lead the body, as receivers read them first; the sequencer adds `sequence` and `version`.
      return {
        _id: id,
        event,
        createdAt,
        payload: { id, event, createdAt: createdAt.toISOString(), ...(entity && { entity }), ...payload },
        ...(entity && { entityKey: `${entity.type}:${entity.id}` }),
        source,
        ...(clientId && { clientId }),
        ...(requestId && { requestId }),
        sequenceDue: createdAt,
        unitIndex,
        fanOutDue: createdAt,
        ...(fanOutBy && { fanOutBy }),
        expiresAt,
      };
    });
  }

  /** Writes the events; answers whether there were any. */
  async function enqueue(found: RecordedEvent[], createdAt: Date) {
    if (found.length === 0) return false;
    await insertOwn(events, documentsOf(found, createdAt));
    return true;
  }

  const outbox: Outbox = {
    async record(changes) {
      // One after the other: a session does not take concurrent operations.
      const found = [];
      for (const change of changes) {
        const event = await dataEventOf(change, queries, findApplication);
        if (event) found.push(event);
      }
      return enqueue(found, changes[0]?.createdAt ?? new Date());
    },

    committed() {
      onQueued?.();
    },

    async reportException({ event, fields, interactionEvent, applicationId, sessionId, ip, userAgent, source = 'experience' }) {
      const payload = {
        ...fields,
        ...(interactionEvent !== undefined && { interactionEvent }),
        ...(sessionId !== undefined && { sessionId }),
        ...(applicationId !== undefined && { applicationId }),
        ...(ip !== undefined && { ip }),
        ...(userAgent !== undefined && { userAgent }),
      };
      // Kept whatever becomes of a unit of work the caller is in: a refusal is announced though the request fails.
      if (await outsideUnit(() => enqueue([{ event, source, clientId: applicationId, payload }], new Date()))) onQueued?.();
    },

    async reportOperational(event, hookId, data) {
      const recorded = await outsideUnit(() => enqueue([{ event, entity: { type: 'Hook', id: hookId }, source: 'system', payload: { data } }], new Date()));
      if (recorded) onQueued?.();
    },

    async reportImpersonations(items) {
      if (items.length === 0) return;
      const found: RecordedEvent[] = items.map(({ id, event, impersonationId, clientId, data }) => ({
        id,
        event,
        ...(impersonationId !== undefined && { entity: { type: 'Impersonation', id: impersonationId } }),
        source: 'system',
        clientId,
        payload: { data },
      }));
      const outcomes = await insertEach(events, documentsOf(found, new Date()));
      const failed = outcomes.find((outcome): outcome is Error => outcome instanceof Error);
      if (failed) throw failed;
      onQueued?.();
    },

    async reportLifecycle(items) {
      if (await enqueue(items.map(recordedOf), new Date())) onQueued?.();
    },

    async reportOptIn(items) {
      const outcomes = await insertEach(events, documentsOf(items.map(recordedOf), new Date(), optInRetentionMs));
      onQueued?.();
      return outcomes.map((outcome) => (outcome instanceof Error ? outcome : undefined));
    },

    reportInteraction: (report, session, user) => (session ? withSession(session, () => reportInteraction(report, user)) : reportInteraction(report, user)),
  };

  async function reportInteraction({ event, userId, applicationId, sessionId, ip, userAgent }: InteractionReport, known?: UserDocument) {
    // Own keys only: `toString` is `in` every object.
    if (!Object.hasOwn(interactionEvents, event)) throw new TypeError(`unknown interaction event \`${event}\``);
    // One after the other: a session does not take concurrent operations.
    const user = known?._id === userId ? known : await queries.users.findById(userId);
    const application = applicationId ? await findApplication(applicationId) : null;
    const payload = {
      interactionEvent: interactionEvents[event],
      ...(sessionId !== undefined && { sessionId }),
      ...(userAgent !== undefined && { userAgent }),
      ...(ip !== undefined && { userIp: ip }),
      userId,
      ...(user && { user: userInfoOf(userToApi(user)) }),
      ...(applicationId !== undefined && { applicationId }),
      ...(application && { application: applicationToEvent(application) }),
    };
    if (await enqueue([{ event, entity: { type: 'User', id: userId }, source: 'experience', clientId: applicationId, payload }], new Date())) onQueued?.();
  }

  return outbox;
}
