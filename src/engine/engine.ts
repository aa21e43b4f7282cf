/**
 * The run engine's front door: creates tasks and runs, reads them, cancels them, and projects
 * them for the API. Execution happens in workers (worker.ts); dead runs are ended by the
 * sweeper (sweeper.ts). Everything goes through the `runs` table, so any process with the
 * database can call these methods.
 */
import { and, asc, desc, eq, gt, inArray, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { notFound } from '../core/errors';
import type { TaskKind } from '../core/runs';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { insertEventFrom } from '../storage/object-events';
import { runMessages, runs, tasks } from '../storage/schema';
import { diagnosticHandler } from './diagnostic';
import { commitTerminal, insertPausedRun, RUNS_CHANNEL, recordQueued, type Tx } from './frames';
import { runReceipt, statusBlock, taskRecord } from './projection';
import { settlementContext } from './settle-context';
import type { CreateTaskInput, EngineLimits, RunRow, TaskHandler, TaskHandlers, TaskRow } from './types';

export type MessageRow = typeof runMessages.$inferSelect;

export interface StartRunOptions {
  /** Input for this run; default the task's input. */
  input?: Record<string, unknown>;
  /** Lift an auto-pause (`task_auto_paused_repeat_failure`) and run again. */
  resume?: boolean;
}

export interface PagePosition {
  createdAt: Date;
  id: string;
}

/** A task and its first run, their ids chosen before anything is written (an answer can name them). */
export interface PlannedTask {
  taskId: string;
  runId: string;
  input: CreateTaskInput;
}

export class Engine {
  private readonly handlers = new Map<string, TaskHandler>();

  constructor(
    readonly db: Database,
    readonly limits: EngineLimits,
    handlers: TaskHandlers,
    readonly logger: Logger,
  ) {
    // Built in so tests and benchmarks always have a real kind to drive the engine with.
    this.handlers.set('diagnostic', diagnosticHandler);
    for (const [kind, handler] of Object.entries(handlers)) if (handler) this.handlers.set(kind, handler);
  }

  /** Adds (or replaces) the executor of a task kind; workers claim only kinds they can run. */
  registerHandler(kind: TaskKind, handler: TaskHandler): void {
    this.handlers.set(kind, handler);
  }

  handler(kind: string): TaskHandler | undefined {
    return this.handlers.get(kind);
  }

  /**
   * Lets the kind of a run nobody will finish settle what it promised outside (its `abandoned`
   * hook), e.g. a review's code-host check. Never throws: a failure to settle is logged.
   */
  async settleAbandoned(run: RunRow, error: unknown): Promise<void> {
    const hook = this.handlers.get(run.kind)?.abandoned;
    if (!hook) return;
    try {
      const [task] = await this.db.orm.select().from(tasks).where(eq(tasks.id, run.taskId)).limit(1);
      if (task) await hook(settlementContext(this.db, run, task, this.logger), error);
    } catch (e) {
      this.logger.warn({ err: e, run: run.id }, 'could not settle what the abandoned run promised');
    }
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** Wakes every listening worker. A lost NOTIFY only costs one poll interval. */
  async notifyRuns(payload = 'run'): Promise<void> {
    try {
      await this.db.notify(RUNS_CHANNEL, payload);
    } catch (error) {
      this.logger.warn({ err: error }, 'NOTIFY failed; workers will find the run by polling');
    }
  }

  private waking: Promise<void> | null = null;
  private wakeAgain = false;

  /**
   * Wakes the listening workers after runs were committed without a NOTIFY of their own
   * (`enqueue`). Coalesced: one NOTIFY in flight per process, and one more after it when runs
   * were committed meanwhile, so every call is followed by a NOTIFY sent after it. A NOTIFY in
   * each acknowledgement's own transaction would serialize those commits on PostgreSQL's
   * notification lock, one WAL flush after another (no group commit). Never throws; a lost
   * NOTIFY costs one poll interval.
   */
  wakeWorkers(): void {
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = (async () => {
      try {
        do {
          this.wakeAgain = false;
          await this.notifyRuns();
        } while (this.wakeAgain);
      } finally {
        // In the same turn as the last check of wakeAgain: no call can fall in between.
        this.waking = null;
      }
    })();
  }

  /** Ids for a task and its first run, for `enqueue`. */
  planTask(input: CreateTaskInput): PlannedTask {
    return { taskId: newId('task'), runId: newId('run'), input };
  }

  /**
   * Writes a planned task and its first pending run in one statement (one implicit transaction)
   * and wakes the workers: the cheapest way to enqueue, for acknowledgements. With `guard`, a
   * data-modifying statement returning at most one row (`INSERT … ON CONFLICT DO NOTHING
   * RETURNING …`, e.g. the request's Idempotency-Key record), the task and run are written only
   * when the guard wrote its row, in the same transaction. Returns whether they were written.
   *
   * The wake-up: on PostgreSQL a coalesced NOTIFY after the commit (`wakeWorkers`); with the
   * embedded database (one connection, no commit to serialize) the NOTIFY in the statement
   * itself, delivered at its commit, is cheaper than a statement of its own.
   */
  async enqueue(planned: PlannedTask, guard?: SQL): Promise<boolean> {
    const { taskId, runId, input } = planned;
    const notifyInStatement = this.db.kind === 'pglite';
    const at = input.availableAt?.toISOString();
    // Column lists as in insertTaskAndRun below; every other column takes its default. The run
    // copies what it shares with the task from the inserted row (fewer parameters to send).
    const rows = await this.db.rows<{ run_id: string }>(sql`
      WITH guard AS (${guard ?? sql`SELECT 1`}),
      task AS (
        INSERT INTO tasks (id, workspace_id, project_id, kind, title, input)
        SELECT ${taskId}, ${input.workspaceId}, ${input.projectId}, ${input.kind}, ${input.title},
          ${JSON.stringify(input.input)}::jsonb
        FROM guard
        RETURNING id, workspace_id, project_id, kind, revision, input
      ),
      run AS (
        INSERT INTO runs (id, task_id, workspace_id, project_id, kind, status, task_revision, input${at ? sql`, available_at, queued_at` : sql``})
        SELECT ${runId}, id, workspace_id, project_id, kind, 'pending', revision, input${at ? sql`, ${at}::timestamptz, ${at}::timestamptz` : sql``}
        FROM task
        RETURNING id, task_id, workspace_id, project_id, kind
      ),
      -- The run's 'queued' timeline event, as recordQueued writes it, in the same statement.
      queued AS (${insertEventFrom('run', newId('event'), 'run', 'queued', sql`jsonb_build_object('task_id', task_id, 'kind', kind, 'retry_of', NULL)`)})
      SELECT id AS run_id${notifyInStatement ? sql`, pg_notify(${RUNS_CHANNEL}, 'run') AS woke` : sql``} FROM run`);
    if (rows.length === 0) return false;
    if (!notifyInStatement) this.wakeWorkers();
    return true;
  }

  /** A task and its first pending run, in one transaction that also wakes the workers. */
  async createTask(input: CreateTaskInput): Promise<{ task: TaskRow; run: RunRow }> {
    return this.db.orm.transaction((tx) => this.createTaskIn(tx, input));
  }

  /**
   * A task and its first pending run inside the caller's transaction, so they commit (or roll
   * back) with whatever else it writes. The workers' wake-up is queued in the same transaction:
   * PostgreSQL delivers a NOTIFY at commit, never for a rolled-back run.
   */
  async createTaskIn(tx: Tx, input: CreateTaskInput): Promise<{ task: TaskRow; run: RunRow }> {
    const created = await insertTaskAndRun(tx, input);
    await tx.execute(sql`SELECT pg_notify(${RUNS_CHANNEL}, 'run')`);
    return created;
  }

  /**
   * A new run of an existing task. A task auto-paused after repeated failures gets a run that
   * is failed at once with `task_auto_paused_repeat_failure`, unless `resume` lifts the pause.
   */
  async startRun(taskId: string, opts: StartRunOptions = {}): Promise<RunRow> {
    const run = await this.db.orm.transaction(async (tx) => {
      const [task] = await tx.select().from(tasks).where(eq(tasks.id, taskId)).limit(1).for('update');
      if (!task) throw notFound('task', taskId);
      const base = {
        taskId: task.id,
        workspaceId: task.workspaceId,
        projectId: task.projectId,
        kind: task.kind,
        taskRevision: task.revision,
        input: opts.input ?? task.input,
      };
      if (task.pausedReason === 'task_auto_paused_repeat_failure' && !opts.resume) {
        return insertPausedRun(
          tx,
          base,
          { retryOf: null, retryCount: 0 },
          'The task is paused after repeated failures; no run starts until it is resumed.',
        );
      }
      if (task.pausedReason) {
        await tx
          .update(tasks)
          .set({ pausedReason: null, updatedAt: sql`now()` })
          .where(eq(tasks.id, task.id));
      }
      const [inserted] = await tx
        .insert(runs)
        .values({ id: newId('run'), ...base, status: 'pending' })
        .returning();
      if (!inserted) throw new Error('run insert returned no row');
      await recordQueued(tx, inserted);
      return inserted;
    });
    if (run.status === 'pending') await this.notifyRuns();
    return run;
  }

  private taskWithRunStatement: ReturnType<Engine['prepareTaskWithRun']> | null = null;
  private readonly taskReadCache = new Map<
    string,
    { generation: number; value: { task: TaskRow; run: RunRow | null } }
  >();

  private prepareTaskWithRun() {
    // One statement for the most frequent read (task polling): the task and its latest run.
    const latest = sql`(SELECT r.id FROM runs r WHERE r.task_id = ${tasks.id} ORDER BY r.created_at DESC, r.id DESC LIMIT 1)`;
    return this.db.orm
      .select({ task: tasks, run: runs })
      .from(tasks)
      .leftJoin(runs, eq(runs.id, latest))
      .where(
        and(
          eq(tasks.id, sql.placeholder('taskId')),
          eq(tasks.workspaceId, sql.placeholder('workspaceId')),
          eq(tasks.projectId, sql.placeholder('projectId')),
        ),
      )
      .limit(1)
      .prepare('svc_task_with_latest_run');
  }

  /** The task of this workspace and project with its latest run, in one query; otherwise `not_found`. */
  async getTaskWithLatestRun(
    workspaceId: string,
    projectId: string,
    taskId: string,
  ): Promise<{ task: TaskRow; run: RunRow | null }> {
    // Polling reads this far more often than anything changes; with the embedded database the
    // write generation says exactly when a cached answer is still true.
    const generation = this.db.writeGeneration();
    const key = `${workspaceId}\u0000${projectId}\u0000${taskId}`;
    const cached = generation === null ? undefined : this.taskReadCache.get(key);
    if (cached && cached.generation === generation) return cached.value;
    this.taskWithRunStatement ??= this.prepareTaskWithRun();
    const [row] = await this.taskWithRunStatement.execute({ taskId, workspaceId, projectId });
    if (!row) throw notFound('task', taskId);
    const value = { task: row.task, run: row.run };
    if (generation !== null) {
      if (this.taskReadCache.size >= 10_000) this.taskReadCache.clear();
      this.taskReadCache.set(key, { generation, value });
    }
    return value;
  }

  /** The task, when it belongs to this workspace and project; otherwise `not_found`. */
  async getTask(workspaceId: string, projectId: string | null, taskId: string): Promise<TaskRow> {
    const [task] = await this.db.orm
      .select()
      .from(tasks)
      .where(
        and(
          eq(tasks.id, taskId),
          eq(tasks.workspaceId, workspaceId),
          projectId === null ? isNull(tasks.projectId) : eq(tasks.projectId, projectId),
        ),
      )
      .limit(1);
    if (!task) throw notFound('task', taskId);
    return task;
  }

  async latestRun(taskId: string): Promise<RunRow | null> {
    const [run] = await this.db.orm
      .select()
      .from(runs)
      .where(eq(runs.taskId, taskId))
      .orderBy(desc(runs.createdAt), desc(runs.id))
      .limit(1);
    return run ?? null;
  }

  /** One run; with `taskId`, only if it belongs to that task. */
  async getRun(runId: string, taskId?: string): Promise<RunRow | null> {
    const [run] = await this.db.orm
      .select()
      .from(runs)
      .where(taskId ? and(eq(runs.id, runId), eq(runs.taskId, taskId)) : eq(runs.id, runId))
      .limit(1);
    return run ?? null;
  }

  /** The task's runs, newest first; `after` is the last row of the previous page. */
  async listRuns(
    taskId: string,
    opts: { limit: number; after?: PagePosition | null },
  ): Promise<{ data: RunRow[]; hasMore: boolean }> {
    const after = opts.after;
    const rows = await this.db.orm
      .select()
      .from(runs)
      .where(
        and(
          eq(runs.taskId, taskId),
          after
            ? or(
                lt(runs.createdAt, after.createdAt),
                and(eq(runs.createdAt, after.createdAt), lt(runs.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(runs.createdAt), desc(runs.id))
      .limit(opts.limit + 1);
    return { data: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit };
  }

  /**
   * Cancels the task's active runs. Pending runs end at once; running runs are marked canceled
   * in the database (terminal frame included) and their worker aborts the handler when the
   * NOTIFY or its next heartbeat tells it. Returns the latest run afterwards.
   */
  async cancel(taskId: string, reason = 'canceled by request'): Promise<RunRow | null> {
    const canceled = await this.db.orm.transaction(async (tx) => {
      const active = await tx
        .select({ id: runs.id })
        .from(runs)
        .where(and(eq(runs.taskId, taskId), inArray(runs.status, ['pending', 'running'])))
        .for('update');
      const ended: string[] = [];
      for (const { id } of active) {
        const row = await commitTerminal(
          tx,
          id,
          { status: 'canceled', reason },
          { from: ['pending', 'running'] },
        );
        if (row) ended.push(id);
      }
      return ended;
    });
    for (const id of canceled) await this.notifyRuns(`cancel:${id}`);
    return this.latestRun(taskId);
  }

  /** The task's transcript in order; optionally one run's, paged by sequence number. */
  async messages(
    taskId: string,
    opts: { runId?: string | undefined; limit: number; afterSeq?: number | null },
  ): Promise<{ data: MessageRow[]; hasMore: boolean }> {
    const rows = await this.db.orm
      .select()
      .from(runMessages)
      .where(
        and(
          eq(runMessages.taskId, taskId),
          opts.runId ? eq(runMessages.runId, opts.runId) : undefined,
          opts.afterSeq != null ? gt(runMessages.seq, opts.afterSeq) : undefined,
        ),
      )
      .orderBy(asc(runMessages.seq))
      .limit(opts.limit + 1);
    return { data: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit };
  }

  /** Pending runs that a worker would claim before this one. */
  async queueAhead(run: RunRow): Promise<number | null> {
    if (run.status !== 'pending') return null;
    const [row] = await this.db.orm
      .select({ n: sql<string | number>`count(*)` })
      .from(runs)
      .where(
        and(
          eq(runs.status, 'pending'),
          or(
            lt(runs.availableAt, run.availableAt),
            and(eq(runs.availableAt, run.availableAt), lt(runs.createdAt, run.createdAt)),
          ),
        ),
      );
    return Number(row?.n ?? 0);
  }

  receipt(run: RunRow) {
    return runReceipt(run);
  }

  taskRecord(task: TaskRow, run: RunRow | null) {
    return taskRecord(task, run);
  }

  async statusBlock(task: TaskRow, run: RunRow, opts: { includeCost?: boolean } = {}) {
    return statusBlock(run, task, {
      includeCost: opts.includeCost ?? false,
      queueAhead: await this.queueAhead(run),
      engineLimits: this.limits,
    });
  }
}

async function insertTaskAndRun(tx: Tx, input: CreateTaskInput): Promise<{ task: TaskRow; run: RunRow }> {
  const [task] = await tx
    .insert(tasks)
    .values({
      id: newId('task'),
      workspaceId: input.workspaceId,
      projectId: input.projectId,
      kind: input.kind,
      title: input.title,
      input: input.input,
    })
    .returning();
  if (!task) throw new Error('task insert returned no row');
  const [run] = await tx
    .insert(runs)
    .values({
      id: newId('run'),
      taskId: task.id,
      workspaceId: task.workspaceId,
      projectId: task.projectId,
      kind: task.kind,
      status: 'pending',
      taskRevision: task.revision,
      input: task.input,
      ...(input.availableAt ? { availableAt: input.availableAt, queuedAt: input.availableAt } : {}),
    })
    .returning();
  if (!run) throw new Error('run insert returned no row');
  await recordQueued(tx, run);
  return { task, run };
}
