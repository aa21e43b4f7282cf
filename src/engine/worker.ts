/**
 * A worker: claims pending runs from the `runs` table, holds a lease on each by heartbeat,
 * executes the task kind's handler and commits the terminal frame. Any number of workers on any
 * number of machines share one database; the claim statement and the lease guard on every
 * write are what keep a run executed by one worker at a time.
 */
import { hostname } from 'node:os';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { RunFailure } from '../core/failures';
import { messageOf } from '../storage/bound-values';
import { isConnectionLost } from '../storage/database';
import { newId } from '../storage/ids';
import { insertEventFrom } from '../storage/object-events';
import { runs, tasks, workers } from '../storage/schema';
import { checkBrakes } from './brakes';
import type { Engine } from './engine';
import { type AbortCause, RunExecution } from './execution';
import { commitTerminal, millis, RUNS_CHANNEL, replaceOrPause, type TerminalFrame } from './frames';
import { Sweeper } from './sweeper';
import type { RunRow, TaskHandler, TaskRow } from './types';

export interface WorkerOptions {
  /** Runs executed at once; default 4. */
  concurrency?: number;
  /** Worker id (`wrk_…`); generated when absent. */
  id?: string;
  /** Run the sweeper in this worker too (default true): every worker sweeps, SKIP LOCKED keeps them apart. */
  sweeper?: boolean;
}

interface Active {
  exec: RunExecution;
  done: Promise<void>;
}

type Outcome = { ok: Record<string, unknown> } | { error: unknown } | { aborted: AbortCause };

