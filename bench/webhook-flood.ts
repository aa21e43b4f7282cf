/**
 * `npm run bench:webhooks`: how much memory a flood of large webhook posts can make a server
 * take. For each configuration a fresh `svc serve` (embedded database, no worker) is started as
 * a child process; 32 clients then post 24 MiB each at once, over real sockets, with a signature
 * header that does not match (what anyone can send), declaring the length or chunked. The
 * server's resident memory is read from /proc before the flood and its peak (VmHWM, reset just
 * before) after. Written to the webhook-flood section of docs/benchmarks.md.
 *
 * BENCH_CONCURRENCY (32) and BENCH_BODY_MIB (24) change the flood; BENCH_DOC the output file.
 * Then bench/webhook-acks.ts: acknowledgement latency under a burst of genuine deliveries.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSection } from './review/doc-section';
import { procStatus, startSvc, waitHealthy } from './soak-server';
import { benchWebhookAcks } from './webhook-acks';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = process.env.BENCH_DOC || join(ROOT, 'docs', 'benchmarks.md');
const MiB = 1024 * 1024;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 32);
const BODY = Number(process.env.BENCH_BODY_MIB || 24) * MiB;
const SECRET = 'bench-webhook-secret';
const CHUNK = Buffer.alloc(256 * 1024, 'x');
const CRLF = Buffer.from('\r\n');

interface Scenario {
  name: string;
  env: Record<string, string>;
  chunked: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: 'defaults (body limit 5 MiB, budget 32 MiB)', env: {}, chunked: false },
  { name: 'defaults (body limit 5 MiB, budget 32 MiB)', env: {}, chunked: true },
  { name: 'body limit 5 MiB, no budget', env: { SVC_WEBHOOK_INFLIGHT_BYTES: '0' }, chunked: true },
  {
    name: 'body limit 25 MiB, budget 32 MiB',
    env: { SVC_WEBHOOK_BODY_LIMIT: String(25 * MiB) },
    chunked: false,
  },
  {
    name: 'body limit 25 MiB, budget 32 MiB',
    env: { SVC_WEBHOOK_BODY_LIMIT: String(25 * MiB) },
    chunked: true,
  },
  {
    name: 'body limit 25 MiB, no budget',
    env: { SVC_WEBHOOK_BODY_LIMIT: String(25 * MiB), SVC_WEBHOOK_INFLIGHT_BYTES: '0' },
    chunked: false,
  },
];

interface Outcome {
  scenario: Scenario;
  statuses: Record<string, number>;
  baselineMiB: number;
  peakMiB: number;
  ms: number;
}

/** One post over its own socket, streaming the body with backpressure until answered. */
function post(port: number, chunked: boolean, size = BODY): Promise<number> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    let sent = 0;
    let answered = false;
    const writeBody = () => {
      while (!answered && !socket.destroyed && sent < size) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
        sent += piece.length;
        const ok = socket.write(
          chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, CRLF]) : piece,
        );
        if (!ok) {
          socket.once('drain', writeBody);
          return;
        }
      }
      if (chunked && sent >= size && !answered && !socket.destroyed) socket.write('0\r\n\r\n');
    };
    socket.on('connect', () => {
      socket.write(
        [
          'POST /api/v1/webhooks/github HTTP/1.1',
          'Host: bench',
          'Content-Type: application/json',
          'X-GitHub-Event: push',
          `X-GitHub-Delivery: ${randomUUID()}`,
          `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
          chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`,
          '',
          '',
        ].join('\r\n'),
      );
      writeBody();
    });
    socket.on('data', (data) => {
      received += data.toString('latin1');
      if (received.includes('\r\n\r\n')) {
        answered = true;
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => resolve(Number(received.split(' ')[1]) || 0));
  });
}

