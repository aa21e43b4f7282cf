// The load generator of `npm run bench:api`: runs in its own process (spawned by bench/api.ts)
// so the client never shares an event loop with the server it measures. Reads one JSON spec
// from argv[2], drives 127.0.0.1 only, ends on its own after `seconds`, and prints one JSON line.
//
// mode "paced": an open-loop generator. Request i is due at t0 + i/rate; it is sent when due
// whatever earlier requests are doing (a keep-alive pool of `connections` sockets; requests
// wait for a free socket when all are busy). Latency is measured from the due time, so a slow
// server cannot hide its queueing by slowing the client down (no coordinated omission).
//
// mode "autocannon": autocannon's programmatic API, closed loop (each connection sends its next
// request when the previous answer arrives), optionally with autocannon's own `overallRate`.
//
// spec.webhook = { event, action }: the requests are GitHub webhook deliveries, made here: the
// body is the first example of that event and action in @octokit/webhooks-examples (a real
// payload), signed once with the secret from the environment (BENCH_WEBHOOK_SECRET, never in
// argv) as `X-Hub-Signature-256`; every request carries its own `X-GitHub-Delivery`, so each
// one is a new delivery, not a redelivery.
//
// spec.idempotencyKeys = true: every request carries its own `Idempotency-Key`.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2] ?? '{}');
const url = new URL(spec.url);
if (url.hostname !== '127.0.0.1') {
  process.stderr.write(`load.mjs drives 127.0.0.1 only, not ${url.hostname}\n`);
  process.exit(2);
}
const seconds = Math.min(Math.max(Number(spec.seconds) || 10, 1), 120);

/** A function giving each request's extra headers, or null when every request is the same. */
let perRequestHeaders = null;
if (spec.webhook) {
  const secret = process.env.BENCH_WEBHOOK_SECRET;
  if (!secret) {
    process.stderr.write('load.mjs: spec.webhook needs BENCH_WEBHOOK_SECRET in the environment\n');
    process.exit(2);
  }
  const index = createRequire(import.meta.url).resolve('@octokit/webhooks-examples');
  const definitions = JSON.parse(readFileSync(index, 'utf8'));
  const payload = definitions
    .find((d) => d.name === spec.webhook.event)
    ?.examples.find((e) => (spec.webhook.action ? e.action === spec.webhook.action : true));
  if (!payload) {
    process.stderr.write(`load.mjs: no example ${spec.webhook.event}.${spec.webhook.action}\n`);
    process.exit(2);
  }
  // The body never changes, so it is signed once; only the delivery id differs per request.
  spec.body = JSON.stringify(payload);
  spec.headers = {
    ...spec.headers,
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/bench',
    'x-github-event': spec.webhook.event,
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(spec.body).digest('hex')}`,
  };
  const prefix = randomUUID();
  let n = 0;
  perRequestHeaders = () => ({ 'x-github-delivery': `${prefix}-${++n}` });
}
if (spec.idempotencyKeys) {
  // A new Idempotency-Key per request, as a client that retries safely sends: every request is
  // a first request (recorded), never a replay.
  const prefix = randomUUID();
  let n = 0;
  const before = perRequestHeaders;
  perRequestHeaders = () => ({ ...before?.(), 'idempotency-key': `${prefix}-${++n}` });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted.length ? sorted[sorted.length - 1] : null,
  };
}

async function paced() {
  const rate = Number(spec.rate);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections ?? 16 });
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  const headers = { ...spec.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
  const latencies = [];
  const slow = [];
  const serviceTimes = [];
  const statuses = {};
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let firstError = null;
  const total = Math.round(rate * seconds);
  const t0 = performance.now() + 50;

  const fire = (due) => {
    sent++;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: spec.method,
        headers: perRequestHeaders ? { ...headers, ...perRequestHeaders() } : headers,
        agent,
      },
      (res) => {
        const wrote = performance.now();
        res.on('data', () => {});
        res.on('end', () => {
          const end = performance.now();
          completed++;
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          latencies.push(end - due);
          if (end - due > SLOW_MS) slow.push({ due: due - t0, ms: end - due });
          serviceTimes.push(end - (req.sentAt ?? wrote));
        });
      },
    );
    req.on('socket', () => {
      req.sentAt = performance.now();
    });
    req.on('error', (error) => {
      errors++;
      firstError ??= error.message;
    });
    req.end(body);
  };

  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - t0) * rate) / 1000) + 1);
      while (sent < due) fire(t0 + (sent * 1000) / rate);
      if (sent >= total) return resolve();
      setTimeout(tick, 1);
    };
    setTimeout(tick, 50);
  });
  const sendingEnded = performance.now();
  // Let the answers in flight arrive, but never wait more than 10 s for them.
  const deadline = sendingEnded + 10_000;
  while (completed + errors < sent && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 5));
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  const non2xx = Object.entries(statuses)
    .filter(([s]) => Number(s) < 200 || Number(s) > 299)
    .reduce((n, [, c]) => n + c, 0);
  return {
    mode: 'paced',
    target_rate: rate,
    sent,
    completed,
    lost: sent - completed - errors,
    errors,
    first_error: firstError,
    non2xx,
    statuses,
    seconds: elapsed,
    rps: completed / elapsed,
    latency_ms: summarize(latencies),
    service_ms: summarize(serviceTimes),
    stalls: stalls(slow),
  };
}

/**
 * Requests slower than SLOW_MS, grouped into stalls: slow requests whose due times lie within
 * one second of each other. One stall catching many consecutive requests means the server (or
 * the machine) stopped for a while; slow requests spread thinly mean a slow path.
 */
const SLOW_MS = 50;
function stalls(slow) {
  slow.sort((a, b) => a.due - b.due);
  const out = [];
  for (const s of slow) {
    const last = out.at(-1);
    if (last && s.due - last.last_due_ms <= 1000) {
      last.requests++;
      last.last_due_ms = s.due;
      last.worst_ms = Math.max(last.worst_ms, s.ms);
    } else out.push({ first_due_ms: s.due, last_due_ms: s.due, requests: 1, worst_ms: s.ms });
  }
  return out.map((x) => ({
    at_s: Math.round(x.first_due_ms) / 1000,
    span_ms: Math.round(x.last_due_ms - x.first_due_ms),
    requests: x.requests,
    worst_ms: Math.round(x.worst_ms),
  }));
}

async function cannon() {
  const statuses = {};
  const result = await autocannon({
    url: url.href,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections ?? 32,
    duration: seconds,
    ...(spec.rate ? { overallRate: Number(spec.rate) } : {}),
    ...(perRequestHeaders
      ? {
          requests: [
            {
              method: spec.method,
              path: url.pathname + url.search,
              headers: spec.headers,
              body: spec.body,
              setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...perRequestHeaders() } }),
            },
          ],
        }
      : {}),
    setupClient: (client) => {
      client.on('response', (status) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
      });
    },
  });
  const l = result.latency;
  return {
    mode: 'autocannon',
    target_rate: spec.rate ?? null,
    sent: result.requests.sent,
    completed: result.requests.total,
    lost: 0,
    errors: result.errors + result.timeouts,
    first_error: null,
    non2xx: result.non2xx,
    statuses,
    seconds: result.duration,
    rps: result.requests.total / result.duration,
    // autocannon records whole milliseconds.
    latency_ms: { p50: l.p50, p90: l.p90, p99: l.p99, p999: l.p99_9, max: l.max },
    service_ms: null,
  };
}

const out = spec.mode === 'paced' ? await paced() : await cannon();
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
