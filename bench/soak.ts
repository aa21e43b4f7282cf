/**
 * `npm run bench:soak`: the service under a constant 500 req/s for 10 minutes, with its memory
 * watched, written to the soak section of docs/benchmarks.md.
 *
 * The compiled service (`node bin/svc.mjs serve`, worker on, as an operator runs it) is started
 * as a child process on a fresh embedded data dir, or with `--database postgres`
 * (SOAK_DATABASE=postgres) on a fresh PostgreSQL database made through BENCH_PG_ADMIN_URL. A real
 * git repository (`bench/repo`, pull requests 1–20 each adding an `eval`) is served by the local
 * code host; one project is created on it, its setup run and one review run to the end, so the
 * reads have a task, a review and findings to read. Then, after an unreported warm-up, this
 * process sends the mix of bench/soak-mix.ts at a constant arrival rate (bench/soak-load.ts) for
 * SOAK_SECONDS, sampling the server's RSS (/proc) and V8 heap (/metrics) every
 * SOAK_SAMPLE_SECONDS, and prints progress to stderr every 30 s.
 *
 * Environment: SOAK_SECONDS (600), SOAK_RATE (500), SOAK_WARMUP_SECONDS (20),
 * SOAK_SAMPLE_SECONDS (5), SOAK_DATABASE (embedded | postgres), BENCH_PG_ADMIN_URL
 * (postgres://postgres@127.0.0.1:5432/test), BENCH_NO_WRITE=1 (print, do not write the doc),
 * BENCH_DOC (the doc's path). Every run saves its figures to tmp/bench-soak.json (SOAK_RESULTS);
 * SOAK_RENDER=<that file> rewrites the doc's section from saved figures without measuring.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { gitIn, makeRepo, openPullRequest } from '../test/helpers/git';
import { withAdmin as withAdminAt } from './pg-admin';
import { writeSection } from './review/doc-section';
import { driveLoad, type LoadResult, type LoadWindow, type SoakRequest, type Tally } from './soak-load';
import { interleave, SOAK_MIX } from './soak-mix';
import {
  type MinuteFigures,
  renderSoakSection,
  type SoakFigures,
  summarizeTally,
  VERDICT_LIMITS,
} from './soak-report';
import { type ProcessSample, type Svc, sampleProcess, startSvc, waitHealthy } from './soak-server';
import { percentiles, summarizeMemory } from './soak-stats';

const ROOT = join(import.meta.dirname, '..');
const DOC = process.env.BENCH_DOC || join(ROOT, 'docs', 'benchmarks.md');
const RESULTS = process.env.SOAK_RESULTS || join(ROOT, 'tmp', 'bench-soak.json');
const SECONDS = Math.max(1, Number(process.env.SOAK_SECONDS || 600));
const RATE = Math.max(1, Number(process.env.SOAK_RATE || 500));
const WARMUP_SECONDS = Math.max(0, Number(process.env.SOAK_WARMUP_SECONDS ?? 20));
const SAMPLE_SECONDS = Math.max(1, Number(process.env.SOAK_SAMPLE_SECONDS || 5));
const PROGRESS_SECONDS = 30;
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/test';
const argDatabase = process.argv.indexOf('--database');
const DATABASE = (argDatabase > 0 ? process.argv[argDatabase + 1] : process.env.SOAK_DATABASE) || 'embedded';
if (DATABASE !== 'embedded' && DATABASE !== 'postgres') {
  console.error(`--database must be embedded or postgres, not ${DATABASE}`);
  process.exit(2);
}
/** Diagnostics: keep only these kinds of the mix (comma-separated), e.g. "healthz,task read". */
const KINDS = process.env.SOAK_KINDS?.split(',').map((k) => k.trim());
const MIX = SOAK_MIX.map((s) => ({ ...s, weight: !KINDS || KINDS.includes(s.kind) ? s.weight : 0 }));
/** Rule reviewers only: a review needs no model provider and costs the same every time. */
const LINEUP = ['security', 'correctness', 'secrets'];
const PULL_REQUESTS = 20;
const KEY = `svc_ws_soak_${randomBytes(12).toString('hex')}`;