async function run(scenario: Scenario): Promise<Outcome> {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-webhooks-'));
  const svc = await startSvc(
    {
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_REPOS_DIR: join(dir, 'repos'),
      GITHUB_WEBHOOK_SECRET: SECRET,
      LOG_LEVEL: 'error',
      ...scenario.env,
    },
    dir,
    ['--no-worker'],
  );
  const { port } = svc;
  try {
    await waitHealthy(svc);
    const { pid } = svc;
    // Warm the route with small posts (the first request compiles and allocates what every later
    // one reuses), so the flood's growth is the bodies'.
    await Promise.all([post(port, false, 1024), post(port, true, 1024)]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const baselineMiB = procStatus(pid, 'VmRSS');
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: CONCURRENCY }, () => post(port, scenario.chunked)),
    );
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const peakMiB = procStatus(pid, 'VmHWM');
    const statuses: Record<string, number> = {};
    for (const s of answers)
      statuses[String(s || 'no answer')] = (statuses[String(s || 'no answer')] ?? 0) + 1;
    return { scenario, statuses, baselineMiB, peakMiB, ms };
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const startedAt = new Date();
const loadBefore = os.loadavg();
const outcomes: Outcome[] = [];
for (const scenario of SCENARIOS) {
  const outcome = await run(scenario);
  outcomes.push(outcome);
  console.log(
    `${scenario.name}, ${scenario.chunked ? 'chunked' : 'Content-Length'}: ${JSON.stringify(outcome.statuses)}, ` +
      `RSS ${outcome.baselineMiB.toFixed(0)} → peak ${outcome.peakMiB.toFixed(0)} MiB ` +
      `(+${(outcome.peakMiB - outcome.baselineMiB).toFixed(0)}) in ${outcome.ms.toFixed(0)} ms`,
  );
}
const loadAfter = os.loadavg();

const describeStatuses = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([code, n]) => `${n}× ${code}`)
    .join(', ');
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const out: string[] = [
  '## Webhook flood (`npm run bench:webhooks`)',
  '',
  `Written by \`npm run bench:webhooks\` on ${startedAt.toISOString()}; only this section is replaced on each run. ` +
    `Machine: ${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `${os.type()} ${os.release()}, Node ${process.version}. Load average (1/5/15 min) at the start ${load(loadBefore)}, ` +
    `at the end ${load(loadAfter)}.`,
  '',
  `Load: ${CONCURRENCY} clients at once, each posting ${BODY / MiB} MiB to \`/api/v1/webhooks/github\` over its own ` +
    'loopback socket with a signature header that does not match the body (anyone can send that), the body ' +
    'either declared (`Content-Length`) or chunked. Server: a fresh `svc serve --no-worker` on the embedded ' +
    'database per row. Memory: the resident set of the server process before the flood (after one 1 KiB warm-up ' +
    'post of each kind) and its peak during it (`VmHWM`, reset just before the flood).',
  '',
  '| configuration | body | answers | RSS before | peak RSS | growth | time |',
  '|---|---|---|---:|---:|---:|---:|',
  ...outcomes.map(
    (o) =>
      `| ${o.scenario.name} | ${o.scenario.chunked ? 'chunked' : 'Content-Length'} | ${describeStatuses(o.statuses)} | ` +
      `${o.baselineMiB.toFixed(0)} MiB | ${o.peakMiB.toFixed(0)} MiB | +${(o.peakMiB - o.baselineMiB).toFixed(0)} MiB | ` +
      `${(o.ms / 1000).toFixed(1)} s |`,
  ),
  '',
  'Reading: 413 is refused from the declared length before a byte of the body is read. 503 is `webhooks_busy`: ' +
    'the in-flight budget (`SVC_WEBHOOK_INFLIGHT_BYTES`) had no room, refused from the headers too (a chunked ' +
    'body, whose length is unknown, takes the whole body limit from the budget). 401 is a body read in full and ' +
    'refused on its signature. "No budget" rows are the server without an in-flight budget ' +
    '(`SVC_WEBHOOK_INFLIGHT_BYTES=0`, what svc did before it had one): every body up to the body limit is ' +
    'buffered at once, so growth scales with the number of senders. The first row, where no body is read at ' +
    'all, is the floor a flood of 32 connections costs (socket reads, including what the lingering close ' +
    'drains and drops, and allocator slack); with the budget the peak stays within that floor plus the budget ' +
    '(the body reader briefly holds a second copy of a body while it joins the chunks).',
];
writeSection(DOC, 'webhook-flood', out.join('\n'));
console.log(`\nwrote the webhook-flood section of ${DOC}`);

// Then how fast genuine deliveries are acknowledged in a burst (its own section).
await benchWebhookAcks(DOC);
