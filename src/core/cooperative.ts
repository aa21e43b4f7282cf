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

/** Milliseconds of CPU work a step function does before it yields, when it counts time. */
export const TURN_MS = 8;

/**
 * A clock for loops whose items differ too much in cost to count (a rule over a whole file, a
 * data-flow walk): `due()` once `ms` milliseconds of work have passed since the clock was started
 * or restarted. The loop restarts it after its `yield`, so time spent yielded is not counted:
 * `if (clock.due()) { yield; clock.restart(); }`.
 */
export function timeSlicer(ms = TURN_MS): { due(): boolean; restart(): void } {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= ms,
    restart: () => {
      since = performance.now();
    },
  };
}

/**
 * A counter for loops inside step functions: true once SLICE items of work have been done since
 * the last time it said so, when the loop should yield. An item that costs more (a search through
 * a whole file) counts for more.
 */
export function slicer(size = SLICE): (cost?: number) => boolean {
  let done = 0;
  return (cost = 1) => {
    done += cost;
    if (done < size) return false;
    done = 0;
    return true;
  };
}
