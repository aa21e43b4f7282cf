/**
 * The arithmetic behind `npm run bench:soak`'s memory verdict and its request mix: a leak must be
 * called growing, a server that settles after its warm-up bounded, a run too short not judged,
 * and the mix must send each kind its share, evenly spread.
 */
import { describe, expect, it } from 'vitest';
import { interleave, SOAK_MIX } from '../../bench/soak-mix';
import {
  linearFit,
  type MemorySample,
  percentiles,
  soakVerdict,
  summarizeMemory,
} from '../../bench/soak-stats';

const LIMITS = { slopeMiBPerMin: 2, ceilingMiB: 1024, minJudgedSeconds: 120 };

/** One sample every 5 s for `seconds`, RSS from `rss(t)`. */
function samples(seconds: number, rss: (t: number) => number): MemorySample[] {
  return Array.from({ length: seconds / 5 + 1 }, (_, i) => ({
    atS: i * 5,
    rssMiB: rss(i * 5),
    heapUsedMiB: 50,
  }));
}

/** A deterministic wobble of ±`amplitude` MiB, like a GC sawtooth. */
const wobble = (t: number, amplitude: number) => amplitude * Math.sin(t * 1.7);

describe('percentiles', () => {
  it('takes the nearest rank, whatever the input order', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentiles(values)).toEqual({ p50: 50, p99: 99, max: 100 });
    expect(percentiles([7])).toEqual({ p50: 7, p99: 7, max: 7 });
  });

  it('has nothing to say about no values', () => {
    expect(percentiles([])).toEqual({ p50: null, p99: null, max: null });
  });
});

describe('linearFit', () => {
  it('finds the slope of a straight line, with no error', () => {
    const fit = linearFit([0, 1, 2, 3, 4].map((x) => ({ x, y: 3 + 2 * x })));
    expect(fit?.slope).toBeCloseTo(2, 10);
    expect(fit?.slopeStdErr).toBeCloseTo(0, 10);
  });

  it('reports a larger error for noisier points', () => {
    const quiet = linearFit([0, 1, 2, 3, 4, 5].map((x) => ({ x, y: x + (x % 2) * 0.1 })));
    const noisy = linearFit([0, 1, 2, 3, 4, 5].map((x) => ({ x, y: x + (x % 2) * 5 })));
    expect(noisy?.slopeStdErr).toBeGreaterThan((quiet?.slopeStdErr ?? 0) * 10);
  });

  it('gives no fit for fewer than three points or no spread in x', () => {
    expect(
      linearFit([
        { x: 0, y: 1 },
        { x: 1, y: 2 },
      ]),
    ).toBeNull();
    expect(linearFit([1, 2, 3].map((y) => ({ x: 5, y })))).toBeNull();
  });
});

describe('summarizeMemory', () => {
  it('calls a flat but wobbling RSS bounded, and reports start, peak and end', () => {
    const summary = summarizeMemory(
      samples(600, (t) => 400 + wobble(t, 8)),
      LIMITS,
    );
    expect(summary.verdict).toBe('memory bounded');
    expect(Math.abs(summary.secondHalf?.slope ?? 99)).toBeLessThan(1);
    expect(summary.startMiB).toBe(400);
    expect(summary.peakMiB).toBeGreaterThan(405);
    expect(summary.samples).toBe(121);
  });

  it('calls a leak of 10 MiB/min growing, and measures it in MiB per minute', () => {
    const summary = summarizeMemory(
      samples(600, (t) => 400 + (10 * t) / 60 + wobble(t, 8)),
      LIMITS,
    );
    expect(summary.verdict).toBe('memory growing');
    expect(summary.secondHalf?.slope).toBeCloseTo(10, 0);
    expect(summary.reasons.join('; ')).toContain('≥ 2');
  });

  it('leaves the warm-up of the first half out of the slope', () => {
    // +100 MiB over the first 5 minutes (caches, JIT, allocator), flat after.
    const summary = summarizeMemory(
      samples(600, (t) => 300 + Math.min(t, 300) / 3 + wobble(t, 4)),
      LIMITS,
    );
    expect(summary.verdict).toBe('memory bounded');
    expect(summary.secondHalfSeconds).toBe(300);
  });

  it('calls a flat RSS above the ceiling growing', () => {
    const summary = summarizeMemory(
      samples(600, () => 1500),
      LIMITS,
    );
    expect(summary.verdict).toBe('memory growing');
    expect(summary.reasons.join('; ')).toContain('final RSS 1500 MiB ≥ 1024 MiB');
  });

  it('does not judge a run whose second half is too short for a slope', () => {
    const summary = summarizeMemory(
      samples(60, (t) => 400 + t),
      LIMITS,
    );
    expect(summary.verdict).toBe('not judged');
    expect(summary.reasons[0]).toContain('30 s');
  });
});

describe('soakVerdict', () => {
  const flat = () =>
    summarizeMemory(
      samples(600, (t) => 400 + wobble(t, 8)),
      LIMITS,
    );

  it('keeps the memory verdict of a run whose server answered the load', () => {
    expect(soakVerdict(flat(), 300_000, 299_990).verdict).toBe('memory bounded');
  });

  it('does not judge a run whose server fell behind, however flat its memory', () => {
    const judged = soakVerdict(flat(), 300_000, 36_000);
    expect(judged.verdict).toBe('not judged');
    expect(judged.reasons[0]).toContain('36000 of the 300000 requests due (12.0%');
  });
});

describe('interleave', () => {
  it('sends each kind exactly its weight per cycle', () => {
    const order = interleave(SOAK_MIX);
    expect(order).toHaveLength(SOAK_MIX.reduce((sum, share) => sum + share.weight, 0));
    SOAK_MIX.forEach((share, i) => {
      expect(order.filter((k) => k === i)).toHaveLength(share.weight);
    });
  });

  it('spreads a rare kind evenly instead of sending it in a burst', () => {
    const order = interleave([
      { kind: 'read', weight: 95 },
      { kind: 'write', weight: 5 },
    ]);
    const at = order.flatMap((k, i) => (k === 1 ? [i] : []));
    const gaps = at.slice(1).map((i, n) => i - (at[n] as number));
    expect(gaps.every((g) => g === 20)).toBe(true);
  });

  it('never sends a kind of weight 0, and refuses an empty mix', () => {
    const order = interleave([
      { kind: 'a', weight: 3 },
      { kind: 'off', weight: 0 },
      { kind: 'b', weight: 1 },
    ]);
    expect(order).toHaveLength(4);
    expect(order).not.toContain(1);
    expect(() => interleave([{ kind: 'off', weight: 0 }])).toThrow('empty');
  });
});