const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the repository and the database ---------------------------------------------------------

/** `bench/repo` with pull requests 1..N, all the same one-file change holding an `eval`. */
function makeBenchRepo(reposDir: string): void {
  const repo = makeRepo(reposDir, 'bench/repo', {
    'package.json': '{ "name": "bench-repo", "version": "1.0.0" }\n',
    'src/index.ts': 'export const answer = 42;\n',
    'README.md': '# bench repo\n',
  });
  openPullRequest(
    repo,
    1,
    { 'src/run.ts': 'export function run(input: string): unknown {\n  return eval(input);\n}\n' },
    'feature',
  );
  const refs = Array.from(
    { length: PULL_REQUESTS - 1 },
    (_, i) => `update refs/pull/${i + 2}/head feature\n`,
  );
  gitIn(repo, ['update-ref', '--stdin'], refs.join(''));
}

/** The admin connection at PG_ADMIN_URL. */
const withAdmin = <T>(fn: (client: pg.Client) => Promise<T>) => withAdminAt(PG_ADMIN_URL, fn);

// ---- setting the project up over the API -----------------------------------------------------

interface Fixture {
  projectId: string;
  setupTaskId: string;
  reviewTaskId: string;
  findings: number;
}

async function api(
  svc: Svc,
  method: string,
  path: string,
  projectId: string | null,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${svc.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(projectId ? { 'project-id': projectId } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function waitRun(svc: Svc, projectId: string, taskId: string, what: string): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const { json } = await api(svc, 'GET', `/api/v1/tasks/${taskId}`, projectId);
    const run = json.run as { status?: string; error?: unknown } | undefined;
    if (run?.status === 'completed') return;
    if (run?.status === 'failed' || run?.status === 'canceled')
      throw new Error(`the ${what} run ${run.status}: ${JSON.stringify(run.error)}`);
    await sleep(250);
  }
  throw new Error(`the ${what} run did not finish within 180 s`);
}

async function setUp(svc: Svc): Promise<Fixture> {
  const created = await api(svc, 'POST', '/api/v1/projects', null, {
    name: 'soak',
    repository: { full_name: 'bench/repo', installation_id: 1 },
    setup: true,
  });
  const project = created.json.project as { id: string } | undefined;
  const setup = created.json.setup as { task: { id: string } } | undefined;
  if (created.status !== 201 || !project || !setup)
    throw new Error(`creating the project answered ${created.status}: ${JSON.stringify(created.json)}`);
  await waitRun(svc, project.id, setup.task.id, 'setup');
  const review = await api(svc, 'POST', '/api/v1/reviews', project.id, { pr: 1, reviewers: LINEUP });
  const reviewId = review.json.id as string | undefined;
  if (review.status !== 202 || !reviewId)
    throw new Error(`the first review answered ${review.status}: ${JSON.stringify(review.json)}`);
  await waitRun(svc, project.id, reviewId, 'first review');
  const findings = await api(svc, 'GET', '/api/v1/findings', project.id);
  const count = (findings.json.data as unknown[] | undefined)?.length ?? 0;
  if (count === 0)
    throw new Error('the first review found nothing: the findings reads would read an empty ledger');
  return { projectId: project.id, setupTaskId: setup.task.id, reviewTaskId: reviewId, findings: count };
}

// ---- the mix as requests ---------------------------------------------------------------------

const PATHS: Record<string, string> = {
  'task status': 'GET /api/v1/tasks/{latest review}/status',
  'task read': 'GET /api/v1/tasks/{latest review}',
  'findings list': 'GET /api/v1/findings',
  'review read': 'GET /api/v1/reviews/{first review}',
  'project read': 'GET /api/v1/projects/{id}',
  healthz: 'GET /healthz',
  'learning create': 'POST /api/v1/learnings, a new Idempotency-Key each',
  'review create': `POST /api/v1/reviews {pr: 1–${PULL_REQUESTS}, reviewers: [${LINEUP.join(', ')}]}, a new Idempotency-Key each`,
};

function mixRequests(fixture: Fixture) {
  const order = interleave(MIX);
  const prefix = randomUUID();
  const headers = { authorization: `Bearer ${KEY}`, 'project-id': fixture.projectId };
  const post = { ...headers, 'content-type': 'application/json' };
  // Clients poll the review they created last: its task is pending, running or just finished.
  let latestReview = fixture.reviewTaskId;
  let reviews = 0;
  // Keys count across calls (the warm-up and the measured load share this factory): every write
  // is a first request, never a replay or a conflict with an earlier one.
  let writes = 0;
  const request = (i: number): SoakRequest => {
    const kind = MIX[order[i % order.length] as number]?.kind as string;
    switch (kind) {
      case 'task status':
        return { kind, method: 'GET', path: `/api/v1/tasks/${latestReview}/status`, headers };
      case 'task read':
        return { kind, method: 'GET', path: `/api/v1/tasks/${latestReview}`, headers };
      case 'findings list':
        return { kind, method: 'GET', path: '/api/v1/findings', headers };
      case 'review read':
        return { kind, method: 'GET', path: `/api/v1/reviews/${fixture.reviewTaskId}`, headers };
      case 'project read':
        return { kind, method: 'GET', path: `/api/v1/projects/${fixture.projectId}`, headers };
      case 'healthz':
        return { kind, method: 'GET', path: '/healthz', headers: {} };
      case 'learning create':
        return {
          kind,
          method: 'POST',
          path: '/api/v1/learnings',
          headers: { ...post, 'idempotency-key': `${prefix}-${++writes}` },
          body: JSON.stringify({
            learning: `Soak learning ${writes}: prefer the project's logger to console output in services.`,
            why: 'bench:soak',
          }),
        };
      case 'review create':
        return {
          kind,
          method: 'POST',
          path: '/api/v1/reviews',
          headers: { ...post, 'idempotency-key': `${prefix}-${++writes}` },
          body: JSON.stringify({ pr: (reviews++ % PULL_REQUESTS) + 1, reviewers: LINEUP }),
        };
      default:
        throw new Error(`no request for the mix's kind ${kind}`);
    }
  };
  const onAnswer = (req: SoakRequest, status: number, body: string) => {
    if (req.kind !== 'review create' || status !== 202) return;
    const id = (JSON.parse(body) as { id?: string }).id;
    if (id) latestReview = id;
  };
  return { request, onAnswer };
}

// ---- measuring -------------------------------------------------------------------------------

interface TimedSample extends ProcessSample {
  atS: number;
}

const fmtMs = (v: number | null) =>
  v === null ? '–' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);
