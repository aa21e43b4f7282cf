// The responsiveness probe of `npm run bench:review`: runs in its own process (spawned by the
// review child, bench/review/child.ts) so its clock never shares an event loop with the server it
// measures. Reads one JSON spec from argv[2]: { targets: [{ name, url, headers }], rate } (requests
// per second per target). It sends paced requests to each target until its stdin closes (the
// child closes it when the review has ended), then prints one JSON line of figures per target.
//
// Open loop: request i of a target is due at t0 + i/rate and is sent when due whatever earlier
// requests are doing (keep-alive sockets, as many as needed); latency is measured from the due
// time, so a server that stops answering cannot hide the stall by slowing the client down.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const spec = JSON.parse(process.argv[2] ?? '{}');
const rate = Math.min(Math.max(Number(spec.rate) || 20, 1), 500);
const TIMEOUT_MS = 120_000;
/** Requests slower than this are grouped into stalls (see `stalls`). */
const SLOW_MS = 100;

/**
 * Slow requests grouped into stalls: slow requests due within one second of each other. Times are
 * wall-clock milliseconds (performance.timeOrigin-based), comparable with the review process's.
 */
function stalls(slow) {
  slow.sort((a, b) => a.due - b.due);
  const out = [];
  for (const s of slow) {
    const last = out.at(-1);
    if (last && s.due - last.last <= 1000) {
      last.requests++;
      last.last = s.due;
      last.worst = Math.max(last.worst, s.ms);
    } else out.push({ first: s.due, last: s.due, requests: 1, worst: s.ms });
  }
  return out.map((x) => ({
    from_ms: Math.round(performance.timeOrigin + x.first),
    to_ms: Math.round(performance.timeOrigin + x.last),
    requests: x.requests,
    worst_ms: Math.round(x.worst),
  }));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

const probes = spec.targets.map((t) => {
  const url = new URL(t.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`probe.mjs drives 127.0.0.1 only, not ${url.hostname}`);
  return {
    name: t.name,
    url,
    headers: t.headers ?? {},
    agent: new http.Agent({ keepAlive: true, maxSockets: 64 }),
    sent: 0,
    latencies: [],
    statuses: {},
    errors: 0,
    firstError: null,
    worst: { ms: 0, at_s: 0 },
    slow: [],
    samples: [],
    inFlight: 0,
  };
});

let stopping = false;
const t0 = performance.now() + 20;

function fire(probe, due) {
  probe.sent++;
  probe.inFlight++;
  const done = (status, error) => {
    probe.inFlight--;
    const ms = performance.now() - due;
    if (error) {
      probe.errors++;
      probe.firstError ??= error;
      return;
    }
    probe.statuses[status] = (probe.statuses[status] ?? 0) + 1;
    probe.latencies.push(ms);
    if (ms > probe.worst.ms) probe.worst = { ms, at_s: (due - t0) / 1000 };
    if (ms > SLOW_MS) probe.slow.push({ due, ms });
    probe.samples.push([Math.round(performance.timeOrigin + due), Math.round(ms * 10) / 10]);
  };
  const req = http.request(
    {
      host: probe.url.hostname,
      port: probe.url.port,
      path: probe.url.pathname + probe.url.search,
      method: 'GET',
      headers: probe.headers,
      agent: probe.agent,
      timeout: TIMEOUT_MS,
    },
    (res) => {
      res.on('data', () => {});
      res.on('end', () => done(res.statusCode));
    },
  );
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => done(0, e.message));
  req.end();
}

const tick = () => {
  const now = performance.now();
  const due = Math.floor(((now - t0) * rate) / 1000) + 1;
  for (const probe of probes) while (probe.sent < due) fire(probe, t0 + (probe.sent * 1000) / rate);
  if (!stopping) setTimeout(tick, 1);
};
setTimeout(tick, 20);

process.stdin.resume();
process.stdin.on('end', async () => {
  stopping = true;
  const deadline = performance.now() + TIMEOUT_MS;
  while (probes.some((p) => p.inFlight > 0) && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - t0) / 1000;
  const out = {};
  for (const p of probes) {
    const sorted = Float64Array.from(p.latencies).sort();
    out[p.name] = {
      rate,
      seconds,
      sent: p.sent,
      answered: p.latencies.length,
      errors: p.errors,
      first_error: p.firstError,
      statuses: p.statuses,
      p50_ms: percentile(sorted, 50),
      p90_ms: percentile(sorted, 90),
      p99_ms: percentile(sorted, 99),
      max_ms: sorted.length ? sorted[sorted.length - 1] : null,
      over_100ms: p.latencies.filter((ms) => ms > 100).length,
      worst_at_s: p.worst.at_s,
      stalls: stalls(p.slow),
      // [wall-clock ms the request was due, latency ms] of every answered request.
      samples: p.samples,
    };
    p.agent.destroy();
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
});
