/**
 * `POST /api/v1/webhooks/github`: the GitHub webhook receiver. Not an operation of the
 * declaration (no bearer key, no OpenAPI entry): GitHub authenticates by signing the body.
 *
 * The acknowledgement does only: verify `X-Hub-Signature-256` over the raw body bytes, parse the
 * JSON leniently, insert the delivery (deduplicated by `X-GitHub-Delivery`) and create one
 * `webhook` task. It answers 202 `{delivery_id, task_id}`; a redelivery answers 200
 * `{duplicate: true}` and starts nothing. Processing happens in the task's run, in a worker.
 *
 * Refused requests (no secret configured, bad or missing signature, unreadable body) are never
 * stored as deliveries: each leaves a log line and is tallied per reason and hour in
 * `webhook_rejections` (`svc_webhook_rejections_total{reason}` in `/metrics`).
 *
 * Nobody is authenticated before the body is read, so reading is bounded: a request without a
 * signature header (or with no secret configured) is refused from its headers alone, before a
 * byte of its body is read, and a body is read up to `SVC_WEBHOOK_BODY_LIMIT` (default 5 MiB,
 * under GitHub's 25 MB cap), a declared larger one refused from its Content-Length. All bodies
 * in flight together stay within `SVC_WEBHOOK_INFLIGHT_BYTES` (default 32 MiB): a request takes
 * its declared length (a chunked one, whose length is unknown: the body limit) from that budget
 * before its body is read and gives it back when answered; one that does not fit is 503
 * `webhooks_busy` with Retry-After, from its headers. Any answer sent before the body arrived
 * closes the connection, so the rest of that body is not kept reading.
 *
 * A share must be earned by pace (body-pace.ts, inflight-budget.ts), or a trickle of a byte a
 * second would hold it for the whole request timeout: past SVC_WEBHOOK_BODY_GRACE_MS a body
 * behind SVC_WEBHOOK_MIN_BYTES_PER_S is answered 408 and closed (`too_slow`); a delivery that
 * finds the budget full takes the shares of bodies already behind the pace; one client address
 * holds at most SVC_WEBHOOK_SOURCE_SHARE of the budget.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import client from 'prom-client';
import { ApiError } from '../core/errors';
import { nestingRefusal } from '../core/json-nesting';
import {
  acceptDelivery,
  checkSignature,
  parseDeliveryBody,
  type RejectionReason,
  type RejectionTally,
} from '../github/webhooks';
import type { Services } from '../operations/services';
import { ensureWorkspace } from '../storage/keys';
import { measured } from './body-pace';
import { type BodyInFlight, InFlightBudget } from './inflight-budget';
import { closeIfBodyUnread } from './linger';

export const GITHUB_WEBHOOK_PATH = '/api/v1/webhooks/github';

/** How often bodies in flight are checked against the pace (SVC_WEBHOOK_MIN_BYTES_PER_S). */
const PACE_SWEEP_MS = 250;

/** Seconds a refused sender is told to wait: in-flight bodies are answered within the request timeout. */
const BUSY_RETRY_AFTER_S = 5;

const budgets = new WeakMap<FastifyInstance, InFlightBudget>();

/** The in-flight body budget of the webhook route mounted on `app` (metrics, tests). */
export function webhookBudget(app: FastifyInstance): InFlightBudget | undefined {
  return budgets.get(app);
}

