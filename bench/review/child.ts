/**
 * One engine, one review, in a process of its own (bench/review.ts spawns it): fresh database,
 * real services, a project on the local code host, `createReview`, an in-process Worker, and the
 * figures of that run.
 */

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { Worker } from '../../src/engine/worker';
import { buildApp } from '../../src/http/app';
import { createServices, type Started } from '../../src/main';
import { createReview } from '../../src/review/service';
import { prepareBuiltinSkills } from '../../src/reviewers/builtin/engine';
import { loadCatalog } from '../../src/skills/catalog';
import { newId } from '../../src/storage/ids';
import { findings, projects, runFindings } from '../../src/storage/schema';

export type EngineKind = 'pglite' | 'pglite-existing' | 'postgres';

export interface ChildInput {
  /** pglite: a fresh data dir (initdb in this process); pglite-existing: one made by an earlier process. */
  engine: EngineKind;
  /** Only open the database (initdb, migrations, seed) and exit: prepares pglite-existing's data dir. */
  prepareOnly?: boolean;
  reposDir: string;
  dataDir: string;
  /** owner/name under reposDir. */
  repo: string;
  base: string;
  head: string;
  pgAdminUrl: string;
  /** PostgreSQL only: the database to create (the parent drops it). */
  dbName: string | null;
  /** SVC_BOOTSTRAP_KEY of the database (a workspace key the probe reads tasks with). */
  bootstrapKey: string;
  /**
   * Serve the HTTP API on loopback during the review and probe `/healthz` and a task read at this
   * many requests per second each, from another process (bench/review/probe.mjs); 0: no probe.
   */
  probeRate?: number;
  /** Review the same range again once the first review completed (every finding is seen again). */
  rereview?: boolean;
}

/** How responsive the process stayed while one review ran. */
export interface Responsiveness {
  /**
   * Event-loop delay beyond the 10 ms sampling timer (perf_hooks monitorEventLoopDelay), ms, from
   * createReview to the run's end. One sample per timer turn: a long stall is one sample, so its
   * length shows in max, hardly in p99.
   */
  lag: { samples: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** Paced requests answered during the review, latency from the due time (bench/review/probe.mjs). */
  probe: Record<string, ProbeFigures> | null;
  /**
   * When the run entered each step (`currentStep`, seen by a 50 ms poll), ms after createReview,
   * and the longest event-loop stall seen while it was the current step (a 10 ms timer's lateness).
   */
  steps: { step: string; atMs: number; maxLagMs: number }[];
  /** Per step of the run (as in `steps`), the probe's figures for the requests due during it. */
  byStep: Record<string, Record<string, StepLatency>>;
  /** Stalls of the probe (both endpoints), ms after createReview, with the step they began in. */
  stalls: { fromMs: number; toMs: number; requests: number; worstMs: number; step: string }[];
}

export interface ProbeFigures {
  rate: number;
  seconds: number;
  sent: number;
  answered: number;
  errors: number;
  first_error: string | null;
  statuses: Record<string, number>;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  over_100ms: number;
  worst_at_s: number;
  /** Requests over 100 ms grouped by time; from/to are wall-clock ms of their due times. */
  stalls: { from_ms: number; to_ms: number; requests: number; worst_ms: number }[];
  /** [wall-clock ms the request was due, latency ms] of every answered request. */
  samples?: [number, number][];
}

/** The requests of one endpoint due while the run was in one step. */
export interface StepLatency {
  answered: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  over100: number;
}

/** A second review of the same range, right after the first. */
export interface RereviewResult extends Responsiveness {
  status: string;
  error: unknown;
  wallMs: number;
  timings: Record<string, number>;
  findings: number;
}

export interface ChildResult {
  skipped?: string;
  status: string;
  error: unknown;
  /** Run finished_at − just before createReview, ms. */
  wallMs: number;
  /** Seen completed by the 50 ms poll − just before createReview, ms. */
  observedWallMs: number;
  createMs: number;
  /** Run started_at − just before createReview, ms. */
  queuedMs: number;
  /** Run finished_at − started_at, ms. */
  handlerMs: number;
  timings: Record<string, number>;
  byReviewerMs: Record<string, number>;
  findings: number;
  findingsByRule: Record<string, number>;
  gaps: { code: string; message: string }[];
  maxRssBytes: number;
  sampledPeakRssBytes: number;
  sampledPeakHeapBytes: number;
  rssBeforeBytes: number;
  cpuMs: number;
  eventLoopUtilization: number;
  /** CPU other processes used during the review, in cores (Linux), or null. */
  othersCores: number | null;
  dbVersion: string;
  responsiveness: Responsiveness;
  rereview?: RereviewResult;
}

const PROBE_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'probe.mjs');
const LAG_RESOLUTION_MS = 10;
/** A timer this late is a stall worth naming (see writeStallWindows). */
const STALL_MS = 100;

