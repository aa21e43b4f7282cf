/**
 * One engine, one review, in a process of its own (bench/review.ts spawns it): fresh database,
 * real services, a project on the local code host, `createReview`, an in-process Worker, and the
 * figures of that run.
 */

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { Worker } from '../../src/engine/worker';
import { createServices, type Started } from '../../src/main';
import { createReview } from '../../src/review/service';
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
    const createdAtWall = Date.now();
    const t0 = performance.now();
    const { task } = await createReview(
      { db: services.db, engine: services.engine, codeHosts: services.codeHosts, env: config.env },
      { workspaceId, projectId },
      { base: input.base, head: input.head, reviewers: ['security', 'correctness', 'secrets'] },
    );
    const createMs = performance.now() - t0;
    let run = await services.engine.latestRun(task.id);
    while (run && !['completed', 'failed', 'canceled'].includes(run.status)) {
      await new Promise((r) => setTimeout(r, 50));
      run = await services.engine.latestRun(task.id);
    }
    const observedWallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const machine1 = machineCpu();
    const elu = performance.eventLoopUtilization(elu0);
    clearInterval(sampler);
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
      status: run.status,
      error: run.error ?? null,
      wallMs: finishedAt - createdAtWall,
      observedWallMs,
      createMs,
      queuedMs: startedAt - createdAtWall,
      handlerMs: finishedAt - startedAt,
      timings: timings as Record<string, number>,
      byReviewerMs: (by_reviewer_ms ?? {}) as Record<string, number>,
      findings: rows.reduce((a, r) => a + Number(r.n), 0),
      findingsByRule: Object.fromEntries(rows.map((r) => [r.rule, Number(r.n)])),
      gaps: run.gaps,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      sampledPeakRssBytes,
      sampledPeakHeapBytes,
      rssBeforeBytes,
      cpuMs: (cpu.user + cpu.system) / 1000,
      eventLoopUtilization: elu.utilization,
      othersCores:
        machine0 && machine1
          ? Math.max(0, machine1.busy - machine0.busy - (cpu.user + cpu.system) / 1000) / observedWallMs
          : null,
      dbVersion: (ver?.v ?? '').split(',')[0] ?? '',
    };
  } finally {
    await worker?.stop().catch(() => {});
    await started?.services.db.close().catch(() => {});
  }
}