const bad = (t: Tally) =>
  Object.entries(t.statuses)
    .filter(([s]) => Number(s) >= 400)
    .reduce((n, [, c]) => n + c, 0);
const errorCount = (t: Tally) => Object.values(t.errors).reduce((n, c) => n + c, 0);

async function measure(svc: Svc, fixture: Fixture): Promise<{ load: LoadResult; samples: TimedSample[] }> {
  const { request, onAnswer } = mixRequests(fixture);
  if (WARMUP_SECONDS > 0) {
    log(`warm-up: ${WARMUP_SECONDS} s at ${RATE} req/s (not reported)`);
    const warm = await driveLoad({ port: svc.port, rate: RATE, seconds: WARMUP_SECONDS, request, onAnswer });
    log(
      `warm-up done: ${warm.total.answered}/${warm.due} answered, p99 ${fmtMs(percentiles(warm.total.latenciesMs).p99)} ms, ` +
        `statuses ${JSON.stringify(warm.total.statuses)}, errors ${JSON.stringify(warm.total.errors)}`,
    );
  }
  const samples: TimedSample[] = [];
  const origin = performance.now();
  const take = async () => {
    const atS = (performance.now() - origin) / 1000;
    samples.push({ atS, ...(await sampleProcess(svc)) });
  };
  await take();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const next = origin + samples.length * SAMPLE_SECONDS * 1000;
      await sleep(Math.max(0, next - performance.now()));
      if (sampling) await take().catch(() => undefined);
    }
  })();
  const onWindow = (w: LoadWindow) => {
    const s = samples.at(-1);
    const p = percentiles(w.latenciesMs);
    log(
      `${w.toS > SECONDS + 0.5 ? `after the schedule (+${Math.round(w.toS - SECONDS)} s)` : `${Math.round(w.toS)}/${SECONDS} s`}: ${w.sent} sent, ${(w.answered / (w.toS - w.fromS)).toFixed(1)} req/s answered, ` +
        `p50 ${fmtMs(p.p50)} p99 ${fmtMs(p.p99)} max ${fmtMs(p.max)} ms, ≥400 ${bad(w)}, errors ${errorCount(w)}, ` +
        `${w.inFlight} in flight, ${w.queued} queued in the client` +
        (s
          ? `; RSS ${s.rssMiB.toFixed(0)} MiB, heap ${s.heapUsedMiB?.toFixed(0) ?? '?'} MiB, runs pending ${s.runs.pending ?? 0} running ${s.runs.running ?? 0}`
          : ''),
    );
  };
  const load = await driveLoad({
    port: svc.port,
    rate: RATE,
    seconds: SECONDS,
    request,
    onAnswer,
    onWindow,
    windowSeconds: PROGRESS_SECONDS,
  });
  sampling = false;
  await sampler;
  // A server that died during the run has no /proc entry left: its last sample stands.
  await take().catch(() => undefined);
  return { load, samples };
}

