import { isIP } from 'node:net';

import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Filter } from 'mongodb';

import type { Hooks } from '../hooks/index.js';
import type { AttemptDocument, DeliveryDocument, HookConfigDocument, HookDocument, HookEventDocument } from '../hooks/models.js';
import { samplePayload } from '../hooks/sample.js';
import { activeKeyPairs, generateSigningKey, generateSigningKeyPair, publicKeyObject } from '../hooks/signing.js';
import { webhookRequest } from '../hooks/message.js';
import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { AddressRefusedError } from '../lib/outbound-addresses.js';
import { pickForRecovery, type RecoveryMode } from '../hooks/recovery.js';
import { pageOf, pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, paginationQuery } from './schemas/common.js';
import {
  deliveryListQuery,
  deliveryResponse,
  hookCreateSchema,
  hookPatchSchema,
  hookResponse,
  hookStatsQuery,
  hookLogResponse,
  hookTestSchema,
  jwksResponse,
  recentLogsQuery,
  recoverResponse,
  recoverSchema,
  replayResponse,
  replaySchema,
  testReportResponse,
  type HookConfig,
} from './schemas/hooks.js';

/** Headers that the signature or the transport own: a hook's own headers may not set them. */
// Ours to set, and the hop-by-hop headers (RFC 9110 §7.6.1, §7.8, §10.1.1; `Proxy-*`), which would
// change how the request travels rather than what it says.
const reservedHeaders =
  /^(webhook-id|webhook-timestamp|webhook-signature|logto-signature-sha-256|host|content-length|transfer-encoding|connection|expect|upgrade|te|keep-alive|trailer|proxy-.*)$/i;

/** Replays larger than this are refused; narrow the range instead. */
const maxReplay = 50_000;

/**
 * The hook as the API shows it: never its signing secret (shown once, when created or rotated),
 * and the `v1a` public keys that sign now, if it has any (public by nature).
 */
function hookToApi({ _id, name, events, config, enabled, disabledReason, signingKeyPairs, createdAt, updatedAt }: HookDocument, now = new Date()) {
  const publicKeys = activeKeyPairs(signingKeyPairs, now).map(({ publicKey }) => publicKey);
  return { id: _id, name, events, config, enabled, disabledReason, ...(publicKeys.length > 0 && { publicKeys }), createdAt, updatedAt };
}

/** A key pair made now, for a hook that asks for `v1a` and has none that signs. */
function keyPairsFor(config: HookConfigDocument, pairs: HookDocument['signingKeyPairs'], now: Date): HookDocument['signingKeyPairs'] | undefined {
  if (!config.signatures?.includes('v1a') || activeKeyPairs(pairs, now).length > 0) return undefined;
  return [{ ...generateSigningKeyPair(), createdAt: now, expiresAt: null }];
}

const attemptToApi = ({ _id, startedAt, durationMs, ok, statusCode, response, error }: AttemptDocument) => ({
  id: _id,
  startedAt: startedAt.getTime(),
  durationMs,
  ok,
  statusCode,
  response,
  error,
});

function deliveryToApi(delivery: DeliveryDocument, attempts: AttemptDocument[] = []) {
  const { _id, hookId, eventId, event, state, attempts: attemptCount, nextAttemptAt, lastStatus, lastError, createdAt, updatedAt } = delivery;
  return {
    id: _id,
    hookId,
    eventId,
    event,
    state,
    attemptCount,
    nextAttemptAt: state === 'pending' ? nextAttemptAt.getTime() : null,
    lastStatus,
    lastError,
    attempts: attempts.map(attemptToApi),
    createdAt: createdAt.getTime(),
    updatedAt: updatedAt.getTime(),
  };
}

