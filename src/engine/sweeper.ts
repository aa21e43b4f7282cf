/**
 * The sweeper ends runs nobody will end otherwise: running runs whose lease expired (the worker
 * crashed or was killed), claimed runs that never started (the worker died between its claim and
 * the start, or is stuck there while its heartbeat goes on) and pending runs no worker picked up
 * in time. Every worker runs one;
 * each run is handled under `FOR UPDATE SKIP LOCKED` in its own transaction, so two sweepers
 * never handle the same run and a replacement is started exactly once. It also forgets workers
 * that have not heartbeat for a week, so restarts do not grow the `workers` table forever.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { RunFailure } from '../core/failures';
import type { Database } from '../storage/database';
import { runs, workers } from '../storage/schema';
import { commitTerminal, millis, RUNS_CHANNEL, replaceOrPause, type Tx } from './frames';
import type { EngineLimits, RunRow } from './types';

export interface SweepResult {
  /** Runs ended `run_invocation_died` or, when they had not started, `run_never_started`. */
  died: number;
  /** Of `died`, those that never started, plus live-leased claims past the start deadline. */
  neverStarted: number;
  replaced: number;
  paused: number;
  pickupTimeouts: number;
  workersForgotten: number;
}

/** A run the sweeper ended, and whether a replacement follows. */
interface Swept {
  run: RunRow;
  error: RunFailure;
  replaced: boolean;
}

/** Upper bound of runs one sweep pass handles per kind, so a pass stays short. */
const BATCH = 100;

/**
 * How long a worker that stopped (or died) stays in `workers`. A run's `lease_owner` and its
 * `run_invocation_died` details name the worker; a week keeps that traceable for a post-mortem.
 */
