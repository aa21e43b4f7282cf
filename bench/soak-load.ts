/**
 * The load of `npm run bench:soak`: an open-loop generator at a constant arrival rate. Request i
 * is due at t0 + i/rate and is sent when due whatever earlier requests are doing, on one of
 * `connections` keep-alive sockets; when all are busy it waits in this generator's own queue.
 * Latency runs from the due time to the last byte of the answer, so a server that falls behind
 * shows it in every request due while it does (no coordinated omission), as in bench/load.mjs.
 *
 * The queue is ours, not http.Agent's: an Agent keeps sending its queued requests on new sockets
 * after it is destroyed, so one run's backlog would be sent during the next. Here, when a run
 * ends, what is still queued is dropped (counted as unsent) and what is in flight is aborted.
 * Figures are kept per minute (by due time) and per kind of request; a window since the last
 * report is handed to `onWindow`.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface SoakRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Tally {
  /** Requests written to a socket. */
  sent: number;
  answered: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Requests that got no answer, by error (`timeout`, `ECONNRESET`, …). */
  errors: Record<string, number>;
  latenciesMs: number[];
}

export interface LoadWindow extends Tally {
  fromS: number;
  toS: number;
  /** Due but not yet sent: every connection was busy. Grows without end when the server falls behind. */
  queued: number;
  inFlight: number;
}

export interface LoadResult {
  rate: number;
  seconds: number;
  /** Requests the schedule made due: rate × seconds. */
  due: number;
  /** Due time of the first request to the last answer or error, seconds. */
  elapsedS: number;
  /** Seconds over which requests fell due (the schedule's length as it ran). */
  sendingS: number;
  total: Tally;
  perMinute: Tally[];
  perKind: Record<string, Tally>;
  /** Send time − due time, ms: the generator's lateness plus any wait for a free connection. */
  sendLagMs: number[];
  /** Due requests never sent: still queued when the wait for the last answers ended. */
  unsent: number;
  /** Sent requests without an answer or error when the wait ended (then aborted). */
  unanswered: number;
  /** The first few bodies of answers ≥ 400, by "kind: status": what the errors were. */
  problems: Record<string, string[]>;
}

export interface LoadOptions {
  port: number;
  rate: number;
  seconds: number;
  /** The i-th request to send (0-based). */
  request: (i: number) => SoakRequest;
  /** Called with each answer's body, for kinds whose answers the mix reads (a created task's id). */
  onAnswer?: (request: SoakRequest, status: number, body: string) => void;
  /** Called every `windowSeconds` with what happened since the previous call. */
  onWindow?: (window: LoadWindow) => void;
  windowSeconds?: number;
  connections?: number;
  /** No byte on a request's socket for this long: the request is an error (`timeout`). */
  timeoutMs?: number;
}

const newTally = (): Tally => ({ sent: 0, answered: 0, statuses: {}, errors: {}, latenciesMs: [] });

const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

export async function driveLoad(options: LoadOptions): Promise<LoadResult> {
  const { port, rate, seconds } = options;
  const windowSeconds = options.windowSeconds ?? 30;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const connections = options.connections ?? 32;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const total = newTally();
  const perMinute: Tally[] = [];
  const perKind: Record<string, Tally> = {};
  const sendLagMs: number[] = [];
  const problems: Record<string, string[]> = {};
  const live = new Set<http.ClientRequest>();
  let window = newTally();
  let windowFrom = 0;
  const count = Math.round(rate * seconds);
  const t0 = performance.now() + 50;
  const dueAt = (i: number) => t0 + (i * 1000) / rate;
  /** Requests due so far; requests [sent, due) are the queue. */
  let due = 0;
  let sent = 0;
  let settled = 0;
  let lastSettled = t0;
  let closed = false;

  const tallies = (kind: string, dueS: number) => {
    const minute = Math.floor(dueS / 60);
    while (perMinute.length <= minute) perMinute.push(newTally());
    perKind[kind] ??= newTally();
    return [total, window, perMinute[minute] as Tally, perKind[kind] as Tally];
  };

  const pump = () => {
    while (!closed && sent < due && live.size < connections) fire(sent++);
  };

  const fire = (index: number) => {
    const dueTime = dueAt(index);
    const request = options.request(index);
    const into = tallies(request.kind, (dueTime - t0) / 1000);
    for (const t of into) t.sent++;
    sendLagMs.push(performance.now() - dueTime);
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    let done = false;
    const finish = (req: http.ClientRequest, outcome: { status: number } | { error: string }) => {
      live.delete(req);
      if (done || closed) return;
      done = true;
      settled++;
      lastSettled = performance.now();
      for (const t of into) {
        if ('status' in outcome) {
          t.answered++;
          bump(t.statuses, String(outcome.status));
          t.latenciesMs.push(lastSettled - dueTime);
        } else bump(t.errors, outcome.error);
      }
      pump();
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: request.path,
        method: request.method,
        headers: body ? { ...request.headers, 'content-length': String(body.length) } : request.headers,
        agent,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const keep = options.onAnswer !== undefined || status >= 400;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (keep) chunks.push(chunk);
        });
        res.on('end', () => {
          finish(req, { status });
          if (!keep) return;
          const text = Buffer.concat(chunks).toString('utf8');
          const key = `${request.kind}: ${status}`;
          const seen = problems[key] ?? [];
          if (status >= 400 && seen.length < 3) problems[key] = [...seen, text.slice(0, 300)];
          options.onAnswer?.(request, status, text);
        });
        res.on('error', (error: NodeJS.ErrnoException) =>
          finish(req, { error: error.code ?? error.message }),
        );
      },
    );
    live.add(req);
    req.setTimeout(timeoutMs, () => {
      finish(req, { error: 'timeout' });
      req.destroy();
    });
    req.on('error', (error: NodeJS.ErrnoException) => finish(req, { error: error.code ?? error.message }));
    req.end(body);
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      due = Math.min(count, Math.floor(((now - t0) * rate) / 1000) + 1);
      pump();
      const atS = (now - t0) / 1000;
      if (options.onWindow && atS - windowFrom >= windowSeconds) {
        options.onWindow({ ...window, fromS: windowFrom, toS: atS, queued: due - sent, inFlight: live.size });
        window = newTally();
        windowFrom = atS;
      }
      if (due >= count) resolve();
      else setTimeout(tick, 1);
    };
    setTimeout(tick, 50);
  });
  const sendingS = (performance.now() - t0) / 1000;
  // Let the queue drain and the answers in flight arrive, for at most one timeout more.
  const deadline = performance.now() + timeoutMs + 1_000;
  while (settled < count && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  closed = true;
  options.onWindow?.({
    ...window,
    fromS: windowFrom,
    toS: (performance.now() - t0) / 1000,
    queued: due - sent,
    inFlight: live.size,
  });
  const unanswered = sent - settled;
  for (const req of live) req.destroy();
  agent.destroy();
  return {
    rate,
    seconds,
    due: count,
    elapsedS: (lastSettled - t0) / 1000,
    sendingS,
    total,
    perMinute,
    perKind,
    sendLagMs,
    unsent: count - sent,
    unanswered,
    problems,
  };
}