/** Figures per minute of the load: its requests by due time, and the samples taken in it. */
function minutes(load: LoadResult, samples: TimedSample[]): MinuteFigures[] {
  let before = samples[0] as TimedSample;
  return load.perMinute.map((tally, minute) => {
    const span = Math.min(60, load.seconds - minute * 60);
    const inside = samples.filter((s) => s.atS > minute * 60 && s.atS <= (minute + 1) * 60);
    const last = inside.at(-1) ?? before;
    const cpuShare = last.atS > before.atS ? (last.cpuS - before.cpuS) / (last.atS - before.atS) : null;
    const lags = inside.flatMap((s) => (s.lagMaxMs === null ? [] : [s.lagMaxMs]));
    const figures: MinuteFigures = {
      minute: minute + 1,
      seconds: span,
      ...summarizeTally(tally),
      rssEndMiB: last.rssMiB,
      heapUsedEndMiB: last.heapUsedMiB,
      cpuShare,
      lagMaxMs: lags.length > 0 ? Math.max(...lags) : null,
    };
    before = last;
    return figures;
  });
}

async function dbVersion(databaseUrl: string | null): Promise<string> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ v: string }>('SELECT version() AS v');
      return `${(rows[0]?.v ?? '').split(',')[0]}, at 127.0.0.1:5432 (a separate process)`;
    } finally {
      await client.end();
    }
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'));
  return `PGlite ${pkg.version} (embedded: PostgreSQL as WebAssembly in the server process)`;
}

