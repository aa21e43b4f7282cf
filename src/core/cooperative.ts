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

/** Runs the steps, giving the event loop one full turn (I/O, timers, immediates) at every yield. */
export async function runCooperatively<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await nextTurn();
  }
}

/** Milliseconds of work between two yields, at most (but for one item's own cost). */
export const TURN_MS = 8;

/**
 * A counter for loops inside step functions: true once SLICE items of work, or TURN_MS
 * milliseconds, have passed since the last time it said so, when the loop should yield. An item
 * that costs more (a search through a whole file) counts for more; the clock catches what the
 * count misjudges. The clock starts at the first call after a yield, so a busy event loop’s turn
 * is not counted as this loop's work.
 */
export function slicer(size = SLICE, ms = TURN_MS): (cost?: number) => boolean {
  let done = 0;
  let since: number | null = null;
  return (cost = 1) => {
    const now = performance.now();
    since ??= now;
    done += cost;
    if (done < size && now - since < ms) return false;
    done = 0;
    since = null;
    return true;
  };
}
