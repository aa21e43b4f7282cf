/**
 * Acknowledgement latency under a burst of genuine deliveries: a fresh `svc serve` (embedded
 * database, its worker on, as `svc serve` runs by default) receives BENCH_ACK_DELIVERIES (500)
 * validly signed `pull_request.opened` deliveries (@octokit/webhooks-examples, ~21 KB, each its
 * own X-GitHub-Delivery) all at once, each over its own connection, and every answer's latency is
 * timed from the send. GitHub gives up on a delivery not answered within 10 s. Written to the
 * webhook-acks section of docs/benchmarks.md; `npm run bench:webhooks` runs it after the memory
 * flood, and `node bin/run-ts.mjs bench/webhook-acks.ts` runs it alone.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signPayload } from '../src/github/webhooks/signature';
import { writeSection } from './review/doc-section';
import { startSvc, waitHealthy } from './soak-server';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DELIVERIES = Number(process.env.BENCH_ACK_DELIVERIES || 500);
const ROUNDS = Number(process.env.BENCH_ACK_ROUNDS || 3);
const SECRET = 'bench-webhook-secret';

interface AckRound {
  statuses: Record<string, number>;
  latencies: number[];
  wallMs: number;
}

function examplePayload(): string {
  const file = createRequire(import.meta.url).resolve('@octokit/webhooks-examples');
  const definitions = JSON.parse(readFileSync(file, 'utf8')) as {
    name: string;
    examples: Record<string, unknown>[];
  }[];
  const payload = definitions
    .find((d) => d.name === 'pull_request')
    ?.examples.find((e) => e.action === 'opened');
  if (!payload) throw new Error('@octokit/webhooks-examples has no pull_request.opened');
  return JSON.stringify(payload);
}

/** One signed delivery over its own connection; resolves with its status and latency. */
function deliver(port: number, body: string, signature: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/webhooks/github',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-github-event': 'pull_request',
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': signature,
          'user-agent': 'GitHub-Hookshot/bench',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** ROUNDS bursts of DELIVERIES against one fresh server, a pause between them. */
export async function ackFlood(): Promise<AckRound[]> {
  const body = examplePayload();
  const signature = signPayload(SECRET, body);
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-acks-'));
  const svc = await startSvc(
    {
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_REPOS_DIR: join(dir, 'repos'),
      GITHUB_WEBHOOK_SECRET: SECRET,
      LOG_LEVEL: 'error',
    },
    dir,
  );
  const { port } = svc;
  const rounds: AckRound[] = [];
  try {
    await waitHealthy(svc);
    await Promise.all(Array.from({ length: 5 }, () => deliver(port, body, signature)));
    for (let round = 0; round < ROUNDS; round++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: DELIVERIES }, () => deliver(port, body, signature)),
      );
      const statuses: Record<string, number> = {};
      for (const a of answers)
        statuses[String(a.status || 'no answer')] = (statuses[String(a.status || 'no answer')] ?? 0) + 1;
      rounds.push({
        statuses,
        latencies: answers.map((a) => a.ms).sort((a, b) => a - b),
        wallMs: performance.now() - started,
      });
      const r = rounds.at(-1) as AckRound;
      console.log(
        `round ${round + 1}: ${JSON.stringify(statuses)}, p50 ${quantile(r.latencies, 0.5).toFixed(0)} ms, ` +
          `p99 ${quantile(r.latencies, 0.99).toFixed(0)} ms, worst ${(r.latencies.at(-1) ?? 0).toFixed(0)} ms`,
      );
    }
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rounds;
}

/** Runs the burst and replaces the webhook-acks section of `doc`. */
export async function benchWebhookAcks(doc: string): Promise<void> {
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const rounds = await ackFlood();
  const loadAfter = os.loadavg();
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const out = [
    '## Webhook acknowledgements under a burst (`npm run bench:webhooks`)',
    '',
    `Written by \`npm run bench:webhooks\` on ${startedAt.toISOString()}; only this section is replaced on each run. ` +
      `Machine: ${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `${os.type()} ${os.release()}, Node ${process.version}. Load average (1/5/15 min) at the start ${load(loadBefore)}, ` +
      `at the end ${load(loadAfter)}.`,
    '',
    `Load: ${DELIVERIES} validly signed \`pull_request.opened\` deliveries (@octokit/webhooks-examples, ` +
      `${(Buffer.byteLength(examplePayload()) / 1024).toFixed(0)} KiB) posted at once, each over its own loopback connection, ` +
      `${ROUNDS} times, 2 s apart, to one fresh \`svc serve\` on the embedded database with its worker on (the default). ` +
      'Latency is from the send to the answer; GitHub drops a delivery not answered within 10 s. ' +
      'Bursts after the first find the runs of the one before still queued, so they measure acknowledgements ' +
      'beside a busy worker.',
    '',
    'Before acknowledgements went ahead of the worker (src/storage/priority.ts, issue 22.4), the same load on the ' +
      'same machine, run alternately with the fixed build at load averages of 7 to 10 on its 2 cores, was answered ' +
      'at worst in 16.6–28.2 s for a first burst (one of them answered 319 of its 500 with 408) and 12.4–25.0 s for ' +
      'a later one; the fixed build in 5.0–5.3 s and 8.2–10.3 s. The builds alternated because the load of the ' +
      'shared machine moved the figures more than anything else did.',
    '',
    '| burst | answers | p50 | p90 | p99 | worst | whole burst |',
    '|---:|---|---:|---:|---:|---:|---:|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${Object.entries(r.statuses)
          .map(([code, n]) => `${n}× ${code}`)
          .join(', ')} | ${s(quantile(r.latencies, 0.5))} | ${s(quantile(r.latencies, 0.9))} | ` +
        `${s(quantile(r.latencies, 0.99))} | ${s(r.latencies.at(-1) ?? 0)} | ${s(r.wallMs)} |`,
    ),
  ];
  writeSection(doc, 'webhook-acks', out.join('\n'));
  console.log(`wrote the webhook-acks section of ${doc}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  await benchWebhookAcks(process.env.BENCH_DOC || join(ROOT, 'docs', 'benchmarks.md'));
}