async function soak(): Promise<SoakFigures> {
  log('building dist/ if stale');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
  const temp = mkdtempSync(join(os.tmpdir(), 'svc-soak-'));
  const reposDir = join(temp, 'repos');
  mkdirSync(reposDir);
  makeBenchRepo(reposDir);
  let dbName: string | null = null;
  let svc: Svc | null = null;
  const cleanUp = async () => {
    const running = svc;
    svc = null;
    if (running) await running.stop().catch(() => null);
    const name = dbName;
    dbName = null;
    if (name) {
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch((error) =>
        log(`could not drop ${name}: ${(error as Error).message}`),
      );
    }
    rmSync(temp, { recursive: true, force: true });
  };
  // A long run stopped with Ctrl-C (or SIGTERM) still stops the server and removes its database.
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the server and cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const env: Record<string, string> = {
      SVC_DATA_DIR: join(temp, 'data'),
      SVC_REPOS_DIR: reposDir,
      SVC_BOOTSTRAP_KEY: KEY,
    };
    let databaseUrl: string | null = null;
    if (DATABASE === 'postgres') {
      const name = `svc_soak_${randomBytes(5).toString('hex')}`;
      await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
      dbName = name;
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${name}`;
      databaseUrl = url.toString();
      env.DATABASE_URL = databaseUrl;
    }
    const startedAt = new Date();
    const loadBefore = os.loadavg();
    log(`starting svc serve (${DATABASE} database)`);
    svc = await startSvc(env, temp);
    await waitHealthy(svc);
    const version = await dbVersion(databaseUrl);
    log('creating the project, running its setup and one review');
    const fixture = await setUp(svc);
    log(
      `ready: ${fixture.findings} findings; ${SECONDS} s at ${RATE} req/s, progress every ${PROGRESS_SECONDS} s`,
    );
    const { load, samples } = await measure(svc, fixture);
    const loadAfter = os.loadavg();
    const atEnd = samples.at(-1) as TimedSample;
    const serverLog = svc.log;
    const diedDuringRun = svc.child.exitCode !== null || svc.child.signalCode !== null;
    const exitCode = await svc.stop();
    svc = null;
    const cpus = os.cpus();
    return {
      startedAt: startedAt.toISOString(),
      database: DATABASE,
      databaseVersion: version,
      machine: {
        cpu: cpus[0]?.model ?? 'unknown',
        cpus: cpus.length,
        memoryGiB: os.totalmem() / 2 ** 30,
        os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
        node: process.version,
      },
      loadBefore,
      loadAfter,
      rate: RATE,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      sampleSeconds: SAMPLE_SECONDS,
      mix: MIX.filter((s) => s.weight > 0).map((s) => ({ ...s, request: PATHS[s.kind] ?? s.kind })),
      findingsAtStart: fixture.findings,
      sendingS: load.sendingS,
      elapsedS: load.elapsedS,
      due: load.due,
      unsent: load.unsent,
      unanswered: load.unanswered,
      total: summarizeTally(load.total),
      sendLagMs: percentiles(load.sendLagMs),
      perMinute: minutes(load, samples),
      perKind: Object.fromEntries(Object.entries(load.perKind).map(([k, t]) => [k, summarizeTally(t)])),
      samples: samples.map((s) => ({
        atS: Math.round(s.atS * 10) / 10,
        rssMiB: s.rssMiB,
        heapUsedMiB: s.heapUsedMiB,
        externalMiB: s.externalMiB,
        cpuS: s.cpuS,
        lagP99Ms: s.lagP99Ms,
        lagMaxMs: s.lagMaxMs,
      })),
      hwmMiB: atEnd.hwmMiB,
      memory: summarizeMemory(samples, VERDICT_LIMITS),
      limits: VERDICT_LIMITS,
      runsAtEnd: atEnd.runs,
      problems: load.problems,
      serverLog,
      exitCode,
      diedDuringRun,
    };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cleanUp();
  }
}

const figures: SoakFigures = process.env.SOAK_RENDER
  ? (JSON.parse(readFileSync(process.env.SOAK_RENDER, 'utf8')) as SoakFigures)
  : await soak();
if (!process.env.SOAK_RENDER) {
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(figures, null, 2)}\n`);
  log(`saved the figures to ${RESULTS}`);
}
const section = renderSoakSection(figures);
console.log(section);
if (process.env.BENCH_NO_WRITE !== '1') {
  writeSection(DOC, 'soak', section);
  log(`wrote the soak section of ${DOC}`);
}
process.exit(0);