/**
 * The stalls of every review in this process, in performance.now() time. Under BENCH_CPU_PROF
 * they are written beside the CPU profile in the profile's clock (monotonic microseconds), so
 * bench/review/stall-frames.mjs can say which code ran during each.
 */
const stallWindows: { from: number; to: number; step: string | undefined }[] = [];
function writeStallWindows() {
  const dirIndex = process.execArgv.indexOf('--cpu-prof-dir');
  const dir = dirIndex >= 0 ? process.execArgv[dirIndex + 1] : undefined;
  if (!dir) return;
  const offsetUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  const windows = stallWindows.map((w) => ({
    fromUs: Math.round(w.from * 1000 + offsetUs),
    toUs: Math.round(w.to * 1000 + offsetUs),
    step: w.step,
  }));
  writeFileSync(join(dir, `stalls-${process.pid}.json`), JSON.stringify(windows));
}

/** Event-loop delay from now until `stop` (perf_hooks monitorEventLoopDelay, 10 ms timer). */
function watchLag(): { stop: () => Responsiveness['lag'] } {
  const histogram = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      // The histogram holds the timer's whole period; the lag is what exceeds the resolution.
      const ms = (ns: number) => Math.max(0, ns / 1e6 - LAG_RESOLUTION_MS);
      return {
        samples: histogram.count,
        p50Ms: ms(histogram.percentile(50)),
        p99Ms: ms(histogram.percentile(99)),
        maxMs: ms(histogram.max),
      };
    },
  };
}

