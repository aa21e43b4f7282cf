/**
 * GitHub webhook deliveries for tests: real payloads from @octokit/webhooks-examples, signed the
 * way GitHub signs them, sent in-process with `app.inject()`.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { signPayload } from '../../src/github/webhooks/signature';

export const WEBHOOK_PATH = '/api/v1/webhooks/github';
export const WEBHOOK_SECRET = 'test-webhook-secret';

export interface WebhookExample {
  event: string;
  action: string | null;
  /** `event.action#n`: unique among the examples, for test names. */
  name: string;
  payload: Record<string, unknown>;
}

/**
 * Every api.github.com example. The package ships them as one index.json (its `main`): a list
 * of `{name, actions, examples}`, where `name` is the X-GitHub-Event value.
 */
export function webhookExamples(): WebhookExample[] {
  const file = createRequire(import.meta.url).resolve('@octokit/webhooks-examples');
  const definitions = JSON.parse(readFileSync(file, 'utf8')) as {
    name: string;
    examples: Record<string, unknown>[];
  }[];
  const seen = new Map<string, number>();
  return definitions.flatMap((definition) =>
    definition.examples.map((payload) => {
      const action = typeof payload.action === 'string' ? payload.action : null;
      const base = action ? `${definition.name}.${action}` : definition.name;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      return { event: definition.name, action, name: `${base}#${n}`, payload };
    }),
  );
}

export interface Delivery {
  event: string;
  /** An object is sent as JSON; a string is sent byte for byte. */
  payload: Record<string, unknown> | string;
  deliveryId?: string;
  /** Default: signed with WEBHOOK_SECRET. null sends no signature header. */
  signature?: string | null;
  secret?: string;
  contentType?: string;
}

export function deliver(app: FastifyInstance, delivery: Delivery) {
  const body = typeof delivery.payload === 'string' ? delivery.payload : JSON.stringify(delivery.payload);
  const signature =
    delivery.signature === undefined
      ? signPayload(delivery.secret ?? WEBHOOK_SECRET, body)
      : delivery.signature;
  return app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: {
      'content-type': delivery.contentType ?? 'application/json',
      'x-github-event': delivery.event,
      'x-github-delivery': delivery.deliveryId ?? randomUUID(),
      'user-agent': 'GitHub-Hookshot/test',
      ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
    },
    payload: body,
  });
}