/** Checks a hook's URL and headers beyond their schema: literal private addresses, reserved headers. */
function checkConfig({ url, headers = {}, excludeClientIds, sources, ordering, maxPerSecond, signatures }: HookConfig, hooks: Hooks): HookConfigDocument {
  const reserved = Object.keys(headers).find((name) => reservedHeaders.test(name));
  assertThat(
    reserved === undefined,
    () => new ApiError('guard.invalid_input', `body.config.headers may not set \`${reserved}\``, { field: `body.config.headers.${reserved}` }),
  );
  // The schema admits anything that starts like a URL; the WHATWG parser decides.
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError('guard.invalid_input', 'body.config.url is not a valid URL', { field: 'body.config.url' });
  }
  // Credentials in a URL travel wherever the URL is shown (events about the hook, logs): they go in a header.
  assertThat(
    parsed.username === '' && parsed.password === '',
    () =>
      new ApiError('guard.invalid_input', 'body.config.url may not carry user information (user:password@); send credentials in config.headers', {
        field: 'body.config.url',
      }),
  );
  const { hostname } = parsed;
  // `localhost.` is `localhost`: a trailing dot only makes the name fully qualified.
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  try {
    // Names are checked when a delivery resolves them; addresses written in the URL can be checked now.
    if (isIP(host)) hooks.policy.check(host, host);
    else if (host === 'localhost' || host.endsWith('.localhost')) hooks.policy.check(host, '127.0.0.1');
  } catch (error) {
    if (error instanceof AddressRefusedError)
      throw new ApiError('hook.url_not_allowed', `body.config.url: ${error.message}; see HOOKS_ALLOWED_HOSTS`, { field: 'body.config.url' });
    throw error;
  }
  return {
    url,
    headers,
    ...(excludeClientIds && { excludeClientIds }),
    ...(sources && { sources }),
    ...(ordering && { ordering }),
    ...(maxPerSecond !== undefined && { maxPerSecond }),
    ...(signatures && { signatures }),
  };
}

/**
 * The public half of each hook's `v1a` key pairs, as a JWKS (RFC 7517; OKP keys, RFC 8037), without a
 * token: what a receiver verifies with holds no secret, and reading it from here lets a receiver
 * follow a rotation on its own. A hook that does not sign with `v1a` (or does not exist) is 404.
 */
