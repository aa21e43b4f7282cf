/**
 * The database dropping every connection (what a PostgreSQL restart does to its clients) kills
 * no process: while real `svc worker` and `svc serve` processes execute a few hundred runs, a
 * second connection terminates every other backend of this file's own database three times
 * (`pg_terminate_backend`; the shared server itself is never restarted). Every process keeps
 * running, `serve` keeps answering /healthz, every LISTEN connection comes back, every run
 * completes or fails by name (never `unknown`) and no run executes twice.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, inArray, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunFailureCode } from '../../src/core/failures';
import { Worker } from '../../src/engine/worker';
import { openDatabase } from '../../src/storage/database';
import { runMessages, runs, workers } from '../../src/storage/schema';
import { freePort } from '../helpers/net';
import { ADMIN_URL } from '../helpers/paths';
import { eventually, svcProcesses } from '../helpers/svc-processes';
import { type Fixture, fixture, settled, sleep } from './helpers';

const WORKERS = 2;
const RUNS = 300;

const TERMINATE_ALL =
  'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';

describe('processes when the database drops every connection (PostgreSQL)', () => {
  let f: Fixture;
  let control: pg.Client;
  let port: number;
  const procs = svcProcesses();
  const { alive } = procs;

  const start = (args: string[], env: Record<string, string> = {}): ChildProcess =>
    procs.start(args, {
      DATABASE_URL: f.tdb.url as string,
      SVC_LEASE_MS: '3000',
      SVC_HEARTBEAT_MS: '300',
      SVC_POLL_MS: '5000',
      SVC_SHUTDOWN_GRACE_MS: '1000',
      SVC_WORKER_CONCURRENCY: '4',
      ...env,
    });

  async function healthz(timeoutMs = 1_000): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status;
  }

  /** Every backend of this database but the control connection's own, ended as a restart would. */
  async function terminateAll(): Promise<number> {
    return (await control.query(TERMINATE_ALL)).rowCount ?? 0;
  }

  beforeAll(async () => {
    f = await fixture('postgres');
    control = new pg.Client({ connectionString: f.tdb.url });
    await control.connect();
    port = await freePort();
    for (let i = 0; i < WORKERS; i++) start(['worker']);
    start(['serve'], {
      PORT: String(port),
      SVC_BOOTSTRAP_KEY: 'svc_ws_db_connections_test_key',
      SVC_REPOS_DIR: mkdtempSync(join(tmpdir(), 'svc-repos-')),
    });
    // Generous: starting three processes on a busy two-core machine can take a while.
    const started = Date.now() + 80_000;
    await eventually(
      async () => (await f.tdb.db.orm.select().from(workers)).length === WORKERS + 1,
      'the workers (and serve) to register',
      80_000,
    ).catch((error) => {
      throw new Error(
        `${error.message}; alive: ${procs.all().map(alive).join(', ')}; logs: ${procs.all().map(procs.output).join('\n').slice(-2_000)}`,
      );
    });
    await eventually(
      async () => (await healthz()) === 200,
      'serve to answer /healthz',
      Math.max(5_000, started - Date.now()),
    );
  }, 100_000);

  afterAll(async () => {
    await procs.killAll();
    await control?.end().catch(() => {});
    await f?.close();
  });

  it('survives three rounds of every backend terminated mid-load: no crash, no unknown, none twice', async () => {
    const taskIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { task } = await f.engine.createTask({
        workspaceId: f.workspaceId,
        projectId: f.projectId,
        kind: 'diagnostic',
        title: `db ${i}`,
        input: { record: true, sleep_ms: 100 + (i % 5) * 50, progress_every_ms: 50 },
      });
      taskIds.push(task.id);
    }

    // Three "restarts" while the runs execute; /healthz is asked all along and must keep answering.
    let probing = true;
    const probes: number[] = [];
    const prober = (async () => {
      while (probing) {
        probes.push(await healthz(5_000).catch(() => 0));
        await sleep(100);
      }
    })();
    const terminated: number[] = [];
    for (let round = 0; round < 3; round++) {
      await sleep(round === 0 ? 200 : 800);
      terminated.push(await terminateAll());
    }

    const all = await eventually(
      async () => {
        const rows = await f.tdb.db.orm.select().from(runs).where(inArray(runs.taskId, taskIds));
        return rows.every((r) => r.status !== 'pending' && r.status !== 'running') ? rows : null;
      },
      'every run to end',
      45_000,
    ).catch((error) => {
      throw new Error(`${error.message}; processes alive: ${procs.all().map(alive).join(', ')}`, {
        cause: error,
      });
    });
    probing = false;
    await prober;

    const dead = procs
      .all()
      .filter((c) => !alive(c))
      .map((c) => procs.output(c).slice(-2_000));
    expect(dead).toEqual([]);
    expect(terminated.filter((n) => n === 0)).toEqual([]);
    expect(await healthz()).toBe(200);
    // Answered (200 or 503 while the database was away), never a refused or hung connection.
    expect(probes.filter((s) => s === 0)).toEqual([]);

    // Every failure is named; a run the database dropped mid-flight is replaced, so each task completes.
    const failed = all.filter((r) => r.status === 'failed');
    expect(
      failed.filter((r) => !r.error?.code || !isRunFailureCode(r.error.code) || r.error.code === 'unknown'),
    ).toEqual([]);
    const completedPerTask = new Map<string, number>();
    for (const r of all)
      if (r.status === 'completed') completedPerTask.set(r.taskId, (completedPerTask.get(r.taskId) ?? 0) + 1);
    const paused = new Set(
      all.filter((r) => r.error?.code === 'task_auto_paused_repeat_failure').map((r) => r.taskId),
    );
    expect(
      taskIds
        .filter((id) => (completedPerTask.get(id) ?? 0) !== 1 && !paused.has(id))
        .map((id) =>
          all.filter((r) => r.taskId === id).map((r) => `${r.id} ${r.status} ${JSON.stringify(r.error)}`),
        ),
    ).toEqual([]);
    expect([...completedPerTask.values()].filter((n) => n > 1)).toEqual([]);

    // No run executed twice.
    const executed = await f.tdb.db.orm
      .select({ runId: runMessages.runId })
      .from(runMessages)
      .where(and(inArray(runMessages.taskId, taskIds), eq(runMessages.content, 'diagnostic executed')));
    const counts = new Map<string, number>();
    for (const { runId } of executed) counts.set(runId, (counts.get(runId) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);

    // Every process listens again (one LISTEN connection each).
    await eventually(
      async () => {
        const { rows } = await control.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
        );
        return rows[0]?.n === WORKERS + 1;
      },
      'every process to listen again',
      10_000,
    );
  }, 90_000);
});