export class Worker {
  readonly id: string;
  private readonly concurrency: number;
  private readonly active = new Map<string, Active>();
  private readonly logger: Logger;
  private readonly sweeper: Sweeper | null;
  private draining = false;
  private started = false;
  private filling = false;
  private refill = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly engine: Engine,
    options: WorkerOptions = {},
  ) {
    this.id = options.id ?? newId('worker');
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.logger = engine.logger.child({ worker: this.id });
    this.sweeper =
      options.sweeper === false
        ? null
        : new Sweeper(engine.db, engine.limits, this.logger, (run, error) =>
            engine.settleAbandoned(run, error),
          );
  }

  private get db() {
    return this.engine.db;
  }

  private get limits() {
    return this.engine.limits;
  }

  /** Runs currently held by this worker. */
  get activeRunIds(): string[] {
    return [...this.active.keys()];
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.db.orm.insert(workers).values({ id: this.id, hostname: hostname(), pid: process.pid });
    this.unlisten = await this.db.listen(RUNS_CHANNEL, (payload) => this.onNotify(payload), {
      onLost: (error) => this.logger.warn({ err: error }, 'LISTEN connection lost; reconnecting'),
      // Notifications sent while it was away are gone: look for runs (and cancels) once now.
      onReconnect: () => {
        this.logger.info('LISTEN connection back; catching up');
        void this.fill();
        void this.heartbeat();
      },
    });
    // NOTIFY can be lost (while the listener reconnects); the poll makes sure nothing waits forever.
    this.pollTimer = setInterval(() => void this.fill(), this.limits.pollMs);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.limits.heartbeatMs);
    this.sweeper?.start();
    this.logger.info({ concurrency: this.concurrency, db: this.db.label }, 'worker started');
    void this.fill();
  }

  private onNotify(payload: string): void {
    if (payload.startsWith('cancel:')) {
      const runId = payload.slice('cancel:'.length);
      this.active.get(runId)?.exec.abort({ kind: 'lost', reason: 'the run was canceled' });
      return;
    }
    void this.fill();
  }

  /** Claims runs until the worker is full or the queue is empty. Re-entrant calls coalesce. */
  private async fill(): Promise<void> {
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = true;
    try {
      do {
        this.refill = false;
        while (!this.draining && this.started && this.active.size < this.concurrency) {
          // Not background work: a background statement may wait, and a claim waiting past a
          // stop would take a run after the worker began draining.
          const run = await this.claim();
          if (!run) break;
          this.launch(run);
        }
      } while (this.refill && !this.draining);
    } catch (error) {
      this.logger.warn({ err: error }, 'claiming runs failed; the poll retries');
    } finally {
      this.filling = false;
    }
  }

  /**
   * The claim: one statement picks the oldest available pending run nobody else has locked,
   * makes it ours and appends its `claimed` timeline event. The outer `status = 'pending'` is
   * re-checked after the row lock, so a run canceled in between is never claimed; a poll that
   * claims nothing writes nothing. One statement rather than a transaction: a claim is one round
   * trip, which the drain rate of short runs depends on.
   */
  async claim(): Promise<RunRow | null> {
    const kinds = this.engine.kinds();
    if (kinds.length === 0) return null;
    const l = this.limits;
    const orm = this.db.orm;
    const claimed = orm.$with('claimed').as(
      orm
        .update(runs)
        .set({
          status: 'running',
          leaseOwner: this.id,
          leaseExpiresAt: sql`now() + ${millis(l.leaseMs)}`,
          heartbeatAt: sql`now()`,
          progressAt: sql`now()`,
          dequeuedAt: sql`now()`,
          phase: 'dequeued',
          updatedAt: sql`now()`,
          limits: {
            lease_ms: l.leaseMs,
            heartbeat_ms: l.heartbeatMs,
            liveness_ms: l.livenessMs,
            pickup_timeout_ms: l.pickupTimeoutMs,
            wall_clock_ms: l.wallClockMs,
            max_replacements: l.maxReplacements,
          },
        })
        .where(
          and(
            eq(runs.status, 'pending'),
            sql`${runs.id} = (
              SELECT id FROM runs
              WHERE status = 'pending' AND available_at <= now()
                AND kind IN (${sql.join(
                  kinds.map((k) => sql`${k}`),
                  sql`, `,
                )})
              ORDER BY available_at, created_at
              LIMIT 1
              FOR UPDATE SKIP LOCKED)`,
          ),
        )
        .returning(),
    );
    const payload = sql`jsonb_build_object('task_id', task_id, 'kind', kind, 'worker', ${this.id}::text)`;
    const event = orm
      .$with('claimed_event', { id: sql<string>`id` })
      .as(sql`${insertEventFrom('claimed', newId('event'), 'run', 'claimed', payload)} RETURNING id`);
    const [row] = await orm.with(claimed, event).select().from(claimed);
    return row ?? null;
  }

  private launch(run: RunRow): void {
    const exec = new RunExecution(run, this.db, this.id, this.limits);
    const entry: Active = { exec, done: Promise.resolve() };
    this.active.set(run.id, entry);
    // Background work: on the embedded database's one connection, what a client waits on (a
    // webhook acknowledgement) goes first (storage/priority.ts).
    entry.done = this.db.priority
      .inBackground(() => this.execute(exec))
      .catch(async (error) => {
        // A fault before or around the handler (say the database blinked) must still end the run
        // by name now, not leave it `running` until its lease expires. The terminal write is
        // guarded by status and lease, so a run that already ended is left alone.
        if (isConnectionLost(error)) this.logger.warn({ err: error, run: run.id }, 'run lost the database');
        else this.logger.error({ err: error, run: run.id }, 'run execution crashed');
        await this.finish(exec, { error }, this.logger.child({ run: run.id })).catch((e) =>
          this.logger.error({ err: e, run: run.id }, 'could not end the crashed run; the sweeper will'),
        );
      })
      .finally(() => {
        exec.stopTimers();
        this.active.delete(run.id);
        if (!this.draining) void this.fill();
      });
  }

  private async execute(exec: RunExecution): Promise<void> {
    const run = exec.run;
    const log = this.logger.child({ run: run.id, task: run.taskId, kind: run.kind });
    const [task] = await this.db.orm.select().from(tasks).where(eq(tasks.id, run.taskId)).limit(1);
    if (!task) {
      await this.finish(
        exec,
        { error: new Error(`task ${run.taskId} of run ${run.id} does not exist`) },
        log,
      );
      return;
    }
    const handler = this.engine.handler(run.kind);
    try {
      await checkBrakes(this.db, run);
    } catch (error) {
      // The database went away while checking: the run is replaced, nothing was refused.
      if (isConnectionLost(error)) {
        await this.finish(exec, { error }, log);
        return;
      }
      await handler
        ?.abandoned?.(exec.context(task), error)
        .catch((e: unknown) => log.warn({ err: e }, 'could not settle what the refused run promised'));
      await this.finish(exec, { error }, log);
      return;
    }
    if (!handler) {
      await this.finish(
        exec,
        { error: new Error(`no handler for task kind ${run.kind} on worker ${this.id}`) },
        log,
      );
      return;
    }
    const [started] = await this.db.orm
      .update(runs)
      .set({ startedAt: sql`now()`, progressAt: sql`now()`, phase: 'started', updatedAt: sql`now()` })
      .where(and(eq(runs.id, run.id), eq(runs.status, 'running'), eq(runs.leaseOwner, this.id)))
      .returning();
    // Canceled (or swept) between the claim and the start: it is already terminal.
    if (!started) return;
    exec.run = started;
    exec.startTimers();
    const outcome = await this.runHandler(handler, exec, task);
    await this.finish(exec, outcome, log);
  }

  /** Runs the handler until it settles or the run is aborted, whichever comes first. */
  private async runHandler(handler: TaskHandler, exec: RunExecution, task: TaskRow): Promise<Outcome> {
    const signal = exec.controller.signal;
    const aborted = new Promise<Outcome>((resolve) => {
      const onAbort = () => resolve({ aborted: exec.cause ?? { kind: 'lost', reason: 'aborted' } });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    const handled = Promise.resolve()
      .then(() => handler(exec.context(task)))
      .then(
        (ok): Outcome => ({ ok }),
        (error): Outcome => ({ error }),
      );
    return Promise.race([handled, aborted]);
  }

  /**
   * The terminal frame for an outcome, and whether a replacement run follows: after a deploy
   * eviction (not counted toward the task's pause) and after the worker lost the database
   * mid-run (`backend_unavailable`, counted, so a run that keeps taking the database down stops).
   */
  private frameFor(
    outcome: Outcome,
  ): { frame: TerminalFrame; replace: 'evicted' | 'platform' | null } | null {
    if ('ok' in outcome) return { frame: { status: 'completed', result: outcome.ok }, replace: null };
    if ('aborted' in outcome) {
      const cause = outcome.aborted;
      if (cause.kind === 'lost') return null;
      if (cause.kind === 'evict') {
        return {
          frame: {
            status: 'failed',
            error: {
              code: 'run_evicted_by_deploy',
              message: `worker ${this.id} shut down before the run finished; a replacement run was started`,
            },
          },
          replace: 'evicted',
        };
      }
      return { frame: failedFrame(cause.failure), replace: null };
    }
    if (!(outcome.error instanceof RunFailure) && isConnectionLost(outcome.error)) {
      const reason = messageOf(outcome.error);
      return {
        frame: {
          status: 'failed',
          error: {
            code: 'backend_unavailable',
            message: `worker ${this.id} lost its database connection during the run (${reason}); a replacement run was started`,
            details: { worker_id: this.id },
          },
        },
        replace: 'platform',
      };
    }
    return { frame: failedFrame(outcome.error), replace: null };
  }

  /**
   * Commits the terminal frame (and, when it is replaced, the replacement) in one transaction.
   * While the database is away it keeps trying for about a lease; past that the sweeper may
   * already have ended the run `run_invocation_died`, and the guarded write then does nothing.
   */
  private async finish(exec: RunExecution, outcome: Outcome, log: Logger): Promise<void> {
    const decided = this.frameFor(outcome);
    exec.done = true;
    exec.stopTimers();
    if (!decided) {
      log.info(
        { reason: 'aborted' in outcome ? outcome.aborted : null },
        'run no longer held; nothing to commit',
      );
      return;
    }
    const frame: TerminalFrame = { ...exec.accumulated(), ...decided.frame };
    const deadline = Date.now() + Math.max(this.limits.leaseMs, 1_000);
    for (let attempt = 1; ; attempt++) {
      try {
        const after = await this.db.orm.transaction(async (tx) => {
          const ended = await commitTerminal(tx, exec.run.id, frame, {
            from: ['running'],
            leaseOwner: this.id,
          });
          if (!ended || !decided.replace) return null;
          return { ended, ...(await replaceOrPause(tx, ended, this.limits, decided.replace === 'platform')) };
        });
        if (after?.replacement) await this.engine.notifyRuns().catch(() => {});
        else if (after?.paused) {
          await this.engine.settleAbandoned(
            after.ended,
            new RunFailure('backend_unavailable', `${frame.error?.message ?? ''} The task was paused.`),
          );
        }
        log.info({ status: frame.status, code: frame.error?.code }, 'run finished');
        return;
      } catch (error) {
        // The database is away: keep trying; if it stays away past the lease, the sweeper ends
        // the run `run_invocation_died`, which is still a named end.
        if (Date.now() >= deadline && attempt >= 3) {
          log.error({ err: error }, 'could not commit the terminal frame; the sweeper will end the run');
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** (attempt - 1), 2_000)));
      }
    }
  }

  /** Renews the leases of every held run; a run that is no longer ours is aborted at once. */
  private async heartbeat(): Promise<void> {
    try {
      await this.db.orm.update(workers).set({ heartbeatAt: sql`now()` }).where(eq(workers.id, this.id));
      const ids = this.activeRunIds;
      if (ids.length === 0) return;
      const renewed = await this.db.orm
        .update(runs)
        .set({ leaseExpiresAt: sql`now() + ${millis(this.limits.leaseMs)}`, heartbeatAt: sql`now()` })
        .where(and(inArray(runs.id, ids), eq(runs.status, 'running'), eq(runs.leaseOwner, this.id)))
        .returning({ id: runs.id });
      const held = new Set(renewed.map((r) => r.id));
      for (const id of ids) {
        if (!held.has(id))
          this.active.get(id)?.exec.abort({ kind: 'lost', reason: 'canceled or lease lost' });
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'heartbeat failed');
    }
  }

  /**
   * Stops claiming, lets held runs finish for up to `graceMs`, then hands the rest back: each
   * ends `run_evicted_by_deploy` with exactly one replacement run. Resolves when every held run
   * is terminal (or, if the database is unreachable, left to the sweeper).
   */
  async drain(graceMs: number): Promise<{ finished: number; evicted: number }> {
    this.draining = true;
    clearInterval(this.pollTimer);
    this.sweeper?.stop();
    await this.db.orm
      .update(workers)
      .set({ draining: true })
      .where(eq(workers.id, this.id))
      .catch(() => {});
    const held = [...this.active.values()];
    const all = Promise.all(held.map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    const remaining = [...this.active.values()];
    for (const a of remaining) a.exec.abort({ kind: 'evict' });
    await Promise.all(remaining.map((a) => a.done));
    await this.stop();
    const evicted = remaining.length;
    this.logger.info({ finished: held.length - evicted, evicted }, 'worker drained');
    return { finished: held.length - evicted, evicted };
  }

  /** Releases timers and the listener; held runs are not touched (use drain for that). */
  async stop(): Promise<void> {
    this.draining = true;
    this.started = false;
    clearInterval(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    this.sweeper?.stop();
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
    await this.db.orm
      .update(workers)
      .set({ stoppedAt: sql`now()` })
      .where(eq(workers.id, this.id))
      .catch(() => {});
  }
}

function failedFrame(error: unknown): TerminalFrame {
  if (error instanceof RunFailure) {
    return { status: 'failed', error: { code: error.code, message: error.message, details: error.details } };
  }
  return { status: 'failed', error: { code: 'unknown', message: messageOf(error) } };
}
