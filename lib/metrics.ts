import { timingSafeEqual } from 'node:crypto';

import type { Middleware } from 'koa';
import type { MongoClient } from 'mongodb';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (`prom-client`), off unless the standalone server has `METRICS_TOKEN` (or a
 * host passes `createMetrics()` to `createIdentity`). Every family is named `oidc_identity_*`; the
 * labels are routes, grant types, outcomes and command names, never an id, a token or a user.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'oidc_identity_process_' });
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  return {
    registry,
    tokens: new Counter({
      name: 'oidc_identity_tokens_total',
      help: 'Token endpoint requests by grant type and outcome (issued, or the OAuth error code)',
      labelNames: ['grant', 'outcome'],
      registers: [registry],
    }),
    exchanges: new Counter({
      name: 'oidc_identity_token_exchanges_total',
      help: 'Token exchanges (impersonation) by outcome: issued, or the OAuth error code',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    apiRequests: new Counter({
      name: 'oidc_identity_api_requests_total',
      help: 'Requests to the Management, Account and Experience APIs by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'oidc_identity_webhook_deliveries_total',
      help: 'Webhook delivery attempts and their outcomes: succeeded, failed (to be retried), given_up, skipped, held_back (rate limit)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'oidc_identity_webhook_delivery_latency_seconds',
      help: 'From an event being recorded to its successful delivery to a hook',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers: [registry],
    }),
    sandboxRuns: new Counter({
      name: 'oidc_identity_custom_claims_runs_total',
      help: 'Custom JWT claims script runs by outcome: ok, timeout, script_error, access_denied, ...',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    databaseLatency: new Histogram({
      name: 'oidc_identity_database_command_seconds',
      help: 'Database round trips by command name (the driver’s command monitoring)',
      labelNames: ['command', 'outcome'],
      buckets: seconds,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * A gauge read when scraped: `read` answers its value per label (the webhooks' queue depth, counted
 * by the hooks' own queries: `lib/` names no feature's collection).
 */
export function watchGauge(metrics: Metrics, spec: { name: string; help: string; label: string }, read: () => Promise<Record<string, number>>) {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: [spec.label],
    registers: [metrics.registry],
    async collect() {
      for (const [value, count] of Object.entries(await read())) this.set({ [spec.label]: value }, count);
    },
  });
}

/** Times every command the driver sends (the client must be made with `monitorCommands: true`). */
export function watchDatabase(metrics: Metrics, client: MongoClient) {
  client.on('commandSucceeded', ({ commandName, duration }) => metrics.databaseLatency.observe({ command: commandName, outcome: 'ok' }, duration / 1000));
  client.on('commandFailed', ({ commandName, duration }) => metrics.databaseLatency.observe({ command: commandName, outcome: 'failed' }, duration / 1000));
}

/** `GET /metrics`, for a scraper that holds `token` as a bearer token; 401 otherwise. */
export function metricsEndpoint(metrics: Metrics, token: string, path = '/metrics'): Middleware {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (ctx, next) => {
    if (ctx.path !== path) return next();
    const given = Buffer.from(ctx.get('authorization'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = { code: 'auth.invalid_token', message: 'the metrics endpoint needs METRICS_TOKEN as a bearer token' };
      return;
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
