/** Routes for operators, not API clients: liveness and Prometheus metrics. */

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import client from 'prom-client';
import type { RejectionTally } from '../github/webhooks';
import type { Services } from '../operations/services';
import type { EventStreams } from './event-stream';
import { registerWebhookMetrics, webhookBudget } from './webhooks';

export async function mountOps(
  app: FastifyInstance,
  services: Services,
  rejections: RejectionTally,
  streams: EventStreams,
) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const requests = new client.Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by route and status class.',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  });
  const runsGauge = new client.Gauge({
    name: 'svc_runs',
    help: 'Runs by status (read from the database at scrape time).',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const rows = await services.db.rows<{ status: string; n: number }>(
        sql`SELECT status, count(*)::int AS n FROM runs GROUP BY status`,
      );
      this.reset();
      for (const row of rows) this.set({ status: row.status }, Number(row.n));
    },
  });
  void runsGauge;
  const streamsGauge = new client.Gauge({
    name: 'svc_event_streams_open',
    help: 'Server-Sent Event streams open now (GET /api/v1/tasks/{task_id}/events).',
    registers: [registry],
    collect() {
      this.set(streams.openCount);
    },
  });
  void streamsGauge;

  registerWebhookMetrics(registry, rejections, webhookBudget(app));

  app.addHook('onResponse', async (request, reply) => {
    requests.inc({
      route: request.routeOptions.url ?? 'unmatched',
      status: `${Math.floor(reply.statusCode / 100)}xx`,
    });
  });

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await services.db.rows(sql`SELECT 1`);
      return { status: 'ok', database: services.db.kind };
    } catch (error) {
      return reply
        .code(503)
        .send({ status: 'unavailable', database: services.db.kind, error: (error as Error).message });
    }
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
