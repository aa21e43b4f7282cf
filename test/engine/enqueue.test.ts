/**
 * `Engine.enqueue`, the acknowledgements' one-statement write: the task and its run as
 * `createTask` writes them, nothing at all when its guard writes nothing, and workers woken
 * without polling (the NOTIFY in the statement on PGlite, a coalesced one after the commit on
 * PostgreSQL).
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { runs, tasks } from '../../src/storage/schema';
import { DATABASE_KINDS } from '../helpers/db';
import { type Fixture, fixture, settled } from './helpers';

describe.each(DATABASE_KINDS)('enqueue on %s', (kind) => {
  let f: Fixture;

  beforeAll(async () => {
    f = await fixture(kind);
  });
  afterAll(() => f.close());

  const plan = (input: Record<string, unknown> = { sleep_ms: 1 }) =>
    f.engine.planTask({
      workspaceId: f.workspaceId,
      projectId: f.projectId,
      kind: 'diagnostic',
      title: 'q',
      input,
    });

  it('writes the task and its pending run as createTask does, under the ids it planned', async () => {
    const planned = plan({ note: "it's \\ quoted", list: [1, 2] });
    expect(await f.engine.enqueue(planned)).toBe(true);
    const [task] = await f.tdb.db.orm.select().from(tasks).where(eq(tasks.id, planned.taskId));
    const [run] = await f.tdb.db.orm.select().from(runs).where(eq(runs.id, planned.runId));
    expect(task).toMatchObject({ kind: 'diagnostic', title: 'q', revision: 1, projectId: f.projectId });
    expect(task?.input).toEqual({ note: "it's \\ quoted", list: [1, 2] });
    expect(run).toMatchObject({
      taskId: planned.taskId,
      status: 'pending',
      taskRevision: 1,
      input: task?.input,
      retryOf: null,
    });
    expect(run?.availableAt.getTime()).toBe(run?.queuedAt.getTime());
  });

  it('writes nothing when its guard writes nothing', async () => {
    const planned = plan();
    expect(await f.engine.enqueue(planned, sql`SELECT 1 WHERE false`)).toBe(false);
    expect(await f.tdb.db.orm.select().from(tasks).where(eq(tasks.id, planned.taskId))).toEqual([]);
    expect(await f.tdb.db.orm.select().from(runs).where(eq(runs.id, planned.runId))).toEqual([]);
  });

  it('wakes a listening worker without its poll', async () => {
    // The poll is a minute away: only the NOTIFY can start the run in time.
    const engine = f.engineWith({ pollMs: 60_000 });
    const worker = new Worker(engine, { concurrency: 1, sweeper: false });
    await worker.start();
    try {
      await new Promise((r) => setTimeout(r, 200));
      const planned = plan();
      await engine.enqueue(planned);
      const done = await settled(engine, planned.runId, 10_000);
      expect(done.status).toBe('completed');
    } finally {
      await worker.drain(0);
    }
  });

  it('coalesces wake-ups: one NOTIFY in flight, and one more for the calls made meanwhile', async () => {
    const engine = f.engineWith({});
    let sent = 0;
    let release: () => void = () => {};
    engine.notifyRuns = async () => {
      sent++;
      await new Promise<void>((r) => {
        release = r;
      });
    };
    for (let i = 0; i < 10; i++) engine.wakeWorkers();
    expect(sent).toBe(1);
    release();
    await new Promise((r) => setTimeout(r, 10));
    // The nine calls made while the first was in flight: one NOTIFY after it.
    expect(sent).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect(sent).toBe(2);
    engine.wakeWorkers();
    expect(sent).toBe(3);
    release();
  });
});