/** Paced requests from another process (bench/review/probe.mjs) until `stop`. */
function startProbe(
  targets: { name: string; url: string; headers?: Record<string, string> }[],
  rate: number,
): { stop: () => Promise<Record<string, ProbeFigures> | null> } {
  if (rate <= 0 || targets.length === 0) return { stop: async () => null };
  const probe = spawn(process.execPath, [PROBE_SCRIPT, JSON.stringify({ targets, rate })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  probe.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  const exited = new Promise<void>((resolve) => probe.on('exit', () => resolve()));
  return {
    async stop() {
      probe.stdin.end();
      await exited;
      const line = out.trim().split('\n').at(-1);
      return line?.startsWith('{') ? (JSON.parse(line) as Record<string, ProbeFigures>) : null;
    },
  };
}

/** Busy and total CPU time of the whole machine, ms (Linux /proc/stat), or null elsewhere. */
function machineCpu(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const tick = 1000 / 100; // USER_HZ is 100 on Linux
    return { busy: (total - idle) * tick, total: total * tick };
  } catch {
    return null;
  }
}

function dbUrl(admin: string, name: string): string {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function runChild(input: ChildInput): Promise<ChildResult> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_REPOS_DIR: input.reposDir,
    SVC_DATA_DIR: input.dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    SVC_BOOTSTRAP_KEY: input.bootstrapKey,
  };
  if (input.engine === 'postgres') {
    if (!input.dbName) throw new Error('postgres needs a database name');
    const admin = new pg.Client({ connectionString: input.pgAdminUrl });
    try {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${input.dbName}`);
    } catch (error) {
      return {
        skipped: `PostgreSQL not usable at ${input.pgAdminUrl}: ${(error as Error).message}`,
      } as ChildResult;
    } finally {
      await admin.end().catch(() => {});
    }
    env.DATABASE_URL = dbUrl(input.pgAdminUrl, input.dbName);
  }
  const config = loadConfig(env);
  let started: Started | null = null;
  let worker: Worker | null = null;
  try {
    started = await createServices(config, { logger: pino({ level: 'warn' }, pino.destination(2)) });
    const { services, workspaceId } = started;
    if (input.prepareOnly) return { status: 'prepared' } as ChildResult;
    const [ver] = await services.db.rows<{ v: string }>(sql`SELECT version() AS v`);
    const projectId = newId('project');
    await services.db.orm
      .insert(projects)
      .values({ id: projectId, workspaceId, name: 'shop', repoFullName: input.repo, installationId: 1 });
    worker = new Worker(services.engine, { concurrency: config.workerConcurrency });
    await worker.start();
    // As `svc serve` does once its worker started (src/cli/prepare-analysis.ts): the rules are
    // compiled before a review comes, here before the measured one.
    await prepareBuiltinSkills(loadCatalog);

    let app: Awaited<ReturnType<typeof buildApp>> | null = null;
    let base = '';
    if ((input.probeRate ?? 0) > 0) {
      app = await buildApp(services, { logger: false });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      if (!address || typeof address === 'string') throw new Error('server has no TCP address');
      base = `http://127.0.0.1:${address.port}`;
    }
    const auth = { authorization: `Bearer ${input.bootstrapKey}`, 'project-id': projectId };
    /** One review of the range, created and run to its end, with the responsiveness around it. */
    const reviewOnce = async () => {
      const lagWatch = watchLag();
      const createdAtWall = Date.now();
      const t0 = performance.now();
      const created: { id?: string; task?: { id: string } } = await createReview(
        { db: services.db, engine: services.engine, codeHosts: services.codeHosts, env: config.env },
        { workspaceId, projectId },
        { base: input.base, head: input.head, reviewers: ['security', 'correctness', 'secrets'] },
      );
      const createMs = performance.now() - t0;
      // The acknowledgement names the task (`id`); earlier versions returned the task row.
      const task = { id: created.id ?? created.task?.id ?? '' };
      // The probe starts once the task exists (its read is one of the two probed requests).
      const probeRun = startProbe(
        base
          ? [
              { name: 'healthz', url: `${base}/healthz` },
              { name: 'task_read', url: `${base}/api/v1/tasks/${task.id}`, headers: auth },
            ]
          : [],
        input.probeRate ?? 0,
      );
      const steps: { step: string; atMs: number; maxLagMs: number }[] = [
        { step: 'created', atMs: 0, maxLagMs: 0 },
      ];
      // Which step a stall belongs to: a 10 ms timer's lateness, charged to the step current then.
      let expected = performance.now() + LAG_RESOLUTION_MS;
      const stepLag = setInterval(() => {
        const now = performance.now();
        const current = steps.at(-1);
        if (current) current.maxLagMs = Math.max(current.maxLagMs, now - expected);
        if (now - expected > STALL_MS) stallWindows.push({ from: expected, to: now, step: current?.step });
        expected = now + LAG_RESOLUTION_MS;
      }, LAG_RESOLUTION_MS);
      let run = await services.engine.latestRun(task.id);
      while (run && !['completed', 'failed', 'canceled'].includes(run.status)) {
        const step = run.currentStep ?? run.status;
        if (steps.at(-1)?.step !== step) steps.push({ step, atMs: performance.now() - t0, maxLagMs: 0 });
        await new Promise((r) => setTimeout(r, 50));
        run = await services.engine.latestRun(task.id);
      }
      clearInterval(stepLag);
      writeStallWindows();
      const observedWallMs = performance.now() - t0;
      const lag = lagWatch.stop();
      const probe = await probeRun.stop();
      const wallZero = performance.timeOrigin + t0;
      const stepAt = (ms: number) => steps.filter((s) => s.atMs <= ms).at(-1)?.step ?? 'created';
      // Both endpoints' stalls, merged where they overlap (within a second of each other).
      const stalls: Responsiveness['stalls'] = [];
      for (const x of Object.values(probe ?? {})
        .flatMap((p) => p.stalls)
        .map((x) => ({
          fromMs: x.from_ms - wallZero,
          toMs: x.to_ms - wallZero,
          requests: x.requests,
          worstMs: x.worst_ms,
        }))
        .sort((a, b) => a.fromMs - b.fromMs)) {
        const last = stalls.at(-1);
        if (last && x.fromMs - last.toMs <= 1000) {
          last.toMs = Math.max(last.toMs, x.toMs);
          last.requests += x.requests;
          last.worstMs = Math.max(last.worstMs, x.worstMs);
        } else stalls.push({ ...x, step: stepAt(x.fromMs) });
      }
      const byStep: Record<string, Record<string, StepLatency>> = {};
      for (const [endpoint, figures] of Object.entries(probe ?? {})) {
        const latencies = new Map<string, number[]>();
        for (const [due, ms] of figures.samples ?? []) {
          const step = stepAt(due - wallZero);
          latencies.set(step, [...(latencies.get(step) ?? []), ms]);
        }
        for (const [step, xs] of latencies) {
          const sorted = xs.sort((a, b) => a - b);
          const at = (p: number) =>
            sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? null;
          byStep[step] ??= {};
          (byStep[step] as Record<string, StepLatency>)[endpoint] = {
            answered: sorted.length,
            p50Ms: at(0.5),
            p99Ms: at(0.99),
            maxMs: sorted.at(-1) ?? null,
            over100: sorted.filter((x) => x > 100).length,
          };
        }
        delete figures.samples;
      }
      if (!run) throw new Error(`review ${task.id} has no run`);
      const result = (run.result ?? {}) as {
        review?: { timings?: Record<string, number | Record<string, number>> };
      };
      const { by_reviewer_ms, ...timings } = result.review?.timings ?? {};
      // What this run reported (run_findings), whatever ledger the range's findings live in.
      const rows = await services.db.orm
        .select({ rule: findings.rule, n: sql<number>`count(*)::int` })
        .from(findings)
        .innerJoin(runFindings, eq(runFindings.findingId, findings.id))
        .where(and(eq(runFindings.runId, run.id), eq(findings.workspaceId, workspaceId)))
        .groupBy(findings.rule);
      const finishedAt = run.finishedAt ? run.finishedAt.getTime() : createdAtWall + observedWallMs;
      const startedAt = run.startedAt ? run.startedAt.getTime() : createdAtWall;
      return {
        run,
        createdAtWall,
        createMs,
        observedWallMs,
        finishedAt,
        startedAt,
        timings: timings as Record<string, number>,
        byReviewerMs: (by_reviewer_ms ?? {}) as Record<string, number>,
        rows,
        responsiveness: { lag, probe, steps, byStep, stalls },
      };
    };

    // Measured from here.
    global.gc?.();
    const rssBeforeBytes = process.memoryUsage().rss;
    let sampledPeakRssBytes = rssBeforeBytes;
    let sampledPeakHeapBytes = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      sampledPeakRssBytes = Math.max(sampledPeakRssBytes, m.rss);
      sampledPeakHeapBytes = Math.max(sampledPeakHeapBytes, m.heapUsed);
    }, 50);
    const cpu0 = process.cpuUsage();
    const machine0 = machineCpu();
    const elu0 = performance.eventLoopUtilization();
    const first = await reviewOnce();
    const cpu = process.cpuUsage(cpu0);
    const machine1 = machineCpu();
    const elu = performance.eventLoopUtilization(elu0);
    clearInterval(sampler);
    const maxRssBytes = process.resourceUsage().maxRSS * 1024;
    let rereview: RereviewResult | undefined;
    if (input.rereview) {
      const again = await reviewOnce();
      rereview = {
        status: again.run.status,
        error: again.run.error ?? null,
        wallMs: again.finishedAt - again.createdAtWall,
        timings: again.timings,
        findings: again.rows.reduce((a, r) => a + Number(r.n), 0),
        ...again.responsiveness,
      };
    }
    await app?.close();
    const { run, rows } = first;
    return {
      status: run.status,
      error: run.error ?? null,
      wallMs: first.finishedAt - first.createdAtWall,
      observedWallMs: first.observedWallMs,
      createMs: first.createMs,
      queuedMs: first.startedAt - first.createdAtWall,
      handlerMs: first.finishedAt - first.startedAt,
      timings: first.timings,
      byReviewerMs: first.byReviewerMs,
      findings: rows.reduce((a, r) => a + Number(r.n), 0),
      findingsByRule: Object.fromEntries(rows.map((r) => [r.rule, Number(r.n)])),
      gaps: run.gaps,
      maxRssBytes,
      sampledPeakRssBytes,
      sampledPeakHeapBytes,
      rssBeforeBytes,
      cpuMs: (cpu.user + cpu.system) / 1000,
      eventLoopUtilization: elu.utilization,
      othersCores:
        machine0 && machine1
          ? Math.max(0, machine1.busy - machine0.busy - (cpu.user + cpu.system) / 1000) / first.observedWallMs
          : null,
      dbVersion: (ver?.v ?? '').split(',')[0] ?? '',
      responsiveness: first.responsiveness,
      ...(rereview ? { rereview } : {}),
    };
  } finally {
    await worker?.stop().catch(() => {});
    await started?.services.db.close().catch(() => {});
  }
}
