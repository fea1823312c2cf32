import type { ClientSession, Db } from 'mongodb';

import { generateId } from '../lib/ids.js';
import { userToApi, type ApplicationDocument } from '../lib/models.js';
import type { Queries } from '../lib/queries/index.js';
import type { ChangeRecord, ChangeSink } from '../lib/unit-of-work.js';
import { changeEvents, interactionEvents, type InteractionEvent } from './catalog.js';
import { hookCollections, type DeliveryDocument, type HookDocument, type HookEventDocument } from './models.js';

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
   * Records an interaction event and its deliveries. Pass the session of the unit of work that
   * made the change (a sign-up's user) so that both commit together.
   */
  reportInteraction(report: InteractionReport, session?: ClientSession): Promise<void>;
}

export interface OutboxOptions {
  retentionMs: number;
  /** Called after a commit that queued deliveries, so that this process's worker starts at once. */
  onQueued?: () => void;
}

/** The data event a change announces, if any: Logto's data-hook body without `hookId`. */
function dataEventOf(change: ChangeRecord): { event: string; payload: Record<string, unknown> } | undefined {
  const rule = changeEvents[`${change.entity}.${change.action}`];
  if (!rule) return undefined;
  const { origin } = change;
  const data = rule.ownerKey ? { [rule.ownerKey]: change.id, ...(change.data as object) } : change.data;
  return {
    event: rule.event,
    payload: {
      data,
      ...(origin.method !== undefined && { method: origin.method }),
      ...(origin.path !== undefined && { path: origin.path }),
      ...(origin.route !== undefined && { matchedRoute: origin.route }),
      ...(origin.params !== undefined && { params: origin.params }),
      ...(origin.status !== undefined && { status: origin.status }),
      ...(origin.clientId !== undefined && { clientId: origin.clientId }),
      ...(origin.ip !== undefined && { ip: origin.ip }),
      ...(origin.userAgent !== undefined && { userAgent: origin.userAgent }),
    },
  };
}

const applicationToEvent = ({ _id, type, name, description }: ApplicationDocument) => ({ id: _id, type, name, description });

/**
 * The transactional outbox. Inside the unit of work that made a change it writes the event (once)
 * and one delivery per enabled hook subscribed to it, so that the change, its event and its
 * deliveries commit or roll back together. Events are kept even when no hook wants them, so that
 * a hook added later can replay them.
 */
export function createOutbox(db: Db, queries: Queries, { retentionMs, onQueued }: OutboxOptions): Outbox {
  const events = db.collection<HookEventDocument>(hookCollections.events);
  const deliveries = db.collection<DeliveryDocument>(hookCollections.deliveries);
  const hooks = db.collection<HookDocument>(hookCollections.hooks);

  /** Writes the events and their deliveries; answers how many deliveries it queued. */
  async function enqueue(found: Array<{ event: string; payload: Record<string, unknown> }>, createdAt: Date, session: ClientSession | undefined) {
    if (found.length === 0) return 0;
    const expiresAt = new Date(createdAt.getTime() + retentionMs);
    const documents: HookEventDocument[] = found.map(({ event, payload }) => {
      const id = generateId();
      // `id`, `event` and `createdAt` lead the body, as receivers read them first.
      return { _id: id, event, createdAt, payload: { id, event, createdAt: createdAt.toISOString(), ...payload }, expiresAt };
    });
    await events.insertMany(documents, { session });
    // Read inside the transaction: the hooks subscribed when the change commits get it.
    const subscribed = await hooks.find({ enabled: true, events: { $in: [...new Set(found.map(({ event }) => event))] } }, { session }).toArray();
    const queued: DeliveryDocument[] = documents.flatMap((event) => subscribed
      .filter((hook) => hook.events.includes(event.event))
      .map((hook) => ({
        _id: generateId(), hookId: hook._id, eventId: event._id, event: event.event, state: 'pending' as const, attempts: 0,
        nextAttemptAt: createdAt, leaseOwner: null, lastAttemptAt: null, lastStatus: null, lastError: null,
        createdAt, updatedAt: createdAt, expiresAt,
      })));
    if (queued.length > 0) await deliveries.insertMany(queued, { session });
    return queued.length;
  }

  return {
    async record(changes, session) {
      const found = changes.flatMap((change) => dataEventOf(change) ?? []);
      return await enqueue(found, changes[0]?.createdAt ?? new Date(), session) > 0;
    },

    committed() {
      onQueued?.();
    },

    async reportInteraction({ event, userId, applicationId, sessionId, ip, userAgent }, session) {
      // Own keys only: `toString` is `in` every object.
      if (!Object.hasOwn(interactionEvents, event)) throw new TypeError(`unknown interaction event \`${event}\``);
      // One after the other: a session does not take concurrent operations.
      const user = await queries.users.findById(userId, session);
      const application = applicationId ? await queries.applications.findById(applicationId, session) : null;
      const payload = {
        interactionEvent: interactionEvents[event],
        ...(sessionId !== undefined && { sessionId }),
        ...(userAgent !== undefined && { userAgent }),
        ...(ip !== undefined && { userIp: ip }),
        userId,
        ...(user && { user: userToApi(user) }),
        ...(applicationId !== undefined && { applicationId }),
        ...(application && { application: applicationToEvent(application) }),
      };
      if (await enqueue([{ event, payload }], new Date(), session) > 0) onQueued?.();
    },
  };
}
