/**
 * Long CPU work written once, run two ways. A step function is a generator that does its work in
 * slices and `yield`s between them; `runToEnd` drives it straight through (the CLI, tests),
 * `runCooperatively` lets the event loop turn at every `yield` (the server, where a review with
 * tens of thousands of findings must not stop `/healthz` or task reads from being answered).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items of work between two yields: a few milliseconds of the slowest step here, at most. */
export const SLICE = 500;

export type Steps<T> = Generator<void, T, void>;

/** Runs the steps without ever giving the event loop a turn. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** What may stop cooperative steps before their end. */
export interface StepLimits {
  /** Checked before every step: once aborted, no further step runs and the run rejects with its reason. */
  signal?: AbortSignal | undefined;
  /**
   * Milliseconds the steps themselves may run, summed over their slices only (the turns given to
   * the event loop and to other step functions in between do not count). Past it the run rejects
   * with StepBudgetExhausted. Undefined: no budget.
   */
  budgetMs?: number | undefined;
}

/** Thrown by `runCooperatively` when the steps spent their `budgetMs`. */
export class StepBudgetExhausted extends Error {
  constructor(
    readonly spentMs: number,
    readonly budgetMs: number,
  ) {
    super(`stopped after ${Math.round(spentMs)} ms of work, over a budget of ${budgetMs} ms`);
    this.name = 'StepBudgetExhausted';
  }
}

/**
 * Runs the steps, giving the event loop one full turn (I/O, timers, immediates) at every yield.
 * With `limits`, an aborted signal or a spent budget ends them at the next yield: the generator is
 * closed (its `finally` blocks run) and the promise rejects.
 */
export async function runCooperatively<T>(steps: Steps<T>, limits: StepLimits = {}): Promise<T> {
  let spentMs = 0;
  for (;;) {
    if (limits.signal?.aborted) {
      steps.return(undefined as T);
      limits.signal.throwIfAborted();
    }
    const started = performance.now();
    const next = steps.next();
    spentMs += performance.now() - started;
    if (next.done) return next.value;
    if (limits.budgetMs !== undefined && spentMs > limits.budgetMs) {
      steps.return(undefined as T);
      throw new StepBudgetExhausted(spentMs, limits.budgetMs);
    }
    await nextTurn();
  }
}

/** Milliseconds of cooperative work per turn of the event loop, at most (but for one item's cost). */
export const TURN_MS = 8;

/**
 * When the current stretch of cooperative work began, or null when none is under way. Every step
 * function in the process shares it: four files matched side by side, or a match beside a ledger
 * merge, are all resumed in the same turn of the event loop, and each taking its own TURN_MS would
 * hold the loop four times as long. The stretch ends at the next turn's immediates, after the
 * loop has polled for I/O.
 */
let stretchStartedAt: number | null = null;

function stretchElapsed(now: number): number {
  if (stretchStartedAt === null) {
    stretchStartedAt = now;
    setImmediate(() => {
      stretchStartedAt = null;
    });
  }
  return now - stretchStartedAt;
}

/**
 * A counter for loops inside step functions: true once SLICE items of work have been done since
 * it last said so, or once this turn's cooperative work (every step function's, see
 * `stretchStartedAt`) has run `ms` milliseconds: the loop should yield. An item that costs more (a
 * search through a whole file) counts for more; the clock catches what the count misjudges.
 */
export function slicer(size = SLICE, ms = TURN_MS): (cost?: number) => boolean {
  let done = 0;
  // The first call after a yield says no whatever the clock says: a loop resumed after others
  // spent the turn's time still does one item, so none is starved.
  let resumed = false;
  return (cost = 1) => {
    done += cost;
    if (resumed) {
      resumed = false;
      return false;
    }
    if (done < size && stretchElapsed(performance.now()) < ms) return false;
    done = 0;
    resumed = true;
    return true;
  };
}