describe('a worker losing its database connections (PostgreSQL)', () => {
  let f: Fixture;
  /** A connection to the test database that outlives the terminations (it ends the others). */
  let control: pg.Client;
  /** A connection to another database, to close and reopen the test database to connections. */
  let admin: pg.Client;
  let name: string;

  /** The backends listening on the test database (the LISTEN connection's last statement is LISTEN). */
  async function listeners(): Promise<number[]> {
    const { rows } = await control.query(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
    );
    return rows.map((r) => r.pid as number);
  }

  const diagnostic = () =>
    f.engine.createTask({
      workspaceId: f.workspaceId,
      projectId: f.projectId,
      kind: 'diagnostic',
      title: 'listen',
      input: {},
    });

  beforeAll(async () => {
    // Polling every minute: within a test only a notification (or the catch-up) wakes a worker.
    f = await fixture('postgres', { pollMs: 60_000 });
    name = new URL(f.tdb.url ?? '').pathname.slice(1);
    control = new pg.Client({ connectionString: f.tdb.url });
    admin = new pg.Client({ connectionString: ADMIN_URL });
    await Promise.all([control.connect(), admin.connect()]);
  });

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await Promise.all([control?.end().catch(() => {}), admin?.end().catch(() => {})]);
    await f?.close();
  });

  it('gives the pool slot of a connection that died while checked out back, and survives it', async () => {
    // drizzle never releases a client whose BEGIN failed: without this, every restart could
    // leak slots until the pool hangs. A pool of one makes a single leak visible.
    const db = await openDatabase({ databaseUrl: f.tdb.url, poolSize: 1 });
    try {
      const pool = (db.orm as unknown as { $client: pg.Pool }).$client;
      const held = await pool.connect();
      const { rows } = await held.query('SELECT pg_backend_pid() AS pid');
      await control.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      await eventually(async () => pool.totalCount === 0, 'the dead client to leave the pool', 5_000);
      expect(await db.rows(sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
      held.release(); // late, as drizzle's own `finally` would: harmless
      expect(await db.rows(sql`SELECT 2 AS two`)).toEqual([{ two: 2 }]);
    } finally {
      await db.close();
    }
  });

  it('listens again after its backend is terminated: a NOTIFY after the reconnect wakes the worker', async () => {
    const worker = new Worker(f.engine, { concurrency: 2, sweeper: false });
    await worker.start();
    try {
      const [before] = await eventually(
        async () => (await listeners()).length === 1 && listeners(),
        'a listener',
        5_000,
      );
      expect((await control.query(TERMINATE_ALL)).rowCount).toBeGreaterThan(0);
      const after = await eventually(
        async () => {
          const pids = await listeners();
          return pids.length === 1 && pids[0] !== before ? pids : null;
        },
        'the worker to listen again',
        5_000,
      );
      expect(after).toHaveLength(1);
      await sleep(300); // the catch-up after reconnecting is over: only a NOTIFY can wake it now
      const { run } = await diagnostic();
      expect((await settled(f.engine, run.id, 5_000)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
  });

  it('fails a run whose connection died mid-run backend_unavailable, and one replacement completes', async () => {
    const engine = f.engineWith({ pollMs: 60_000 });
    let executions = 0;
    engine.registerHandler('diagnostic', async (ctx) => {
      executions++;
      if (executions === 1) await ctx.db.rows(sql`SELECT pg_sleep(30)`);
      return { executions };
    });
    const worker = new Worker(engine, { concurrency: 1, sweeper: false });
    await worker.start();
    try {
      const { task, run } = await engine.createTask({
        workspaceId: f.workspaceId,
        projectId: f.projectId,
        kind: 'diagnostic',
        title: 'dies',
        input: {},
      });
      await eventually(
        async () =>
          (
            await control.query(
              "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query ILIKE '%pg_sleep%'",
            )
          ).rowCount === 1,
        'the run to sit in its query',
        5_000,
      );
      await control.query(TERMINATE_ALL);
      const failed = await eventually(
        async () => {
          const r = await engine.getRun(run.id);
          return r?.terminalEventCount === 1 ? r : null;
        },
        'the run to end',
        5_000,
      );
      expect(failed.error).toMatchObject({ code: 'backend_unavailable', worker_id: worker.id });
      const list = await eventually(
        async () => {
          const l = (await engine.listRuns(task.id, { limit: 5 })).data;
          return l[0]?.status === 'completed' ? l : null;
        },
        'the replacement to complete',
        5_000,
      );
      expect(list).toHaveLength(2);
      expect(list[0]).toMatchObject({ retryOf: run.id, retryCount: 1, result: { executions: 2 } });
    } finally {
      await worker.stop();
    }
  });

  it('wakes once after reconnecting, for runs that became available while the database was away', async () => {
    const { run } = await diagnostic();
    // Claimable only once the database is closed to connections; nothing notifies about that.
    await f.tdb.db.orm
      .update(runs)
      .set({ availableAt: new Date(Date.now() + 1_500) })
      .where(eq(runs.id, run.id));
    const worker = new Worker(f.engine, { concurrency: 2, sweeper: false });
    await worker.start();
    try {
      await eventually(async () => (await listeners()).length === 1, 'a listener', 5_000);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      try {
        await control.query(TERMINATE_ALL);
        await sleep(2_000);
        const { rows } = await control.query('SELECT status FROM runs WHERE id = $1', [run.id]);
        expect(rows[0]?.status).toBe('pending');
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      }
      expect((await settled(f.engine, run.id, 6_000)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
  });
});
