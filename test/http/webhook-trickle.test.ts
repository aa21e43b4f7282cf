/**
 * Trickling senders cannot starve genuine deliveries: 64 connections that each declare a body
 * and send it a byte a second hold the whole in-flight budget, from 127.0.0.1, the address the
 * genuine deliveries come from too (so the per-source share cannot tell them apart; the pace
 * must). Genuine signed GitHub payloads, sent while the trickle goes on, are all acknowledged;
 * the trickles are cut soon after their grace and their shares given back. Small limits, so it
 * runs in seconds; the bounds are generous correctness bounds, not performance claims.
 * The same trickle against a server without the pace refuses the deliveries: the test can fail.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signPayload } from '../../src/github/webhooks/signature';
import type { InFlightBudget } from '../../src/http/inflight-budget';
import { webhookBudget } from '../../src/http/webhooks';
import { createTestApp } from '../helpers/app';
import { WEBHOOK_PATH, WEBHOOK_SECRET, webhookExamples } from '../helpers/webhooks';

const KiB = 1024;
const TRICKLES = 64;
const DECLARED = 4 * KiB;
const BUDGET = TRICKLES * DECLARED;
const GRACE_MS = 1_000;
const GENUINE = 20;

interface Trickle {
  /** The status the server answered (0: closed without one), and ms from connecting to close. */
  done: Promise<{ status: number; ms: number }>;
  stop: () => void;
}

/** A sender that declares DECLARED bytes and sends one a second, until the server closes. */
function trickle(port: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => socket.destroy());
    const done = new Promise<{ status: number; ms: number }>((settle) =>
      socket.once('close', () => {
        clearInterval(timer);
        settle({ status: Number(received.split(' ')[1]) || 0, ms: performance.now() - started });
      }),
    );
    socket.once('connect', () => {
      socket.write(
        [
          `POST ${WEBHOOK_PATH} HTTP/1.1`,
          'Host: svc.test',
          'Content-Type: application/json',
          'X-GitHub-Event: push',
          `X-GitHub-Delivery: ${randomUUID()}`,
          `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
          `Content-Length: ${DECLARED}`,
          '',
          '{',
        ].join('\r\n'),
      );
      timer = setInterval(() => socket.write(' '), 1_000);
      resolve({ done, stop: () => socket.destroy() });
    });
    socket.once('error', reject);
  });
}

/** A genuine delivery: a real GitHub payload, signed, over its own connection. */
async function deliver(
  port: number,
  payload: Record<string, unknown>,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const body = JSON.stringify(payload);
  const response = await fetch(`http://127.0.0.1:${port}${WEBHOOK_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signPayload(WEBHOOK_SECRET, body),
      'user-agent': 'GitHub-Hookshot/test',
    },
    body,
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const payloads = () =>
  webhookExamples()
    .filter((e) => e.event === 'pull_request')
    .slice(0, GENUINE)
    .map((e) => e.payload);

async function serve(minBytesPerS: number) {
  const t = await createTestApp({
    env: {
      GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SVC_WEBHOOK_BODY_LIMIT: String(64 * KiB),
      SVC_WEBHOOK_INFLIGHT_BYTES: String(BUDGET),
      SVC_WEBHOOK_BODY_GRACE_MS: String(GRACE_MS),
      SVC_WEBHOOK_MIN_BYTES_PER_S: String(minBytesPerS),
      // Off: every sender here is 127.0.0.1, and the pace alone must free the budget.
      SVC_WEBHOOK_SOURCE_SHARE: '1',
    },
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const budget = webhookBudget(t.app) as InFlightBudget;
  return { t, budget, port: (t.app.server.address() as AddressInfo).port };
}

/** Opens the trickles and waits until they hold the whole budget. */
async function holdBudget(port: number, budget: InFlightBudget): Promise<Trickle[]> {
  const trickles = await Promise.all(Array.from({ length: TRICKLES }, () => trickle(port)));
  await vi.waitFor(() => expect(budget.inFlight).toBe(BUDGET), { timeout: 5_000 });
  return trickles;
}

describe('webhook deliveries under a trickle that holds the in-flight budget', () => {
  let server: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    server = await serve(KiB);
  });
  afterAll(() => server.t.close());

  it('acknowledges every genuine delivery, and cuts the trickles after their grace', async () => {
    const { port, budget } = server;
    const trickles = await holdBudget(port, budget);
    // Deliveries arrive while the trickles hold everything, some before the grace ends.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const genuine = await Promise.all(payloads().map((payload) => deliver(port, payload)));

    expect(genuine.map((g) => g.status)).toEqual(Array(GENUINE).fill(202));
    for (const g of genuine) expect(g.ms).toBeLessThan(10_000);
    const cut = await Promise.all(trickles.map((t) => t.done));
    for (const c of cut) {
      // 408 when the pace cut it (or it gave its share to a delivery); never held to the
      // request timeout.
      expect(c.status).toBe(408);
      expect(c.ms).toBeLessThan(GRACE_MS + 5_000);
    }
    expect(budget.preempted + budget.cutTooSlow).toBe(TRICKLES);
    await vi.waitFor(() => expect(budget.inFlight).toBe(0));
    // Each cut is tallied (written once a second, read at scrape time).
    await vi.waitFor(async () => {
      const metrics = await server.t.app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/^svc_webhook_rejections_total\{reason="too_slow"\} 64$/m);
    });
  }, 30_000);
});

describe('the same trickle against a server without the pace', () => {
  let server: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    server = await serve(0);
  });
  afterAll(() => server.t.close());

  it('refuses the genuine deliveries 503 while the trickles hold the budget', async () => {
    const { port, budget } = server;
    const trickles = await holdBudget(port, budget);
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 1_000));
    const genuine = await Promise.all(
      payloads()
        .slice(0, 3)
        .map((payload) => deliver(port, payload)),
    );
    expect(genuine.map((g) => g.status)).toEqual([503, 503, 503]);
    for (const t of trickles) t.stop();
    await vi.waitFor(() => expect(budget.inFlight).toBe(0));
  }, 30_000);
});
