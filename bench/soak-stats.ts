/**
 * The arithmetic of `npm run bench:soak`, kept apart from processes and sockets so it can be
 * tested: percentiles, the least-squares slope of memory over time, and the memory verdict.
 */

export interface Percentiles {
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** Nearest-rank percentiles (the value at rank ⌈p·n⌉), as bench/load.mjs reports them. */
export function percentiles(values: ArrayLike<number>): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) =>
    sorted.length === 0
      ? null
      : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? null);
  return { p50: at(50), p99: at(99), max: sorted.length > 0 ? (sorted[sorted.length - 1] ?? null) : null };
}

export interface Fit {
  /** y units per x unit. */
  slope: number;
  /** Standard error of the slope: how far noise alone could move it. */
  slopeStdErr: number;
}

/** Ordinary least squares y = a + b·x; null with fewer than three points or no spread in x. */
export function linearFit(points: readonly { x: number; y: number }[]): Fit | null {
  const n = points.length;
  if (n < 3) return null;
  const meanX = points.reduce((s, p) => s + p.x, 0) / n;
  const meanY = points.reduce((s, p) => s + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - meanX) ** 2;
    sxy += (p.x - meanX) * (p.y - meanY);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  const intercept = meanY - slope * meanX;
  const residual = points.reduce((s, p) => s + (p.y - (intercept + slope * p.x)) ** 2, 0);
  return { slope, slopeStdErr: Math.sqrt(residual / (n - 2) / sxx) };
}

export interface MemorySample {
  /** Seconds since the measured load began. */
  atS: number;
  rssMiB: number;
  /** V8 heap in use (prom-client's nodejs_heap_size_used_bytes), when /metrics answered. */
  heapUsedMiB: number | null;
}

export interface MemoryLimits {
  /** Largest second-half RSS growth still called bounded, MiB per minute. */
  slopeMiBPerMin: number;
  /** RSS the server must end below, MiB. */
  ceilingMiB: number;
  /** Shortest second half a slope is judged on, seconds: a shorter one is mostly GC noise. */
  minJudgedSeconds: number;
}

export interface MemorySummary {
  samples: number;
  startMiB: number;
  peakMiB: number;
  endMiB: number;
  /** RSS over the second half of the run (samples at or after half the last sample's time). */
  secondHalf: Fit | null;
  secondHalfSeconds: number;
  heapSecondHalf: Fit | null;
  verdict: 'memory bounded' | 'memory growing' | 'not judged';
  /** Why the verdict is what it is, one clause per test. */
  reasons: string[];
}

/** MiB per second → MiB per minute. */
const perMinute = (fit: Fit | null): Fit | null =>
  fit && { slope: fit.slope * 60, slopeStdErr: fit.slopeStdErr * 60 };

export function summarizeMemory(samples: readonly MemorySample[], limits: MemoryLimits): MemorySummary {
  if (samples.length === 0) throw new Error('no memory samples');
  const first = samples[0] as MemorySample;
  const last = samples[samples.length - 1] as MemorySample;
  const half = (first.atS + last.atS) / 2;
  const second = samples.filter((s) => s.atS >= half);
  const secondHalfSeconds = second.length > 0 ? last.atS - (second[0] as MemorySample).atS : 0;
  const secondHalf = perMinute(linearFit(second.map((s) => ({ x: s.atS, y: s.rssMiB }))));
  const heapPoints = second.flatMap((s) => (s.heapUsedMiB === null ? [] : [{ x: s.atS, y: s.heapUsedMiB }]));
  const heapSecondHalf = perMinute(linearFit(heapPoints));
  const summary: MemorySummary = {
    samples: samples.length,
    startMiB: first.rssMiB,
    peakMiB: Math.max(...samples.map((s) => s.rssMiB)),
    endMiB: last.rssMiB,
    secondHalf,
    secondHalfSeconds,
    heapSecondHalf,
    verdict: 'not judged',
    reasons: [],
  };
  if (!secondHalf || secondHalfSeconds < limits.minJudgedSeconds) {
    summary.reasons.push(
      `the second half lasted ${Math.round(secondHalfSeconds)} s, shorter than the ${limits.minJudgedSeconds} s a slope is judged on`,
    );
    return summary;
  }
  const slopeOk = secondHalf.slope < limits.slopeMiBPerMin;
  const ceilingOk = last.rssMiB < limits.ceilingMiB;
  summary.reasons.push(
    `second-half RSS slope ${secondHalf.slope.toFixed(2)} MiB/min ${slopeOk ? '<' : '≥'} ${limits.slopeMiBPerMin}`,
    `final RSS ${Math.round(last.rssMiB)} MiB ${ceilingOk ? '<' : '≥'} ${limits.ceilingMiB} MiB`,
  );
  summary.verdict = slopeOk && ceilingOk ? 'memory bounded' : 'memory growing';
  return summary;
}

/** Below this share of the due requests answered, the run did not put the load on the server. */
export const DELIVERED_SHARE = 0.99;

export interface Verdict {
  verdict: MemorySummary['verdict'];
  reasons: string[];
}

/**
 * The run's verdict: the memory verdict, but only for a run that delivered its load. A server
 * that fell behind answered fewer requests than were due, so its memory figures describe a
 * smaller load than the one named, and are not judged.
 */
export function soakVerdict(memory: MemorySummary, due: number, answered: number): Verdict {
  if (due > 0 && answered / due < DELIVERED_SHARE) {
    return {
      verdict: 'not judged',
      reasons: [
        `the server answered ${answered} of the ${due} requests due (${((100 * answered) / due).toFixed(1)}%, ` +
          `below ${DELIVERED_SHARE * 100}%): it did not keep up, so the memory figures are for a smaller load`,
        ...memory.reasons,
      ],
    };
  }
  return { verdict: memory.verdict, reasons: memory.reasons };
}
