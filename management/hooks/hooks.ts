import type { HookDocument } from '../../hooks/models.js';
import { samplePayload } from '../../hooks/sample.js';
import { generateSigningKey } from '../../hooks/signing.js';
import { webhookRequest } from '../../hooks/message.js';
import { ApiError, assertThat } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { generateId } from '../../lib/ids.js';
import { pageOrAll, setPageHeaders } from '../../lib/http/pagination.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, paginationQuery } from '../schemas/common.js';
import { hookCreateSchema, hookPatchSchema, hookResponse, hookStatsQuery, hookTestSchema, testReportResponse } from '../schemas/hooks.js';

import { checkConfig } from './config.js';
import { createResend } from './deliveries.js';
import { hookToApi, keyPairsFor } from './shapes.js';

/** Logto's hooks: list, create (its signing secret shown once), read, change, delete, and a test send. */
export function hookRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { hooks } = deps;
  const { hooks: hookQueries } = hooks.queries;
  const resend = createResend(hooks);

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
    await deps.write(originOf(ctx), async ({ record }) => {
      await hookQueries.insert(hook);
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
    const updated = await deps.write(originOf(ctx), async ({ record }) => {
      const changed = await hookQueries.update(id, set);
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
    await deps.write(originOf(ctx), async ({ record }) => {
      const before = await hookQueries.delete(id);
      await hooks.queries.removeHook(id);
      record({ entity: 'Hook', action: 'deleted', id, data: hookToApi(before) });
    });
    ctx.status = 204;
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
}
