/** Step functions and the slicer that decides when they give the event loop a turn. */
import { describe, expect, it } from 'vitest';
import { runCooperatively, runToEnd, type Steps, slicer } from '../../src/core/cooperative';

/** Busy for at least `ms` milliseconds, as a loop's expensive item is. */
const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
};

describe('slicer', () => {
  it('says yield after `size` items of work, counting costs', () => {
    const tick = slicer(3, Number.POSITIVE_INFINITY);
    expect([tick(), tick(), tick()]).toEqual([false, false, true]);
    // After a yield the first item is free; then two more fill the slice again.
    expect([tick(), tick(), tick()]).toEqual([false, false, true]);
    expect([tick(), tick(10)]).toEqual([false, true]);
  });

  it('says yield once the turn’s time is spent, by any loop, and lets a resumed loop do one item', async () => {
    await new Promise((r) => setImmediate(r)); // a fresh turn
    const first = slicer(Number.POSITIVE_INFINITY, 2);
    const second = slicer(Number.POSITIVE_INFINITY, 2);
    expect(first()).toBe(false);
    spin(5);
    expect(first()).toBe(true);
    // The other loop, in the same turn, finds the time spent too.
    expect(second()).toBe(true);
    expect(second()).toBe(false); // resumed: one item whatever the clock says
    // After the loop has turned, the clock starts again.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(first()).toBe(false);
    expect(first()).toBe(false);
  });
});

describe('step functions', () => {
  function* count(to: number): Steps<number> {
    let n = 0;
    for (let i = 0; i < to; i++) {
      n++;
      yield;
    }
    return n;
  }

  it('run to the same value straight through or cooperatively', async () => {
    expect(runToEnd(count(5))).toBe(5);
    expect(await runCooperatively(count(5))).toBe(5);
  });

  it('let timers and I/O run between slices when run cooperatively', async () => {
    let fired = false;
    setTimeout(() => {
      fired = true;
    }, 0);
    function* waitForTimer(): Steps<boolean> {
      const until = performance.now() + 2_000;
      while (!fired && performance.now() < until) {
        spin(1);
        yield;
      }
      return fired;
    }
    expect(await runCooperatively(waitForTimer())).toBe(true);
  });
});