const FORGET_WORKERS_AFTER_MS = 7 * 24 * 60 * 60 * 1000;

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  /**
   * `onAbandoned` hears of each run the sweeper ended for good (no replacement follows), after
   * its transaction committed, so the run's kind can settle what it promised (a check).
   */
  constructor(
    private readonly db: Database,
    private readonly limits: EngineLimits,
    private readonly logger: Logger,
    private readonly onAbandoned: (run: RunRow, error: RunFailure) => Promise<void> = async () => {},
  ) {}

  /** How often to sweep: often enough that a dead lease is noticed within about half a lease. */
  get intervalMs(): number {
    return Math.max(100, Math.min(this.limits.leaseMs / 2, 5_000, this.limits.pickupTimeoutMs / 2));
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.sweepOnce();
    } catch (error) {
      this.logger.warn({ err: error }, 'sweep failed; the next one retries');
    } finally {
      this.running = false;
    }
  }

  async sweepOnce(): Promise<SweepResult> {
    const result: SweepResult = {
      died: 0,
      neverStarted: 0,
      replaced: 0,
      paused: 0,
      pickupTimeouts: 0,
      workersForgotten: 0,
    };
    const count = async (handled: Swept) => {
      if (handled.error.code === 'run_never_started') result.neverStarted++;
      if (handled.replaced) result.replaced++;
      else {
        result.paused++;
        await this.onAbandoned(handled.run, handled.error);
      }
    };
    for (let i = 0; i < BATCH; i++) {
      const handled = await this.sweepExpiredLease();
      if (!handled) break;
      result.died++;
      await count(handled);
    }
    for (let i = 0; i < BATCH; i++) {
      const handled = await this.sweepStartDeadline();
      if (!handled) break;
      await count(handled);
    }
    for (let i = 0; i < BATCH; i++) {
      const timedOut = await this.sweepPickupTimeout();
      if (!timedOut) break;
      result.pickupTimeouts++;
      await this.onAbandoned(timedOut.run, timedOut.error);
    }
    if (result.replaced > 0) await this.db.notify(RUNS_CHANNEL, 'run');
    result.workersForgotten = await this.forgetSilentWorkers();
    if (result.died + result.neverStarted + result.pickupTimeouts + result.workersForgotten > 0)
      this.logger.info(result, 'swept');
    return result;
  }

  /**
   * One running run whose lease expired: failed `run_invocation_died`, or `run_never_started` when
   * its worker died between the claim and the start; then replaced or paused.
   */
  private async sweepExpiredLease(): Promise<Swept | null> {
    return this.db.orm.transaction(async (tx) => {
      const [dead] = await tx
        .select()
        .from(runs)
        .where(and(eq(runs.status, 'running'), lt(runs.leaseExpiresAt, sql`now()`)))
        .orderBy(asc(runs.leaseExpiresAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!dead) return null;
      const worker = dead.leaseOwner ?? '(unknown)';
      const heartbeat = dead.heartbeatAt?.toISOString() ?? 'never';
      const error =
        dead.startedAt === null
          ? new RunFailure(
              'run_never_started',
              `worker ${worker} claimed the run at ${dead.dequeuedAt?.toISOString() ?? '(unknown)'} and stopped renewing its lease (last heartbeat ${heartbeat}) before starting it`,
              { worker_id: dead.leaseOwner, dequeued_at: dead.dequeuedAt?.toISOString() ?? null },
            )
          : new RunFailure(
              'run_invocation_died',
              `worker ${worker} stopped renewing its lease (last heartbeat ${heartbeat})`,
              { worker_id: dead.leaseOwner },
            );
      return this.endAndReplace(tx, dead, error);
    });
  }

  /**
   * One run claimed longer ago than the liveness limit that has still not started, though its
   * lease is renewed: its worker is stuck between the claim and the start. `run_never_started`,
   * then replaced or paused. The run's own watchdogs are armed only at the start, so nothing
   * else would end it.
   */
  private async sweepStartDeadline(): Promise<Swept | null> {
    return this.db.orm.transaction(async (tx) => {
      const [stuck] = await tx
        .select()
        .from(runs)
        .where(
          and(
            eq(runs.status, 'running'),
            isNull(runs.startedAt),
            lt(runs.dequeuedAt, sql`now() - ${millis(this.limits.livenessMs)}`),
          ),
        )
        .orderBy(asc(runs.dequeuedAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!stuck) return null;
      const error = new RunFailure(
        'run_never_started',
        `worker ${stuck.leaseOwner ?? '(unknown)'} claimed the run at ${stuck.dequeuedAt?.toISOString() ?? '(unknown)'} and had not started it ${this.limits.livenessMs} ms later`,
        {
          worker_id: stuck.leaseOwner,
          dequeued_at: stuck.dequeuedAt?.toISOString() ?? null,
          start_deadline_ms: this.limits.livenessMs,
        },
      );
      return this.endAndReplace(tx, stuck, error);
    });
  }

  /** Fails a running run by `error`, then starts its replacement or pauses its task. */
  private async endAndReplace(tx: Tx, run: RunRow, error: RunFailure): Promise<Swept | null> {
    // replaceOrPause's rule, known before the commit so the run's message says what follows it.
    const replacing = run.retryCount < this.limits.maxReplacements;
    const said = new RunFailure(
      error.code,
      `${error.message}; ${replacing ? 'a replacement run was started' : 'the task was paused after repeated failures'}`,
      error.details,
    );
    const ended = await commitTerminal(
      tx,
      run.id,
      { status: 'failed', error: { code: said.code, message: said.message, details: said.details } },
      { from: ['running'] },
    );
    if (!ended) return null;
    const { replacement } = await replaceOrPause(tx, ended, this.limits, true);
    return { run: ended, error: said, replaced: replacement !== null };
  }

  /** One pending run older than the pickup timeout: failed `queue_pickup_timeout`. */
  private async sweepPickupTimeout(): Promise<{ run: RunRow; error: RunFailure } | null> {
    return this.db.orm.transaction(async (tx) => {
      const [stale] = await tx
        .select({ id: runs.id, queuedAt: runs.queuedAt })
        .from(runs)
        .where(
          and(
            eq(runs.status, 'pending'),
            lt(runs.queuedAt, sql`now() - ${millis(this.limits.pickupTimeoutMs)}`),
          ),
        )
        .orderBy(asc(runs.queuedAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!stale) return null;
      const error = new RunFailure(
        'queue_pickup_timeout',
        `no worker picked the run up within ${this.limits.pickupTimeoutMs} ms of being queued`,
        { pickup_timeout_ms: this.limits.pickupTimeoutMs },
      );
      const ended = await commitTerminal(
        tx,
        stale.id,
        { status: 'failed', error: { code: error.code, message: error.message, details: error.details } },
        { from: ['pending'] },
      );
      return ended ? { run: ended, error } : null;
    });
  }

  /** Deletes workers whose last heartbeat is older than FORGET_WORKERS_AFTER_MS. */
  private async forgetSilentWorkers(): Promise<number> {
    const forgotten = await this.db.orm
      .delete(workers)
      .where(lt(workers.heartbeatAt, sql`now() - ${millis(FORGET_WORKERS_AFTER_MS)}`))
      .returning({ id: workers.id });
    return forgotten.length;
  }
}

/**
 * Ends the leases of every running run, for a process that has just opened the embedded
 * database: its data-dir lock proves that no other process is alive, so each such run belonged
 * to one that died (`kill -9`, a crash). The first sweep then ends and replaces them by name,
 * instead of waiting out their leases. Never for PostgreSQL, where other processes hold runs.
 */
export async function expireLeasesOfDeadProcesses(db: Database): Promise<number> {
  if (db.kind !== 'pglite') return 0;
  const expired = await db.orm
    .update(runs)
    .set({ leaseExpiresAt: sql`now()` })
    .where(and(eq(runs.status, 'running'), sql`${runs.leaseExpiresAt} > now()`))
    .returning({ id: runs.id });
  return expired.length;
}
