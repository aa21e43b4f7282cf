/**
 * The sweeper ends runs nobody will end otherwise: running runs whose lease expired (the worker
 * crashed or was killed) and pending runs no worker picked up in time. Every worker runs one;
 * each run is handled under `FOR UPDATE SKIP LOCKED` in its own transaction, so two sweepers
 * never handle the same run and a replacement is started exactly once. It also forgets workers
 * that have not heartbeat for a week, so restarts do not grow the `workers` table forever.
 */
import { and, asc, eq, lt, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { RunFailure } from '../core/failures';
import type { Database } from '../storage/database';
import { runs, workers } from '../storage/schema';
import { commitTerminal, millis, RUNS_CHANNEL, replaceOrPause } from './frames';
import type { EngineLimits, RunRow } from './types';

export interface SweepResult {
  died: number;
  replaced: number;
  paused: number;
  pickupTimeouts: number;
  workersForgotten: number;
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
    const result: SweepResult = { died: 0, replaced: 0, paused: 0, pickupTimeouts: 0, workersForgotten: 0 };
    for (let i = 0; i < BATCH; i++) {
      const handled = await this.sweepExpiredLease();
      if (!handled) break;
      result.died++;
      if (handled.replaced) result.replaced++;
      else {
        result.paused++;
        await this.onAbandoned(handled.run, handled.error);
      }
    }
    for (let i = 0; i < BATCH; i++) {
      const timedOut = await this.sweepPickupTimeout();
      if (!timedOut) break;
      result.pickupTimeouts++;
      await this.onAbandoned(timedOut.run, timedOut.error);
    }
    if (result.replaced > 0) await this.db.notify(RUNS_CHANNEL, 'run');
    result.workersForgotten = await this.forgetSilentWorkers();
    if (result.died + result.pickupTimeouts + result.workersForgotten > 0) this.logger.info(result, 'swept');
    return result;
  }

  /** One running run whose lease expired: failed `run_invocation_died`, then replaced or paused. */
  private async sweepExpiredLease(): Promise<{ run: RunRow; error: RunFailure; replaced: boolean } | null> {
    return this.db.orm.transaction(async (tx) => {
      const [dead] = await tx
        .select()
        .from(runs)
        .where(and(eq(runs.status, 'running'), lt(runs.leaseExpiresAt, sql`now()`)))
        .orderBy(asc(runs.leaseExpiresAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!dead) return null;
      const error = new RunFailure(
        'run_invocation_died',
        `worker ${dead.leaseOwner ?? '(unknown)'} stopped renewing its lease (last heartbeat ${dead.heartbeatAt?.toISOString() ?? 'never'}); a replacement run was started`,
        { worker_id: dead.leaseOwner },
      );
      const ended = await commitTerminal(
        tx,
        dead.id,
        { status: 'failed', error: { code: error.code, message: error.message, details: error.details } },
        { from: ['running'] },
      );
      if (!ended) return null;
      const { replacement } = await replaceOrPause(tx, ended, this.limits, true);
      if (replacement) return { run: ended, error, replaced: true };
      const paused = new RunFailure(
        'run_invocation_died',
        `worker ${dead.leaseOwner ?? '(unknown)'} stopped renewing its lease and the task was paused after repeated failures`,
        error.details,
      );
      return { run: ended, error: paused, replaced: false };
    });
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