export async function mountWebhooks(
  app: FastifyInstance,
  services: Services,
  rejections: RejectionTally,
): Promise<void> {
  let workspaceId: Promise<string> | undefined;
  // One workspace receives every delivery; read once, not on every acknowledgement.
  const workspace = () => {
    workspaceId ??= ensureWorkspace(services.db).catch((error) => {
      workspaceId = undefined;
      throw error;
    });
    return workspaceId;
  };

  await app.register(async (scope) => {
    // Scoped to this route: the body stays the exact bytes GitHub signed, whatever the content
    // type (application/json or x-www-form-urlencoded), and no other route sees this parser.
    scope.removeAllContentTypeParsers();
    const bodyLimit = services.config.webhookBodyLimit;
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
    const tally = (request: FastifyRequest, reason: RejectionReason): void => {
      const event = header(request, 'x-github-event');
      const deliveryId = header(request, 'x-github-delivery');
      request.log.warn({ reason, delivery: deliveryId, event, ip: request.ip }, 'webhook rejected');
      rejections.record({ reason, deliveryId, event });
    };
    const reject = (request: FastifyRequest, reason: RejectionReason, error: ApiError): never => {
      tally(request, reason);
      throw error;
    };
    // Read per request: the environment is the process's configuration, not a snapshot.
    const secret = () => services.config.env.GITHUB_WEBHOOK_SECRET;
    // While the App's secret is rotated, the one it replaces still verifies (docs/operations.md).
    const secrets = () =>
      [secret(), services.config.env.GITHUB_WEBHOOK_SECRET_PREVIOUS].filter((s): s is string => !!s);

    const { sourceShare, ...pace } = services.config.webhookPace;
    const budget = new InFlightBudget(services.config.webhookInflightBytes, { pace, sourceShare, bodyLimit });
    budgets.set(app, budget);
    // Bodies past their grace and behind the pace are cut here, their shares given back.
    if (pace.minBytesPerS > 0) {
      const sweeper = setInterval(() => budget.sweep(), PACE_SWEEP_MS);
      sweeper.unref();
      scope.addHook('onClose', async () => clearInterval(sweeper));
    }

    scope.addHook('onSend', closeIfBodyUnread);

    // Runs after the header checks and before a byte of the body is read. A chunked body
    // declares no length: it may be as long as the limit, so that is what it takes.
    scope.addHook('preParsing', async (request, reply, payload) => {
      const declared = request.headers['content-length'];
      const bytes = declared === undefined ? bodyLimit : Number(declared);
      // Over the body limit: Fastify's reader answers 413 from the header without reading.
      if (!(bytes <= bodyLimit)) return payload;
      let read: ReturnType<typeof measured> | undefined;
      const body: BodyInFlight = {
        bytes,
        source: request.ip,
        startedAt: performance.now(),
        received: 0,
        complete: false,
        cut: (why) => {
          tally(request, 'too_slow');
          read?.cut(
            new ApiError(
              'request_timeout',
              `the webhook body arrived slower than SVC_WEBHOOK_MIN_BYTES_PER_S=${pace.minBytesPerS} after a grace of ${pace.graceMs} ms${why === 'preempted' ? ', and its share of the in-flight budget went to another delivery' : ''}`,
            ),
          );
        },
      };
      if (!budget.take(body)) {
        budget.refused += 1;
        reply.header('retry-after', String(BUSY_RETRY_AFTER_S));
        reject(
          request,
          'over_budget',
          new ApiError(
            'webhooks_busy',
            `webhook bodies in flight already take the budget (SVC_WEBHOOK_INFLIGHT_BYTES=${budget.limit}); retry after ${BUSY_RETRY_AFTER_S} s`,
          ),
        );
      }
      budget.admitted += 1;
      // Given back when the answer is done (or the connection dropped): the body is garbage then.
      reply.raw.once('close', () => budget.give(body));
      read = measured(payload, body);
      return read.stream;
    });

    // Runs before the body is read: what the headers alone condemn costs no buffering.
    scope.addHook('onRequest', async (request) => {
      if (!secret()) {
        reject(
          request,
          'not_configured',
          new ApiError(
            'webhooks_not_configured',
            'GitHub webhooks are not configured: set GITHUB_WEBHOOK_SECRET to the GitHub App webhook secret and restart',
          ),
        );
      }
      if (!header(request, 'x-hub-signature-256')) {
        reject(
          request,
          'signature_missing',
          new ApiError(
            'unauthenticated',
            'X-Hub-Signature-256 is missing: GitHub signs every delivery when the App has a webhook secret',
          ),
        );
      }
    });

    scope.post(GITHUB_WEBHOOK_PATH, { schema: { hide: true }, bodyLimit }, async (request, reply) => {
      const started = performance.now();
      const event = header(request, 'x-github-event');
      const deliveryId = header(request, 'x-github-delivery');
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const problem = checkSignature(secrets(), raw, header(request, 'x-hub-signature-256'));
      if (problem) {
        return reject(
          request,
          problem,
          new ApiError(
            'unauthenticated',
            problem === 'signature_missing'
              ? 'X-Hub-Signature-256 is missing: GitHub signs every delivery when the App has a webhook secret'
              : 'X-Hub-Signature-256 does not match the body signed with GITHUB_WEBHOOK_SECRET (or GITHUB_WEBHOOK_SECRET_PREVIOUS)',
          ),
        );
      }
      if (!event)
        return reject(
          request,
          'event_missing',
          new ApiError('validation_failed', 'X-GitHub-Event is missing'),
        );
      if (!deliveryId || deliveryId.length > 200) {
        return reject(
          request,
          'delivery_id_missing',
          new ApiError('validation_failed', 'X-GitHub-Delivery is missing (or longer than 200 characters)'),
        );
      }
      const parsed = parseDeliveryBody(raw, request.headers['content-type']);
      if ('problem' in parsed) {
        return reject(
          request,
          parsed.problem,
          parsed.problem === 'body_too_deep'
            ? new ApiError('validation_failed', nestingRefusal('the delivery body'))
            : new ApiError('invalid_json', 'the delivery body is not a JSON object'),
        );
      }
      const { payload } = parsed;

      const accepted = await acceptDelivery(services.db, services.engine, {
        id: deliveryId,
        event,
        workspaceId: await workspace(),
        payload,
      });
      const ms = Math.round((performance.now() - started) * 10) / 10;
      request.log.info(
        { delivery: deliveryId, event, task: accepted.taskId, duplicate: accepted.duplicate, ack_ms: ms },
        'webhook acknowledged',
      );
      if (accepted.duplicate) {
        return reply.code(200).send({ duplicate: true, delivery_id: deliveryId, task_id: accepted.taskId });
      }
      return reply.code(202).send({ delivery_id: deliveryId, task_id: accepted.taskId });
    });
  });
}

/**
 * Adds `svc_webhook_rejections_total{reason}` to a Prometheus registry. Counted from the
 * `webhook_rejections` table at scrape time, so every API process reports the same total.
 */
export function registerWebhookMetrics(
  registry: client.Registry,
  rejections: RejectionTally,
  budget?: InFlightBudget,
): void {
  if (budget) {
    new client.Gauge({
      name: 'svc_webhook_inflight_bytes',
      help: 'Webhook body bytes in flight (taken from SVC_WEBHOOK_INFLIGHT_BYTES, not yet answered).',
      registers: [registry],
      collect() {
        this.set(budget.inFlight);
      },
    });
  }
  new client.Counter({
    name: 'svc_webhook_rejections_total',
    help: 'GitHub webhook requests refused (bad or missing signature, not configured, unreadable), by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
    async collect() {
      const counts = await rejections.totals();
      this.reset();
      for (const { reason, n } of counts) this.inc({ reason }, n);
    },
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}
