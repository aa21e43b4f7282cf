/**
 * The run engine through real databases (PGlite and PostgreSQL) and the real `diagnostic`
 * kind: every failure class the engine itself can produce comes out of a real path.
 */
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FAILURE_REMEDY } from '../../src/core/failures';
import type { Engine } from '../../src/engine/engine';
import { Sweeper } from '../../src/engine/sweeper';
import { Worker } from '../../src/engine/worker';
import { runMessages, runs, tasks, workers as workerRows } from '../../src/storage/schema';
import { DATABASE_KINDS } from '../helpers/db';
import { type Fixture, fixture, settled, silent, sleep, waitFor } from './helpers';

describe.each(DATABASE_KINDS)('engine on %s', (kind) => {
  let f: Fixture;
  const workers: Worker[] = [];

  beforeAll(async () => {
    f = await fixture(kind);
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.drain(0);
  });
  afterAll(async () => {
    await f.close();
  });

  async function worker(engine: Engine = f.engine, concurrency = 4, sweeper = false) {
    const w = new Worker(engine, { concurrency, sweeper });
    workers.push(w);
    await w.start();
    return w;
  }

  const diagnostic = (
    input: Record<string, unknown>,
    projectId: string | null = f.projectId,
    engine = f.engine,
  ) => engine.createTask({ workspaceId: f.workspaceId, projectId, kind: 'diagnostic', title: 'diag', input });

  async function transcript(taskId: string) {
    return (await f.engine.messages(taskId, { limit: 200 })).data;
  }

  it('completes a run with a committed terminal frame and its note', async () => {
    await worker();
    const { task, run } = await diagnostic({ sleep_ms: 50 });
    const done = await settled(f.engine, run.id);
    expect(done.status).toBe('completed');
    expect(done.terminalEventCount).toBe(1);
    expect(done.finishedAt).not.toBeNull();
    expect(done.startedAt).not.toBeNull();
    expect(done.result).toMatchObject({ ok: true, slept_ms: 50 });
    expect(done.costUsd).toBeNull();
    const msgs = await transcript(task.id);
    expect(msgs.at(-1)).toMatchObject({ role: 'note', content: 'Run completed.' });
    expect(msgs.some((m) => m.role === 'assistant')).toBe(true);
    const block = await f.engine.statusBlock(task, done, { includeCost: true });
    expect(block).toMatchObject({
      status: 'completed',
      terminal_event_count: 1,
      error_json: null,
      queue_ahead: null,
    });
    expect(block.row_clock.durations_ms.run_ms).not.toBeNull();
    expect(block.runner_clock.finished_at).not.toBeNull();
    expect(block.usage_line_items).toEqual([]);
  });

  it('fails `unknown` keeping the message of a plain throw, and the note names code and remedy', async () => {
    await worker();
    const { task, run } = await diagnostic({ throw: 'disk on fire' });
    const done = await settled(f.engine, run.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'unknown', message: 'disk on fire', run_id: run.id });
    const note = (await transcript(task.id)).at(-1);
    expect(note?.role).toBe('note');
    expect(note?.content).toContain('unknown');
    expect(note?.content).toContain('disk on fire');
    expect(note?.content).toContain('Remedy:');
    const block = await f.engine.statusBlock(task, done);
    expect(block.warnings).toEqual(['disk on fire']);
  });

  it('fails with the RunFailure code a handler throws', async () => {
    await worker();
    const { run } = await diagnostic({ fail_with: 'provider_rate_limited' });
    expect((await settled(f.engine, run.id)).error?.code).toBe('provider_rate_limited');
  });

  it('ends a run that makes no progress `run_liveness_timeout`, even when the handler ignores the signal', async () => {
    const engine = f.engineWith({ livenessMs: 300 });
    await worker(engine);
    const { run } = await diagnostic({ hang: true }, f.projectId, engine);
    const done = await settled(f.engine, run.id);
    expect(done.error?.code).toBe('run_liveness_timeout');
  });

  it('ends a run past its wall clock `backend_wall_clock_timeout`', async () => {
    const engine = f.engineWith({ wallClockMs: 300 });
    await worker(engine);
    const { task, run } = await diagnostic({ sleep_ms: 10_000, progress_every_ms: 20 }, f.projectId, engine);
    const done = await settled(f.engine, run.id);
    expect(done.error?.code).toBe('backend_wall_clock_timeout');
    expect((await f.engine.statusBlock(task, done)).timeouts.fired).toBe('backend_wall_clock_timeout');
  });

  it('fails a pending run nobody picks up `queue_pickup_timeout`', async () => {
    const engine = f.engineWith({ pickupTimeoutMs: 150 });
    const { task, run } = await diagnostic({}, f.projectId, engine);
    const pending = await f.engine.statusBlock(task, run);
    expect(pending.queue_ahead).toBeTypeOf('number');
    expect(pending.sweep?.reason).toBe('waiting_for_worker');
    await sleep(250);
    await new Sweeper(f.tdb.db, engine.limits, silent).sweepOnce();
    const done = await settled(f.engine, run.id);
    expect(done.error?.code).toBe('queue_pickup_timeout');
  });

  describe('brakes', () => {
    const braked = async (settings: unknown) => {
      const projectId = await f.project(settings);
      await worker();
      const { run } = await diagnostic({ record: true }, projectId);
      const done = await settled(f.engine, run.id);
      const executed = await f.tdb.db.orm.select().from(runMessages).where(eq(runMessages.runId, run.id));
      // A braked run never reaches its handler.
      expect(executed.filter((m) => m.content === 'diagnostic executed')).toHaveLength(0);
      expect(done.startedAt).toBeNull();
      return done;
    };

    it('project_paused when the project is paused', async () => {
      expect((await braked({ 'svc.brakes.paused': true })).error?.code).toBe('project_paused');
    });

    it('project_paused outside the approval window', async () => {
      const window = { start: '2020-01-01T00:00:00Z', end: '2020-01-02T00:00:00Z' };
      expect((await braked({ 'svc.brakes.approval_window': window })).error?.code).toBe('project_paused');
    });

    it('spend_cap_reached when known spend of 30 days reaches the cap', async () => {
      const projectId = await f.project({ 'svc.brakes.spend_cap_usd': 1 });
      // A finished earlier run with a known cost of $1.50.
      const { run: earlier } = await diagnostic({}, projectId);
      await f.tdb.db.orm
        .update(runs)
        .set({ status: 'completed', costUsd: 1.5 })
        .where(eq(runs.id, earlier.id));
      await worker();
      const { run } = await diagnostic({}, projectId);
      const done = await settled(f.engine, run.id);
      expect(done.error).toMatchObject({ code: 'spend_cap_reached', spent_usd: 1.5 });
    });

    it('budget_exceeded when the run budget of 24 hours is spent', async () => {
      const projectId = await f.project({ 'svc.brakes.run_budget': 1 });
      await worker();
      const first = await diagnostic({}, projectId);
      expect((await settled(f.engine, first.run.id)).status).toBe('completed');
      const second = await diagnostic({}, projectId);
      expect((await settled(f.engine, second.run.id)).error?.code).toBe('budget_exceeded');
    });

    it('project_run_mode_unreadable when a brake setting does not parse or settings are not an object', async () => {
      expect((await braked({ 'svc.brakes.paused': 'yes' })).error?.code).toBe('project_run_mode_unreadable');
      expect((await braked(['not', 'an', 'object'])).error?.code).toBe('project_run_mode_unreadable');
    });
  });

  it('cancels a pending run directly; no worker runs it afterwards', async () => {
    const { task, run } = await diagnostic({ record: true });
    const after = await f.engine.cancel(task.id);
    expect(after).toMatchObject({ id: run.id, status: 'canceled', terminalEventCount: 1 });
    await worker();
    await sleep(300);
    expect((await f.engine.getRun(run.id))?.status).toBe('canceled');
    const msgs = await transcript(task.id);
    expect(msgs.map((m) => m.content)).toEqual(['Run canceled: canceled by request']);
  });

  it('cancels a running run: the worker aborts the handler and commits nothing over it', async () => {
    const w = await worker();
    const { task, run } = await diagnostic({ sleep_ms: 20_000 });
    await waitFor(async () => (await f.engine.getRun(run.id))?.startedAt, 'the run to start');
    await f.engine.cancel(task.id);
    await waitFor(async () => w.activeRunIds.length === 0, 'the worker to drop the run');
    const done = await f.engine.getRun(run.id);
    expect(done).toMatchObject({ status: 'canceled', terminalEventCount: 1 });
    expect((await transcript(task.id)).filter((m) => m.role === 'note')).toHaveLength(1);
  });

  it('a worker dead mid-run: the sweeper fails the run `run_invocation_died` and exactly one replacement completes', async () => {
    // A worker that starts the run and then stops heartbeating (its process hung or was cut off);
    // its handler goes on, but the lease runs out.
    const dying = new Worker(f.engine, { sweeper: false });
    await dying.start();
    const { task, run } = await diagnostic({ sleep_ms: 2500, progress_every_ms: 50 });
    await waitFor(async () => (await f.engine.getRun(run.id))?.startedAt, 'the run to start');
    await dying.stop();
    await sleep(f.engine.limits.leaseMs + 100);
    // Two sweepers at once: SKIP LOCKED keeps them from handling the run twice.
    const sweepers = [0, 1].map(() => new Sweeper(f.tdb.db, f.engine.limits, silent));
    const results = await Promise.all(sweepers.map((s) => s.sweepOnce()));
    expect(results.reduce((n, r) => n + r.died, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.neverStarted, 0)).toBe(0);
    const died = await f.engine.getRun(run.id);
    expect(died?.error?.code).toBe('run_invocation_died');
    expect(died?.error?.message).toContain('a replacement run was started');
    await worker();
    const all = await waitFor(async () => {
      const list = (await f.engine.listRuns(task.id, { limit: 10 })).data;
      return list.length === 2 && list[0]?.status === 'completed' ? list : null;
    }, 'the replacement to complete');
    expect(all[0]).toMatchObject({ retryOf: run.id, retryCount: 1, status: 'completed' });
    // The first run stays as the sweeper ended it: its handler's late end committed nothing.
    expect((await f.engine.getRun(run.id))?.error?.code).toBe('run_invocation_died');
  });

  it('a worker dead between its claim and the start: `run_never_started`, and one replacement completes', async () => {
    // A worker that claims and then dies: it never starts the run, heartbeats nor finishes.
    const dead = new Worker(f.engine, { sweeper: false });
    const { task, run } = await diagnostic({ sleep_ms: 10 });
    const claimed = await dead.claim();
    expect(claimed?.id).toBe(run.id);
    await sleep(f.engine.limits.leaseMs + 100);
    const result = await new Sweeper(f.tdb.db, f.engine.limits, silent).sweepOnce();
    expect(result).toMatchObject({ died: 1, neverStarted: 1, replaced: 1 });
    const ended = await f.engine.getRun(run.id);
    expect(ended).toMatchObject({ status: 'failed', startedAt: null, terminalEventCount: 1 });
    expect(ended?.error).toMatchObject({ code: 'run_never_started', worker_id: dead.id });
    const note = (await transcript(task.id)).at(-1);
    expect(note?.content).toContain('Run failed with run_never_started');
    expect(note?.content).toContain(RUN_FAILURE_REMEDY.run_never_started);
    await worker();
    const all = await waitFor(async () => {
      const list = (await f.engine.listRuns(task.id, { limit: 10 })).data;
      return list.length === 2 && list[0]?.status === 'completed' ? list : null;
    }, 'the replacement to complete');
    expect(all[0]).toMatchObject({ retryOf: run.id, retryCount: 1, status: 'completed' });
  });

  it('a worker stuck between its claim and the start, lease renewed: `run_never_started` past the liveness limit', async () => {
    // The lease outlives the test, as a live worker's heartbeat would keep it; only the start
    // deadline (the liveness limit, since no watchdog is armed before the start) can end the run.
    const engine = f.engineWith({ livenessMs: 300, leaseMs: 60_000 });
    const stuck = new Worker(engine, { sweeper: false });
    const { task, run } = await diagnostic({}, f.projectId, engine);
    expect((await stuck.claim())?.id).toBe(run.id);
    const sweeper = new Sweeper(f.tdb.db, engine.limits, silent);
    expect(await sweeper.sweepOnce()).toMatchObject({ died: 0, neverStarted: 0 });
    await sleep(400);
    expect(await sweeper.sweepOnce()).toMatchObject({ died: 0, neverStarted: 1, replaced: 1 });
    const ended = await engine.getRun(run.id);
    expect(ended?.error).toMatchObject({
      code: 'run_never_started',
      worker_id: stuck.id,
      start_deadline_ms: 300,
    });
    const note = (await transcript(task.id)).at(-1);
    expect(note?.data).toMatchObject({
      code: 'run_never_started',
      remedy: RUN_FAILURE_REMEDY.run_never_started,
    });
    const [replacement] = (await engine.listRuns(task.id, { limit: 1 })).data;
    expect(replacement).toMatchObject({ status: 'pending', retryOf: run.id });
    await engine.cancel(task.id);
  });

  it('forgets workers silent for over a week, and keeps the recent ones', async () => {
    const day = 24 * 60 * 60 * 1000;
    await f.tdb.db.orm.insert(workerRows).values([
      { id: 'w-long-gone', hostname: 'old', pid: 1, heartbeatAt: new Date(Date.now() - 8 * day) },
      { id: 'w-yesterday', hostname: 'old', pid: 2, heartbeatAt: new Date(Date.now() - day) },
    ]);
    const result = await new Sweeper(f.tdb.db, f.engine.limits, silent).sweepOnce();
    expect(result.workersForgotten).toBe(1);
    const left = (await f.tdb.db.orm.select({ id: workerRows.id }).from(workerRows)).map((w) => w.id);
    expect(left).toContain('w-yesterday');
    expect(left).not.toContain('w-long-gone');
  });

  it('pauses a task whose chain keeps dying, and a new run of it fails by name until resumed', async () => {
    const engine = f.engineWith({ maxReplacements: 1 });
    const dead = new Worker(engine, { sweeper: false });
    const sweeper = new Sweeper(f.tdb.db, engine.limits, silent);
    const { task } = await diagnostic({}, f.projectId, engine);
    for (let i = 0; i < 2; i++) {
      await waitFor(() => dead.claim(), 'a claim');
      await sleep(engine.limits.leaseMs + 100);
      await sweeper.sweepOnce();
    }
    const list = (await engine.listRuns(task.id, { limit: 10 })).data;
    // Each claim died before its start.
    expect(list.map((r) => r.error?.code)).toEqual([
      'task_auto_paused_repeat_failure',
      'run_never_started',
      'run_never_started',
    ]);
    expect(list[1]?.error?.message).toContain('the task was paused after repeated failures');
    expect(list[0]).toMatchObject({ retryOf: list[1]?.id, retryCount: 2, terminalEventCount: 1 });
    const [paused] = await f.tdb.db.orm.select().from(tasks).where(eq(tasks.id, task.id));
    if (!paused) throw new Error('task vanished');
    expect(paused.pausedReason).toBe('task_auto_paused_repeat_failure');
    const record = engine.taskRecord(paused, await engine.latestRun(task.id));
    expect(record.run?.error?.code).toBe('task_auto_paused_repeat_failure');

    const again = await engine.startRun(task.id);
    expect(again).toMatchObject({ status: 'failed', terminalEventCount: 1 });
    expect(again.error?.code).toBe('task_auto_paused_repeat_failure');
    const resumed = await engine.startRun(task.id, { resume: true });
    expect(resumed.status).toBe('pending');
    await engine.cancel(task.id);
  });

  it('drain: a run outlasting the grace ends `run_evicted_by_deploy` with one replacement', async () => {
    const w = new Worker(f.engine, { sweeper: false });
    await w.start();
    const { task, run } = await diagnostic({ sleep_ms: 400 });
    await waitFor(async () => (await f.engine.getRun(run.id))?.startedAt, 'the run to start');
    const drained = await w.drain(50);
    expect(drained.evicted).toBe(1);
    const evicted = await f.engine.getRun(run.id);
    expect(evicted?.error?.code).toBe('run_evicted_by_deploy');
    await worker();
    const list = await waitFor(async () => {
      const l = (await f.engine.listRuns(task.id, { limit: 10 })).data;
      return l.length === 2 && l[0]?.status === 'completed' ? l : null;
    }, 'the replacement to complete');
    expect(list[0]).toMatchObject({ retryOf: run.id, retryCount: 1 });
  });

  it('drain: a run finishing within the grace completes normally, no replacement', async () => {
    const w = new Worker(f.engine, { sweeper: false });
    await w.start();
    const { task, run } = await diagnostic({ sleep_ms: 200 });
    await waitFor(async () => (await f.engine.getRun(run.id))?.startedAt, 'the run to start');
    expect(await w.drain(5_000)).toEqual({ finished: 1, evicted: 0 });
    expect((await f.engine.getRun(run.id))?.status).toBe('completed');
    expect((await f.engine.listRuns(task.id, { limit: 10 })).data).toHaveLength(1);
  });

  it('claims each run exactly once under concurrent claimers', async () => {
    const n = 60;
    const created = await Promise.all(Array.from({ length: n }, () => diagnostic({ record: true })));
    const claimers = Array.from({ length: 6 }, () => new Worker(f.engine, { sweeper: false }));
    const claimed: string[] = [];
    await Promise.all(
      claimers.map(async (c) => {
        for (;;) {
          const run = await c.claim();
          if (!run) return;
          claimed.push(run.id);
        }
      }),
    );
    const mine = new Set(created.map((c) => c.run.id));
    const ours = claimed.filter((id) => mine.has(id));
    expect(ours).toHaveLength(n);
    expect(new Set(ours).size).toBe(n);
    for (const { task } of created) await f.engine.cancel(task.id);
  });

  it('several workers execute a batch with each run executed exactly once', async () => {
    for (let i = 0; i < 3; i++) await worker(f.engine, 3);
    const n = 40;
    const created = await Promise.all(
      Array.from({ length: n }, (_, i) => diagnostic({ record: true, sleep_ms: i % 4 === 0 ? 30 : 0 })),
    );
    for (const { run } of created) expect((await settled(f.engine, run.id)).status).toBe('completed');
    const executed = await f.tdb.db.orm
      .select({ runId: runMessages.runId })
      .from(runMessages)
      .where(eq(runMessages.content, 'diagnostic executed'));
    const counts = new Map<string, number>();
    for (const { runId } of executed) counts.set(runId, (counts.get(runId) ?? 0) + 1);
    for (const { run } of created) expect(counts.get(run.id)).toBe(1);
  });
});
