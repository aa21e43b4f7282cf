/**
 * `npm run bench:slow-clients`: slow and unauthenticated clients against a fresh `svc serve`
 * (embedded database, no worker, default limits), over real loopback sockets, with the server's
 * resident memory read from /proc.
 *
 * - Webhook trickle: 64 connections each declare a 512 KiB delivery (together the whole 32 MiB
 *   in-flight budget) and send a byte a second; 1 s later, 75 genuine signed GitHub payloads are
 *   posted over 5 s. Reported: how the deliveries were answered and how long they took, and when
 *   the trickles were closed. Run with the defaults, and with the pace off
 *   (SVC_WEBHOOK_MIN_BYTES_PER_S=0, svc before it had one) for comparison.
 * - API flood: 1,500 connections at once post a 1 MiB body to /api/v1/projects without a key.
 *   Reported: the answers, and the server's RSS idle, at its peak (VmHWM) and 5 s after.
 *
 * Written to the slow-clients section of docs/benchmarks.md (BENCH_DOC: another file).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { signPayload } from '../src/github/webhooks/signature';
import { webhookExamples } from '../test/helpers/webhooks';
import { writeSection } from './review/doc-section';
import { startSvc, waitHealthy } from './soak-server';

const ROOT = join(import.meta.dirname, '..');
const DOC = process.env.BENCH_DOC || join(ROOT, 'docs', 'benchmarks.md');
const KiB = 1024;
const MiB = 1024 * KiB;
const SECRET = 'bench-webhook-secret';
const TRICKLES = 64;
const TRICKLE_DECLARED = 512 * KiB;
const GENUINE = 75;
const GENUINE_SPREAD_MS = 5_000;
const FLOOD = Number(process.env.BENCH_FLOOD || 1_500);
const FLOOD_BODY = MiB;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const statusLine = (received: string) => Number(received.split(' ')[1]) || 0;

function procMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) / 1024;
}

const tally = (statuses: number[]) => {
  const out: Record<string, number> = {};
  for (const s of statuses) out[String(s || 'closed')] = (out[String(s || 'closed')] ?? 0) + 1;
  return Object.entries(out)
    .map(([code, n]) => `${n}× ${code}`)
    .join(', ');
};
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/** Declares TRICKLE_DECLARED bytes, sends one a second; settles with the answer when closed. */
function trickle(port: number): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      clearInterval(timer);
      resolve({ status: statusLine(received), ms: performance.now() - started });
    });
    socket.once('connect', () => {
      socket.write(
        `POST /api/v1/webhooks/github HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: ${randomUUID()}\r\nX-Hub-Signature-256: sha256=${'0'.repeat(64)}\r\nContent-Length: ${TRICKLE_DECLARED}\r\n\r\n{`,
      );
      timer = setInterval(() => socket.write(' '), 1_000);
    });
  });
}

async function deliver(port: number, payload: unknown): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const body = JSON.stringify(payload);
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': signPayload(SECRET, body),
      },
      body,
    });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

interface TrickleOutcome {
  name: string;
  genuine: { status: number; ms: number }[];
  trickles: { status: number; ms: number }[];
}

async function webhookTrickle(name: string, env: Record<string, string>): Promise<TrickleOutcome> {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-slow-'));
  const svc = await startSvc(
    {
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_REPOS_DIR: join(dir, 'repos'),
      SVC_NO_WORKER: '1',
      GITHUB_WEBHOOK_SECRET: SECRET,
      ...env,
    },
    dir,
  );
  try {
    await waitHealthy(svc);
    const payloads = webhookExamples()
      .filter((e) => e.event === 'pull_request')
      .map((e) => e.payload);
    const trickles = Array.from({ length: TRICKLES }, () => trickle(svc.port));
    await sleep(1_000);
    const genuine = await Promise.all(
      Array.from({ length: GENUINE }, async (_, i) => {
        await sleep((i * GENUINE_SPREAD_MS) / GENUINE);
        return deliver(svc.port, payloads[i % payloads.length]);
      }),
    );
    // Without a pace the trickles are held until the request timeout (30 s): wait for that too.
    return { name, genuine, trickles: await Promise.all(trickles) };
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Posts FLOOD_BODY bytes without a key, streaming with backpressure until answered or closed. */
function unauthenticatedPost(port: number): Promise<number> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * KiB, 'x');
    let received = '';
    let sent = 0;
    const writeBody = () => {
      while (!socket.destroyed && received === '' && sent < FLOOD_BODY) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', writeBody);
          return;
        }
      }
    };
    socket.on('data', (data) => {
      received += data.toString('latin1');
    });
    socket.on('error', () => socket.destroy());
    socket.once('close', () => resolve(statusLine(received)));
    socket.once('connect', () => {
      socket.write(
        `POST /api/v1/projects HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${FLOOD_BODY}\r\n\r\n`,
      );
      writeBody();
    });
  });
}

interface FloodOutcome {
  statuses: number[];
  idleMiB: number;
  peakMiB: number;
  afterMiB: number;
  ms: number;
}

