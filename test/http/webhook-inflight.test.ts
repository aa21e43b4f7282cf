/**
 * The webhook route's in-flight budget: 32 concurrent 24 MiB posts carrying a (fake) signature
 * header, over real sockets, with the body limit raised to GitHub's own cap (the worst an
 * operator can configure), cannot make the server hold more than SVC_WEBHOOK_INFLIGHT_BYTES of
 * bodies at once. Those that do not fit are answered 503 `webhooks_busy` with Retry-After from
 * their headers, and their bodies are not read; those admitted are read and refused on their
 * signature. A chunked body, which declares no length, takes the body limit from the budget.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InFlightBudget } from '../../src/http/inflight-budget';
import { webhookBudget } from '../../src/http/webhooks';
import { createTestApp, type TestApp } from '../helpers/app';
import { WEBHOOK_PATH, WEBHOOK_SECRET } from '../helpers/webhooks';

const MiB = 1024 * 1024;
const BODY = 24 * MiB;
const BUDGET = 32 * MiB;
const CONCURRENT = 32;
const CHUNK = Buffer.alloc(256 * 1024, 'x');
const CRLF = Buffer.from('\r\n');

interface Answer {
  status: number;
  headers: string;
  body: string;
  /** Body bytes this client managed to write before the answer or the close. */
  sent: number;
}

/** One POST over its own socket, streaming `BODY` bytes with backpressure until answered. */
function post(port: number, chunked: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    let sent = 0;
    let answered = false;
    const head = [
      `POST ${WEBHOOK_PATH} HTTP/1.1`,
      'Host: svc.test',
      'Content-Type: application/json',
      'X-GitHub-Event: push',
      `X-GitHub-Delivery: ${randomUUID()}`,
      `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
      chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${BODY}`,
      '',
      '',
    ].join('\r\n');
    const writeBody = () => {
      while (!answered && !socket.destroyed && sent < BODY) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, BODY - sent));
        sent += piece.length;
        const ok = socket.write(
          chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, CRLF]) : piece,
        );
        if (!ok) {
          socket.once('drain', writeBody);
          return;
        }
      }
      if (chunked && sent >= BODY && !answered && !socket.destroyed) socket.write('0\r\n\r\n');
    };
    socket.on('connect', () => {
      socket.write(head);
      writeBody();
    });
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(received.slice(0, end))?.[1] ?? Number.NaN);
      if (received.length - end - 4 >= length) {
        answered = true;
        socket.destroy();
      }
    });
    // Writing into a connection the server closed after answering is expected: the answer counts.
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`no answer (sent ${sent} bytes): ${JSON.stringify(received.slice(0, 200))}`));
        return;
      }
      resolve({
        status: Number(received.split(' ')[1]),
        headers: received.slice(0, end).toLowerCase(),
        body: received.slice(end + 4),
        sent,
      });
    });
  });
}

describe('webhook in-flight budget', () => {
  let t: TestApp;
  let port: number;
  let budget: InFlightBudget;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
        SVC_WEBHOOK_BODY_LIMIT: String(25 * MiB),
        SVC_WEBHOOK_INFLIGHT_BYTES: String(BUDGET),
      },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    const found = webhookBudget(t.app);
    if (!found) throw new Error('the webhook route has no in-flight budget');
    budget = found;
  });
  afterAll(() => t.close());

  const expectBusy = (answer: Answer) => {
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatch(/\r\nretry-after: \d+/);
    expect(answer.headers).toMatch(/\r\nconnection: close/);
    expect(JSON.parse(answer.body).error).toMatchObject({
      code: 'webhooks_busy',
      request_id: expect.stringMatching(/^req_/),
    });
  };

  it('reads at most the budget of 32 concurrent 24 MiB bodies and refuses the rest from their headers', async () => {
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => post(port, false)));

    const read = answers.filter((a) => a.status === 401);
    const busy = answers.filter((a) => a.status === 503);
    expect(read.length + busy.length, JSON.stringify(answers.map((a) => a.status))).toBe(CONCURRENT);
    // Bodies accepted for reading: never more at once than fit in the budget (one 24 MiB body
    // in 32 MiB), so most of a simultaneous burst is refused.
    expect(budget.peak).toBeLessThanOrEqual(BUDGET);
    expect(budget.admitted).toBe(read.length);
    expect(budget.refused).toBe(busy.length);
    expect(read.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(CONCURRENT / 2);
    for (const answer of read) {
      expect(JSON.parse(answer.body).error.code).toBe('unauthenticated');
    }
    for (const answer of busy) expectBusy(answer);
    // Each refused sender was answered while it was still sending: from its headers, not its body.
    expect(busy.filter((a) => a.sent < BODY).length).toBeGreaterThanOrEqual(busy.length / 2);
    // Shares come back when each answer is done (the server's side of the close may lag ours).
    await vi.waitFor(() => expect(budget.inFlight).toBe(0));
  }, 60_000);

  it('takes the body limit for a chunked body, whose length is unknown, and refuses the rest from their headers', async () => {
    const before = { admitted: budget.admitted, refused: budget.refused };
    budget.peak = 0;
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(port, true)));
    expect(budget.peak).toBeLessThanOrEqual(BUDGET);
    const read = answers.filter((a) => a.status === 401);
    const busy = answers.filter((a) => a.status === 503);
    expect(read.length + busy.length).toBe(8);
    expect(read.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(4);
    for (const answer of busy) expectBusy(answer);
    expect(budget.admitted - before.admitted).toBe(read.length);
    expect(budget.refused - before.refused).toBe(busy.length);
    await vi.waitFor(() => expect(budget.inFlight).toBe(0));
  }, 60_000);

  it('counts what is in flight in /metrics and tallies refusals as over_budget', async () => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^svc_webhook_inflight_bytes 0$/m);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const again = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(again.body).toMatch(/^svc_webhook_rejections_total\{reason="over_budget"\} [1-9]\d*$/m);
  });
});