export function hookKeysRoute(router: ApiRouter, deps: ManagementDeps) {
  router.get('/hooks/:id/jwks', guard({ params: idParams('id'), public: true, response: jwksResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const hook = await deps.hooks.queries.hooks.findById(id);
    const pairs = hook?.config.signatures?.includes('v1a') ? activeKeyPairs(hook.signingKeyPairs, deps.hooks.clock.now()) : [];
    assertThat(pairs.length > 0, () => new ApiError('entity.not_exists_with_id', `no hook with id \`${id}\` signs with v1a`));
    const keys = await Promise.all(
      pairs.map(async ({ publicKey }) => {
        const jwk = publicKeyObject(publicKey).export({ format: 'jwk' });
        return { ...jwk, kid: await calculateJwkThumbprint(jwk as JWK), use: 'sig', alg: 'EdDSA' };
      }),
    );
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = { keys };
  });
}

export function hookRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { hooks } = deps;
  const { hooks: hookQueries } = hooks.queries;

  /** The hooks as the API shows them, with their execution stats when asked for. */
  const present = async (found: HookDocument[], includeStats?: boolean) => {
    const stats = includeStats ? await hooks.queries.executionStats(found.map(({ _id }) => _id)) : undefined;
    return found.map((hook) => ({ ...hookToApi(hook), ...(stats && { executionStats: stats.get(hook._id) }) }));
  };

  router.get('/hooks', guard({ query: paginationQuery(hookStatsQuery), response: { type: 'array', items: hookResponse } }), async (ctx) => {
    // Paging is optional here, as Logto's (hook.ts).
    const page = pageOrAll(ctx.guard.query, { optional: true });
    const [total, found] = await Promise.all([page && hookQueries.count({}), hookQueries.find({}, page)]);
    setPageHeaders(ctx, page, total);
    ctx.body = await present(found, ctx.guard.query.includeExecutionStats);
  });

  router.post('/hooks', guard({ body: hookCreateSchema, response: hookResponse, status: 201 }), async (ctx) => {
    const { name, events: listed, event, config, enabled = true } = ctx.guard.body;
    const events = listed ? [...new Set(listed)] : event !== undefined ? [event] : undefined;
    assertThat(events, new ApiError('hook.missing_events', 'name the events to deliver: `events` (or a single `event`)', { field: 'body.events' }));
    const now = Date.now();
    const signingKey = generateSigningKey();
    const checked = checkConfig(config, hooks);
    const signingKeyPairs = keyPairsFor(checked, undefined, new Date(now));
    const hook: HookDocument = {
      _id: generateId(),
      name,
      events,
      config: checked,
      enabled,
      signingKeys: [{ key: signingKey, createdAt: new Date(now), expiresAt: null }],
      ...(signingKeyPairs && { signingKeyPairs }),
      disabledReason: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    };
    await deps.write(originOf(ctx), async ({ session, record }) => {
      await hookQueries.insert(hook, session);
      record({ entity: 'Hook', action: 'created', id: hook._id, data: hookToApi(hook) });
    });
    ctx.body = { ...hookToApi(hook), signingKey };
    ctx.status = 201;
  });

  router.get(
    '/hooks/:id',
    guard({ params: idParams('id'), query: { type: 'object', properties: hookStatsQuery, additionalProperties: false }, response: hookResponse }),
    async (ctx) => {
      [ctx.body] = await present([await hookQueries.findByIdOrThrow(ctx.guard.params.id)], ctx.guard.query.includeExecutionStats);
    },
  );

  router.patch('/hooks/:id', guard({ params: idParams('id'), body: hookPatchSchema, response: hookResponse }), async (ctx) => {
    const {
      params: { id },
      body: { config, enabled, events, mode = 'skip', ...rest },
    } = ctx.guard;
    const before = await hookQueries.findByIdOrThrow(id);
    const checked = config && checkConfig(config, hooks);
    // Asking for `v1a` for the first time (or after its pairs expired) makes a pair.
    const signingKeyPairs = checked && keyPairsFor(checked, before.signingKeyPairs, hooks.clock.now());
    const set: Partial<HookDocument> = {
      ...rest,
      ...(events && { events: [...new Set(events)] }),
      ...(checked && { config: checked }),
      ...(signingKeyPairs && { signingKeyPairs }),
      // Enabling by hand clears why it stopped, and starts its failure count afresh.
      ...(enabled !== undefined && { enabled, disabledReason: null, failingSince: null, warnedAt: null, disabledAt: null }),
      updatedAt: Date.now(),
    };
    const updated = await deps.write(originOf(ctx), async ({ session, record }) => {
      const changed = await hookQueries.update(id, set, session);
      record({ entity: 'Hook', action: 'updated', id, data: hookToApi(changed) });
      return changed;
    });
    // Back from being disabled: what it missed since it began failing, sent again as `mode` says.
    const missedSince = before.failingSince ?? before.disabledAt;
    if (enabled && !before.enabled && missedSince && mode !== 'skip') await resend(updated, { since: missedSince.getTime(), until: Date.now() }, mode);
    ctx.body = hookToApi(updated);
  });

  router.delete('/hooks/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    await deps.write(originOf(ctx), async ({ session, record }) => {
      const before = await hookQueries.delete(id, session);
      await hooks.queries.removeHook(id, session);
      record({ entity: 'Hook', action: 'deleted', id, data: hookToApi(before) });
    });
    ctx.status = 204;
  });

  // Rotation: the new key signs from now on; the old one keeps signing beside it for the overlap
  // (HOOKS_KEY_OVERLAP), so that receivers can switch keys without dropping a message.
  router.patch('/hooks/:id/signing-key', guard({ params: idParams('id'), response: hookResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const signingKey = generateSigningKey();
    const updated = await deps.write(originOf(ctx), async ({ session, record }) => {
      const hook = await hookQueries.findByIdOrThrow(id, session);
      // The worker's clock, which decides when the old key stops signing.
      const now = hooks.clock.now();
      const until = new Date(now.getTime() + hooks.keyOverlapMs);
      const kept = hook.signingKeys
        .filter(({ expiresAt }) => expiresAt === null || expiresAt > now)
        .map((key) => ({ ...key, expiresAt: key.expiresAt && key.expiresAt < until ? key.expiresAt : until }));
      const result = await hookQueries.update(
        id,
        {
          signingKeys: [{ key: signingKey, createdAt: now, expiresAt: null }, ...kept],
          updatedAt: now.getTime(),
        },
        session,
      );
      record({ entity: 'Hook', action: 'signing_key.rotated', id, data: hookToApi(result) });
      return result;
    });
    ctx.body = { ...hookToApi(updated), signingKey };
  });

  // The same for the `v1a` key pair: the new pair signs from now on, the old one beside it for the overlap.
  router.patch('/hooks/:id/signing-key-pair', guard({ params: idParams('id'), response: hookResponse }), async (ctx) => {
    const { id } = ctx.guard.params;
    const pair = generateSigningKeyPair();
    const updated = await deps.write(originOf(ctx), async ({ session, record }) => {
      const hook = await hookQueries.findByIdOrThrow(id, session);
      assertThat(
        hook.config.signatures?.includes('v1a'),
        () =>
          new ApiError('hook.v1a_not_enabled', 'the hook does not sign with `v1a`; set `config.signatures` to include it first', {
            field: 'config.signatures',
          }),
      );
      const now = hooks.clock.now();
      const until = new Date(now.getTime() + hooks.keyOverlapMs);
      const kept = activeKeyPairs(hook.signingKeyPairs, now).map((kept) => ({
        ...kept,
        expiresAt: kept.expiresAt && kept.expiresAt < until ? kept.expiresAt : until,
      }));
      const result = await hookQueries.update(
        id,
        { signingKeyPairs: [{ ...pair, createdAt: now, expiresAt: null }, ...kept], updatedAt: now.getTime() },
        session,
      );
      record({ entity: 'Hook', action: 'signing_key_pair.rotated', id, data: hookToApi(result, now) });
      return result;
    });
    ctx.body = hookToApi(updated, hooks.clock.now());
  });

  router.post('/hooks/:id/test', guard({ params: idParams('id'), body: hookTestSchema, bodyOptional: true, response: testReportResponse }), async (ctx) => {
    const hook = await hookQueries.findByIdOrThrow(ctx.guard.params.id);
    const { event, events, config } = ctx.guard.body;
    if (events && config) {
      // Logto's form (packages/core/src/libraries/hook/index.ts, triggerTestHook): each event's sample to
      // the configuration given, signed with the hook's key; 204 when every one is accepted.
      const target = { ...hook, config: checkConfig(config, hooks) };
      const results = await Promise.all(
        [...new Set(events)].map((name) => {
          const sample = samplePayload(name);
          return hooks.send(webhookRequest(target, sample.id, sample.payload));
        }),
      );
      const unreachable = results.find(({ statusCode }) => statusCode === null);
      if (unreachable) throw new ApiError('hook.send_test_payload_failed', `the test payload could not be sent: ${unreachable.error ?? 'unknown error'}`);
      const refused = results.find(({ ok }) => !ok);
      if (refused) {
        throw new ApiError('hook.endpoint_responded_with_error', `the endpoint answered ${refused.statusCode}`, {
          responseStatus: refused.statusCode,
          responseBody: refused.response ?? '',
        });
      }
      ctx.status = 204;
      return;
    }
    const { id, payload } = samplePayload(event ?? hook.events[0]);
    const { ok, statusCode, durationMs, response, error } = await hooks.send(webhookRequest(hook, id, payload));
    ctx.body = { ok, statusCode, durationMs, response, error };
  });

  // Logto's recent logs of a hook, made of our delivery attempts: one entry per attempt, keyed `TriggerHook.<event>`.
  router.get(
    '/hooks/:id/recent-logs',
    guard({ params: idParams('id'), query: paginationQuery(recentLogsQuery), response: { type: 'array', items: hookLogResponse } }),
    async (ctx) => {
      const {
        params: { id },
        query: { start_time: startTime, end_time: endTime, logKey },
      } = ctx.guard;
      await hookQueries.findByIdOrThrow(id);
      const now = hooks.clock.now();
      const until = endTime === undefined ? now : new Date(endTime);
      const after = startTime === undefined ? new Date(until.getTime() - 24 * 60 * 60 * 1000) : new Date(startTime);
      const prefix = 'TriggerHook.';
      // A key of another kind names no hook log.
      const event = logKey === undefined ? undefined : logKey.startsWith(prefix) ? logKey.slice(prefix.length) : '\u0000';
      const page = pageOf(ctx.guard.query);
      const { total, found } = await hooks.queries.deliveries.recentAttempts(id, { after, until, event }, page);
      setPageHeaders(ctx, page, total);
      ctx.body = found.map((attempt) => ({
        id: attempt._id,
        key: `${prefix}${attempt.event}`,
        payload: {
          key: `${prefix}${attempt.event}`,
          result: attempt.ok ? 'Success' : 'Error',
          hookId: attempt.hookId,
          eventId: attempt.eventId,
          deliveryId: attempt.deliveryId,
          durationMs: attempt.durationMs,
          response: { statusCode: attempt.statusCode, body: attempt.response },
          error: attempt.error,
        },
        createdAt: attempt.startedAt.getTime(),
      }));
    },
  );

  router.get(
    '/hooks/:id/deliveries',
    guard({ params: idParams('id'), query: paginationQuery(deliveryListQuery), response: { type: 'array', items: deliveryResponse } }),
    async (ctx) => {
      const {
        params: { id },
        query: { state, event, since, until },
      } = ctx.guard;
      await hookQueries.findByIdOrThrow(id);
      const filter: Filter<DeliveryDocument> = {
        hookId: id,
        ...(state && { state }),
        ...(event && { event }),
        ...((since !== undefined || until !== undefined) && {
          createdAt: { ...(since !== undefined && { $gte: new Date(since) }), ...(until !== undefined && { $lte: new Date(until) }) },
        }),
      };
      const page = pageOf(ctx.guard.query);
      const { total, found } = await hooks.queries.deliveries.page(filter, page);
      const attempts = await hooks.queries.deliveries.attemptsOf(found.map(({ _id }) => _id));
      setPageHeaders(ctx, page, total);
      ctx.body = found.map((delivery) => deliveryToApi(delivery, attempts.get(delivery._id)));
    },
  );

  router.post(
    '/hooks/:id/deliveries/:deliveryId/redeliver',
    guard({ params: idParams('id', 'deliveryId'), response: deliveryResponse, status: 202 }),
    async (ctx) => {
      const { id, deliveryId } = ctx.guard.params;
      const hook = await hookQueries.findByIdOrThrow(id);
      assertThat(hook.enabled, () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
      assertThat(await hooks.queries.deliveries.findOne(id, deliveryId), () => notFound('delivery', deliveryId));
      assertThat(
        await hooks.queries.deliveries.requeue(id, deliveryId, hooks.clock.now()),
        () => new ApiError('hook.delivery_in_progress', 'the delivery is being attempted now; try again when it has finished'),
      );
      hooks.wake();
      ctx.body = deliveryToApi((await hooks.queries.deliveries.findOne(id, deliveryId))!);
      ctx.status = 202;
    },
  );

  /** Queues the stored events of a range that the hook wants (or `events`, among them), as `mode` picks them; answers how many there were and how many were queued. */
  async function resend(hook: HookDocument, { since, until, events }: { since: number; until: number; events?: string[] }, mode: RecoveryMode) {
    const wanted = events ? events.filter((event) => hook.events.includes(event)) : hook.events;
    // The hook's filters as they are now (hooks/filters.ts), in the query.
    const { sources, excludeClientIds } = hook.config;
    const filter: Filter<HookEventDocument> = {
      createdAt: { $gte: new Date(since), $lte: new Date(until) },
      event: { $in: wanted },
      ...(sources && { $or: [{ source: { $in: [...sources, 'system'] } }, { source: { $exists: false } }] }),
      ...(excludeClientIds && { clientId: { $nin: excludeClientIds } }),
      entityKey: { $ne: `Hook:${hook._id}` },
    };
    const count = await hooks.queries.events.count(filter);
    assertThat(count <= maxReplay, () => new ApiError('hook.replay_too_large', `the range holds ${count} events; replay at most ${maxReplay} at once`));
    const { send } = pickForRecovery(count === 0 ? [] : await hooks.queries.events.ids(filter), mode);
    const queued = send.length === 0 ? 0 : await hooks.queries.queueFor(hook._id, send, hooks.retentionMs, hooks.clock.now());
    if (queued > 0) hooks.wake();
    return { events: count, queued };
  }

  // Backfill: every stored event of the range that the hook subscribes to (or `events`, among
  // them) is delivered to it again, or for the first time if it came before the hook; with
  // `mode: "latest-per-entity"` only the newest event of each entity.
  router.post('/hooks/:id/replay', guard({ params: idParams('id'), body: replaySchema, response: replayResponse, status: 202 }), async (ctx) => {
    const {
      params: { id },
      body: { since, until = Date.now(), events, mode = 'all' },
    } = ctx.guard;
    assertThat(since <= until, () => new ApiError('guard.invalid_input', 'body.since must not be after body.until', { field: 'body.since' }));
    const hook = await hookQueries.findByIdOrThrow(id);
    assertThat(hook.enabled, () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
    ctx.body = await resend(hook, { since, until, ...(events && { events }) }, mode);
    ctx.status = 202;
  });

  // Ours: the hook's failed deliveries of a range, sent again (`all`), only each entity's newest with
  // the older ones marked skipped (`latest-per-entity`), or all marked skipped (`skip`).
  router.post('/hooks/:id/recover', guard({ params: idParams('id'), body: recoverSchema, response: recoverResponse, status: 202 }), async (ctx) => {
    const {
      params: { id },
      body: { since, until = Date.now(), mode = 'all' },
    } = ctx.guard;
    assertThat(since <= until, () => new ApiError('guard.invalid_input', 'body.since must not be after body.until', { field: 'body.since' }));
    const hook = await hookQueries.findByIdOrThrow(id);
    assertThat(hook.enabled || mode === 'skip', () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
    const failed = await hooks.queries.failedDeliveries(id, new Date(since), new Date(until));
    assertThat(
      failed.length <= maxReplay,
      () => new ApiError('hook.replay_too_large', `the range holds ${failed.length} failed deliveries; recover at most ${maxReplay} at once`),
    );
    const { send, leave } = pickForRecovery(failed, mode);
    const queued = await hooks.queries.requeue(
      send.map(({ _id }) => _id),
      hooks.clock.now(),
    );
    const skipped = await hooks.queries.markSkipped(
      leave.map(({ _id }) => _id),
      mode === 'skip' ? 'skipped by a recovery' : 'superseded by a newer event of its entity (recovery, latest-per-entity)',
      hooks.clock.now(),
    );
    if (queued > 0) hooks.wake();
    ctx.body = { failed: failed.length, queued, skipped };
    ctx.status = 202;
  });
}
