/**
 * Real `svc worker` processes on one PostgreSQL database: each run executes exactly once across
 * processes, a SIGKILLed worker's run ends `run_invocation_died` with exactly one replacement,
 * and SIGTERM drains (clean finish within the grace, `run_evicted_by_deploy` past it).
 */
import type { ChildProcess } from 'node:child_process';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../src/engine/types';
import { runMessages, runs, workers } from '../../src/storage/schema';
import { svcProcesses } from '../helpers/svc-processes';
import { type Fixture, fixture, settled, waitFor } from './helpers';

const WORKERS = 4;

describe('svc worker processes (PostgreSQL)', () => {
  let f: Fixture;
  const processes = svcProcesses();

  function startWorker(): ChildProcess {
    return processes.start(['worker'], {
      DATABASE_URL: f.tdb.url as string,
      LOG_LEVEL: 'warn',
      SVC_LEASE_MS: '1000',
      SVC_HEARTBEAT_MS: '200',
      SVC_POLL_MS: '200',
      SVC_SHUTDOWN_GRACE_MS: '1500',
      SVC_WORKER_CONCURRENCY: '4',
    });
  }

  /** Resolves with the exit code once the process has exited. */
  const exited = async (child: ChildProcess) => {
    await processes.exited(child);
    return child.exitCode;
  };

  /** The live child process holding this run's lease. */
  async function holderOf(runId: string): Promise<ChildProcess> {
    const run = await waitFor(async () => {
      const r = await f.engine.getRun(runId);
      return r?.startedAt && r.leaseOwner ? r : null;
    }, `run ${runId} to start`);
    const [w] = await f.tdb.db.orm
      .select()
      .from(workers)
      .where(eq(workers.id, run.leaseOwner ?? ''));
    const child = processes.all().find((c) => c.pid === w?.pid);
    if (!child) throw new Error(`run ${runId} is held by ${run.leaseOwner}, not one of our processes`);
    return child;
  }

  async function runsOf(taskId: string): Promise<RunRow[]> {
    return (await f.engine.listRuns(taskId, { limit: 20 })).data;
  }

  const diagnostic = (input: Record<string, unknown>) =>
    f.engine.createTask({
      workspaceId: f.workspaceId,
      projectId: f.projectId,
      kind: 'diagnostic',
      title: 'p',
      input,
    });

  beforeAll(async () => {
    f = await fixture('postgres');
    for (let i = 0; i < WORKERS; i++) startWorker();
    await waitFor(
      async () => {
        const rows = await f.tdb.db.orm.select().from(workers);
        return rows.length === WORKERS;
      },
      'the workers to register',
      30_000,
    );
  }, 60_000);

  afterAll(async () => {
    await processes.killAll();
    await f?.close();
  });

  it('executes a few hundred runs across processes, each exactly once', async () => {
    const n = 300;
    const created = [];
    for (let i = 0; i < n; i++)
      created.push(await diagnostic({ record: true, sleep_ms: i % 10 === 0 ? 20 : 0 }));
    const ids = created.map((c) => c.run.id);
    await waitFor(
      async () => {
        const done = await f.tdb.db.orm
          .select({ id: runs.id, status: runs.status })
          .from(runs)
          .where(inArray(runs.id, ids));
        return done.every((r) => r.status === 'completed');
      },
      'all runs to complete',
      60_000,
    );
    const executed = await f.tdb.db.orm
      .select({ runId: runMessages.runId })
      .from(runMessages)
      .where(and(inArray(runMessages.runId, ids), eq(runMessages.content, 'diagnostic executed')));
    const counts = new Map<string, number>();
    for (const { runId } of executed) counts.set(runId, (counts.get(runId) ?? 0) + 1);
    expect(ids.filter((id) => counts.get(id) !== 1)).toEqual([]);
    const owners = await f.tdb.db.orm
      .selectDistinct({ owner: runs.leaseOwner })
      .from(runs)
      .where(inArray(runs.id, ids));
    expect(owners.length).toBeGreaterThan(1);
  }, 90_000);

  it('SIGKILL mid-run: the run ends run_invocation_died and exactly one replacement completes', async () => {
    const { task, run } = await diagnostic({ record: true, sleep_ms: 1_500 });
    const holder = await holderOf(run.id);
    holder.kill('SIGKILL');
    await exited(holder);
    const died = await settled(f.engine, run.id, 20_000);
    expect(died.error?.code).toBe('run_invocation_died');
    const list = await waitFor(
      async () => {
        const l = await runsOf(task.id);
        return l[0]?.status === 'completed' ? l : null;
      },
      'the replacement to complete',
      20_000,
    );
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ retryOf: run.id, retryCount: 1, status: 'completed' });
  }, 60_000);

  it('SIGTERM past the grace: run_evicted_by_deploy, one replacement completes, exit 0', async () => {
    const { task, run } = await diagnostic({ sleep_ms: 4_000 });
    const holder = await holderOf(run.id);
    holder.kill('SIGTERM');
    expect(await exited(holder)).toBe(0);
    const evicted = await f.engine.getRun(run.id);
    expect(evicted?.error?.code).toBe('run_evicted_by_deploy');
    const list = await waitFor(
      async () => {
        const l = await runsOf(task.id);
        return l[0]?.status === 'completed' ? l : null;
      },
      'the replacement to complete',
      20_000,
    );
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ retryOf: run.id, retryCount: 1 });
  }, 60_000);

  it('SIGTERM within the grace: the run finishes cleanly, no replacement, exit 0', async () => {
    const { task, run } = await diagnostic({ sleep_ms: 400 });
    const holder = await holderOf(run.id);
    holder.kill('SIGTERM');
    expect(await exited(holder)).toBe(0);
    expect((await f.engine.getRun(run.id))?.status).toBe('completed');
    expect(await runsOf(task.id)).toHaveLength(1);
  }, 60_000);
});