async function apiFlood(): Promise<FloodOutcome> {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-slow-'));
  const svc = await startSvc(
    { SVC_DATA_DIR: join(dir, 'data'), SVC_REPOS_DIR: join(dir, 'repos'), SVC_NO_WORKER: '1' },
    dir,
  );
  try {
    await waitHealthy(svc);
    // Warm the route (the first answers compile and allocate what every later one reuses).
    await Promise.all(Array.from({ length: 20 }, () => unauthenticatedPost(svc.port)));
    await sleep(3_000);
    const idleMiB = procMiB(svc.pid, 'VmRSS');
    writeFileSync(`/proc/${svc.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: FLOOD }, () => unauthenticatedPost(svc.port)));
    const ms = performance.now() - started;
    await sleep(500);
    const peakMiB = procMiB(svc.pid, 'VmHWM');
    await sleep(5_000);
    return { statuses, idleMiB, peakMiB, afterMiB: procMiB(svc.pid, 'VmRSS'), ms };
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const startedAt = new Date();
const loadBefore = os.loadavg();
const trickleRuns = [
  await webhookTrickle('defaults (grace 2 s, 1 KiB/s, source share 1/4)', {}),
  await webhookTrickle('per-source share off (SVC_WEBHOOK_SOURCE_SHARE=1)', {
    SVC_WEBHOOK_SOURCE_SHARE: '1',
  }),
  await webhookTrickle('pace off (SVC_WEBHOOK_MIN_BYTES_PER_S=0)', { SVC_WEBHOOK_MIN_BYTES_PER_S: '0' }),
];
for (const run of trickleRuns) {
  console.log(
    `${run.name}: deliveries ${tally(run.genuine.map((g) => g.status))}, max ${quantile(
      run.genuine.map((g) => g.ms),
      1,
    ).toFixed(0)} ms; trickles ${tally(run.trickles.map((t) => t.status))}, closed by ${(
      quantile(
        run.trickles.map((t) => t.ms),
        1,
      ) / 1000
    ).toFixed(1)} s`,
  );
}
const flood = await apiFlood();
console.log(
  `API flood ${FLOOD}× ${FLOOD_BODY / MiB} MiB without a key: ${tally(flood.statuses)} in ${(flood.ms / 1000).toFixed(1)} s; ` +
    `RSS idle ${flood.idleMiB.toFixed(0)} MiB, peak ${flood.peakMiB.toFixed(0)} MiB, 5 s after ${flood.afterMiB.toFixed(0)} MiB`,
);
const loadAfter = os.loadavg();

const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const ms = (values: number[], q: number) => `${quantile(values, q).toFixed(0)} ms`;
const out = [
  '## Slow and unauthenticated clients (`npm run bench:slow-clients`)',
  '',
  `Written by \`npm run bench:slow-clients\` on ${startedAt.toISOString()}; only this section is replaced on each run. ` +
    `Machine: ${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `${os.type()} ${os.release()}, Node ${process.version}. Load average (1/5/15 min) at the start ${load(loadBefore)}, ` +
    `at the end ${load(loadAfter)}. Server: a fresh \`svc serve\` (embedded database, no worker) per row, default limits unless the row says otherwise; every client on 127.0.0.1.`,
  '',
  `**Webhook trickle.** ${TRICKLES} connections each declare a ${TRICKLE_DECLARED / KiB} KiB delivery (together the whole 32 MiB ` +
    `in-flight budget) and send one byte a second; from 1 s later, ${GENUINE} genuine signed \`pull_request\` payloads ` +
    `(21–27 KiB, from @octokit/webhooks-examples) are posted over ${GENUINE_SPREAD_MS / 1000} s, each once, as GitHub does (it does not redeliver on its own).`,
  '',
  '| configuration | genuine deliveries | p50 / max | trickles answered | trickles closed by |',
  '|---|---|---:|---|---:|',
  ...trickleRuns.map(
    (r) =>
      `| ${r.name} | ${tally(r.genuine.map((g) => g.status))} | ${ms(
        r.genuine.map((g) => g.ms),
        0.5,
      )} / ${ms(
        r.genuine.map((g) => g.ms),
        1,
      )} | ${tally(r.trickles.map((t) => t.status))} | ${(
        quantile(
          r.trickles.map((t) => t.ms),
          1,
        ) / 1000
      ).toFixed(1)} s |`,
  ),
  '',
  `**API flood.** ${FLOOD} connections at once each post a ${FLOOD_BODY / MiB} MiB body to \`/api/v1/projects\` without a key, ` +
    'streaming it until answered. RSS of the server process: idle (after 20 such warm-up posts), peak during the flood ' +
    '(`VmHWM`, reset just before) and 5 s after the last answer.',
  '',
  '| answers | time | RSS idle | peak RSS | growth | RSS 5 s after |',
  '|---|---:|---:|---:|---:|---:|',
  `| ${tally(flood.statuses)} | ${(flood.ms / 1000).toFixed(1)} s | ${flood.idleMiB.toFixed(0)} MiB | ${flood.peakMiB.toFixed(0)} MiB | ` +
    `+${(flood.peakMiB - flood.idleMiB).toFixed(0)} MiB | ${flood.afterMiB.toFixed(0)} MiB |`,
  '',
  'Reading: 408 is a trickle cut by the pace (past `SVC_WEBHOOK_BODY_GRACE_MS` and behind `SVC_WEBHOOK_MIN_BYTES_PER_S`, or ' +
    'giving its share up to a delivery because it was already behind); 503 is `webhooks_busy` (no room, refused from the headers). ' +
    'With the pace off the trickles hold the budget until the 30 s request timeout, and the deliveries in that time are refused: ' +
    'the per-source share cannot tell them apart, since every sender here is 127.0.0.1, as all GitHub deliveries come from a few addresses. ' +
    'The API flood is answered 401 from the headers: no body is read, and each connection is closed after a 2 s linger that drops ' +
    'what the client still sends.',
];
writeSection(DOC, 'slow-clients', out.join('\n'));
console.log(`\nwrote the slow-clients section of ${DOC}`);
