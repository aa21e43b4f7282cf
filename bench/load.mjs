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
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2] ?? '{}');
const url = new URL(spec.url);
if (url.hostname !== '127.0.0.1') {
  process.stderr.write(`load.mjs drives 127.0.0.1 only, not ${url.hostname}\n`);
  process.exit(2);
}
const seconds = Math.min(Math.max(Number(spec.seconds) || 10, 1), 120);

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
        headers,
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
  };
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
