/**
 * The in-flight budget's rules, on a clock the test sets: a source's share, the sweep that
 * cuts bodies behind the pace past their grace, and newcomers taking the shares of laggards
 * (the slowest first, their own source's first) but never of bodies keeping the pace.
 */
import { describe, expect, it } from 'vitest';
import { type BodyInFlight, InFlightBudget } from '../../src/http/inflight-budget';

const pace = { graceMs: 2_000, minBytesPerS: 1_000 };

function body(source: string, bytes: number, startedAt = 0, received = 0) {
  const cuts: string[] = [];
  const b: BodyInFlight & { cuts: string[] } = {
    bytes,
    source,
    startedAt,
    received,
    complete: false,
    cut: (why) => cuts.push(why),
    cuts,
  };
  return b;
}

describe('InFlightBudget', () => {
  it('lets one source hold at most its share, but always one largest body', () => {
    const budget = new InFlightBudget(1_000, { pace, sourceShare: 0.25, bodyLimit: 100 });
    expect(budget.sourceLimit).toBe(250);
    expect(budget.take(body('a', 200), 0)).toBe(true);
    expect(budget.take(body('a', 100), 0)).toBe(false);
    expect(budget.take(body('b', 250), 0)).toBe(true);
    const wide = new InFlightBudget(1_000, { pace, sourceShare: 0.25, bodyLimit: 600 });
    expect(wide.sourceLimit).toBe(600);
    expect(wide.take(body('a', 600), 0)).toBe(true);
  });

  it('cuts, at the sweep, the bodies behind the pace past their grace, and gives their shares back', () => {
    const budget = new InFlightBudget(1_000, { pace, sourceShare: 1, bodyLimit: 500 });
    const slow = body('a', 400, 0, 10);
    const steady = body('a', 400, 0, 0);
    const done = body('a', 100, 0, 100);
    done.complete = true;
    for (const b of [slow, steady, done]) expect(budget.take(b, 0)).toBe(true);
    expect(budget.sweep(1_900)).toBe(0);
    steady.received = 1_200;
    // 3 s in: 1 s past the grace asks for 1,000 bytes; a body read in full is not judged.
    expect(budget.sweep(3_000)).toBe(1);
    expect(slow.cuts).toEqual(['too_slow']);
    expect(steady.cuts).toEqual([]);
    expect(done.cuts).toEqual([]);
    expect(budget.inFlight).toBe(500);
    expect(budget.cutTooSlow).toBe(1);
  });

  it('gives a newcomer the shares of the slowest laggards, never of a body keeping the pace', () => {
    const budget = new InFlightBudget(1_000, { pace, sourceShare: 1, bodyLimit: 500 });
    const fast = body('a', 500, 0, 600);
    const slower = body('b', 250, 0, 5);
    const slowest = body('b', 250, 0, 1);
    for (const b of [fast, slower, slowest]) expect(budget.take(b, 0)).toBe(true);
    // Half a second in, within the grace: 1 and 5 bytes are behind 1,000 bytes a second.
    const newcomer = body('c', 200, 500);
    expect(budget.take(newcomer, 500)).toBe(true);
    expect(slowest.cuts).toEqual(['preempted']);
    expect(slower.cuts).toEqual([]);
    expect(fast.cuts).toEqual([]);
    // No laggards enough for 600 bytes: refused, and nobody is cut for nothing.
    expect(budget.take(body('c', 600, 500), 500)).toBe(false);
    expect(slower.cuts).toEqual([]);
    expect(newcomer.cuts).toEqual([]);
    expect(budget.preempted).toBe(1);
  });

  it('judges no body in its first moments, whatever it received', () => {
    const budget = new InFlightBudget(100, { pace, sourceShare: 1, bodyLimit: 100 });
    expect(budget.take(body('a', 100, 0, 0), 0)).toBe(true);
    expect(budget.take(body('b', 100, 100), 100)).toBe(false);
  });

  it('frees room within a full source share from that source own laggards', () => {
    const budget = new InFlightBudget(1_000, { pace, sourceShare: 0.25, bodyLimit: 100 });
    const lagger = body('a', 250, 0, 0);
    const other = body('b', 250, 0, 0);
    expect(budget.take(lagger, 0)).toBe(true);
    expect(budget.take(other, 0)).toBe(true);
    expect(budget.take(body('a', 100, 1_000), 1_000)).toBe(true);
    expect(lagger.cuts).toEqual(['preempted']);
    expect(other.cuts).toEqual([]);
  });
});
