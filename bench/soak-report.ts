/**
 * The soak section of docs/benchmarks.md, rendered from the figures `npm run bench:soak` saves
 * (tmp/bench-soak.json), so the text can be rewritten without measuring again.
 */

import type { Tally } from './soak-load';
import type { MixShare } from './soak-mix';
import {
  DELIVERED_SHARE,
  type MemoryLimits,
  type MemorySummary,
  type Percentiles,
  percentiles,
  soakVerdict,
} from './soak-stats';

/**
 * What "memory bounded" means here. Slope: 2 MiB/min is ~70 bytes kept per request at 500
 * req/s, ~2.8 GiB a day; a real leak of that size shows within the ten minutes, while the
 * second-half slope of a steady server sampled every 5 s moves by a fraction of it (its
 * standard error is printed beside it). Ceiling: 1 GiB, the memory target bench:review holds the
 * server to. A second half shorter than 2 minutes is not judged: it is mostly GC and JIT noise.
 */
export const VERDICT_LIMITS: MemoryLimits = { slopeMiBPerMin: 2, ceilingMiB: 1024, minJudgedSeconds: 120 };

export interface TallyFigures {
  sent: number;
  answered: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  latencyMs: Percentiles;
}

export function summarizeTally(t: Tally): TallyFigures {
  return {
    sent: t.sent,
    answered: t.answered,
    statuses: t.statuses,
    errors: t.errors,
    latencyMs: percentiles(t.latenciesMs),
  };
}

export interface MinuteFigures extends TallyFigures {
  minute: number;
  /** Length of this minute of load (the last one may be shorter), seconds. */
  seconds: number;
  rssEndMiB: number;
  heapUsedEndMiB: number | null;
  /** Server CPU over the minute (1.00 = one core). */
  cpuShare: number | null;
  /** The longest event-loop delay over the minute (prom-client's lag max, per scrape). */
  lagMaxMs: number | null;
}

export interface SoakFigures {
  startedAt: string;
  database: string;
  databaseVersion: string;
  machine: { cpu: string; cpus: number; memoryGiB: number; os: string; node: string };
  loadBefore: number[];
  loadAfter: number[];
  rate: number;
  seconds: number;
  warmupSeconds: number;
  sampleSeconds: number;
  mix: (MixShare & { request: string })[];
  findingsAtStart: number;
  sendingS: number;
  elapsedS: number;
  due: number;
  unsent: number;
  unanswered: number;
  total: TallyFigures;
  sendLagMs: Percentiles;
  perMinute: MinuteFigures[];
  perKind: Record<string, TallyFigures>;
  samples: {
    atS: number;
    rssMiB: number;
    heapUsedMiB: number | null;
    externalMiB: number | null;
    cpuS: number;
    lagP99Ms: number | null;
    lagMaxMs?: number | null;
  }[];
  hwmMiB: number;
  memory: MemorySummary;
  limits: MemoryLimits;
  runsAtEnd: Record<string, number>;
  problems: Record<string, string[]>;
  serverLog: { levels: Record<string, number>; first: string[] };
  exitCode: number | null;
  /** The server had exited before the run ended (else it was stopped with SIGTERM after it). */
  diedDuringRun?: boolean;
}

const int = (v: number) => Math.round(v).toLocaleString('en-US');
const ms = (v: number | null) =>
  v === null ? '–' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
const mib = (v: number | null) => (v === null ? '–' : `${int(v)} MiB`);
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const counts = (c: Record<string, number>) =>
  Object.keys(c).length === 0
    ? 'none'
    : Object.entries(c)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => `${int(n)}× ${k}`)
        .join(', ');
const atLeast400 = (t: TallyFigures) =>
  Object.entries(t.statuses)
    .filter(([s]) => Number(s) >= 400)
    .reduce((n, [, c]) => n + c, 0);
const errors = (t: TallyFigures) => Object.values(t.errors).reduce((n, c) => n + c, 0);
const slope = (f: { slope: number; slopeStdErr: number } | null) =>
  f === null ? '–' : `${f.slope >= 0 ? '+' : ''}${f.slope.toFixed(2)} ± ${f.slopeStdErr.toFixed(2)} MiB/min`;

/** How many requests of `kind` the mix sends per second at the run's rate. */
function perSecond(f: SoakFigures, kind: string): string {
  const total = f.mix.reduce((n, x) => n + x.weight, 0);
  const share = f.mix.find((x) => x.kind === kind)?.weight ?? 0;
  const n = (f.rate * share) / total;
  return n >= 10 ? String(Math.round(n)) : n.toFixed(1);
}

export function renderSoakSection(f: SoakFigures): string {
  const m = f.memory;
  const judged = soakVerdict(m, f.due, f.total.answered);
  const fiveXX = Object.entries(f.total.statuses)
    .filter(([s]) => Number(s) >= 500)
    .reduce((n, [, c]) => n + c, 0);
  const verdict =
    judged.verdict === 'memory bounded'
      ? '**memory bounded**'
      : judged.verdict === 'memory growing'
        ? '**memory growing** (not bounded by the rule below)'
        : '**not judged**';
  const out: string[] = [
    '## Soak (`npm run bench:soak`)',
    '',
    `Written by \`npm run bench:soak\` on ${f.startedAt} (SOAK_SECONDS=${f.seconds}, ${f.rate} req/s, ` +
      `${f.database} database); only this section is replaced on each run.`,
    '',
    `Machine: ${f.machine.cpu} × ${f.machine.cpus}, ${f.machine.memoryGiB.toFixed(1)} GiB, ${f.machine.os}, ` +
      `Node ${f.machine.node}. Database: ${f.databaseVersion}. Load average (1/5/15 min) when the run started: ` +
      `${load(f.loadBefore)}; when it ended: ${load(f.loadAfter)}. Anything well above 0 at the start means other ` +
      'work shared the cores during the run.',
    '',
    `Verdict: ${verdict} — ${judged.reasons.join('; ')}.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| requests | ${int(f.due)} due over ${f.sendingS.toFixed(1)} s (constant arrival rate ${int(f.rate)} req/s), ` +
      `${int(f.total.sent)} sent, ${int(f.total.answered)} answered${f.unsent > 0 ? `; ${int(f.unsent)} never sent (every connection busy until the end)` : ''} |`,
    `| achieved rate | ${(f.total.answered / f.elapsedS).toFixed(1)} req/s answered (first due time to last answer, ${f.elapsedS.toFixed(1)} s) |`,
    `| answers | ${counts(f.total.statuses)} |`,
    `| 5xx | ${fiveXX === 0 ? 'none' : int(fiveXX)} |`,
    `| errors (no answer) | ${counts(f.total.errors)}${f.unanswered > 0 ? `; ${int(f.unanswered)} sent and still unanswered at the end` : ''} |`,
    `| latency, all requests (from due time) | p50 ${ms(f.total.latencyMs.p50)} ms, p99 ${ms(f.total.latencyMs.p99)} ms, max ${ms(f.total.latencyMs.max)} ms |`,
    `| send time − due time (generator lateness and waits for a free connection) | p50 ${ms(f.sendLagMs.p50)} ms, p99 ${ms(f.sendLagMs.p99)} ms, max ${ms(f.sendLagMs.max)} ms |`,
    `| server RSS: start / peak / end | ${mib(m.startMiB)} / ${mib(m.peakMiB)} / ${mib(m.endMiB)} (${m.samples} samples; VmHWM at the end ${mib(f.hwmMiB)}) |`,
    `| RSS slope, second half (least squares) | ${slope(m.secondHalf)} over ${Math.round(m.secondHalfSeconds)} s |`,
    `| V8 heap used slope, second half | ${slope(m.heapSecondHalf)} |`,
    `| runs at the end | ${counts(f.runsAtEnd)} |`,
    `| server log (warn and above) | ${counts(f.serverLog.levels)} |`,
    `| server process | ${f.diedDuringRun ? `**died during the run** (exit code ${f.exitCode})` : `ran to the end; exit code ${f.exitCode} after SIGTERM`} |`,
    '',
    '### Per minute',
    '',
    '| minute | sent | answered req/s | ≥400 | errors | p50 ms | p99 ms | max ms | RSS at end | V8 heap used at end | server CPU (cores) | longest event-loop delay |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...f.perMinute.map(
      (x) =>
        `| ${x.minute}${x.seconds < 60 ? ` (${Math.round(x.seconds)} s)` : ''} | ${int(x.sent)} | ${(x.answered / x.seconds).toFixed(1)} | ` +
        `${int(atLeast400(x))} | ${int(errors(x))} | ${ms(x.latencyMs.p50)} | ${ms(x.latencyMs.p99)} | ${ms(x.latencyMs.max)} | ` +
        `${mib(x.rssEndMiB)} | ${mib(x.heapUsedEndMiB)} | ${x.cpuShare === null ? '–' : x.cpuShare.toFixed(2)} | ` +
        `${x.lagMaxMs == null ? '–' : `${ms(x.lagMaxMs)} ms`} |`,
    ),
    '',
    '### Per kind of request',
    '',
    '| kind | request | share | sent | answers | errors | p50 ms | p99 ms | max ms |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|',
    ...f.mix.map((s) => {
      const t = f.perKind[s.kind];
      const total = f.mix.reduce((n, x) => n + x.weight, 0);
      return t
        ? `| ${s.kind} | ${s.request} | ${((100 * s.weight) / total).toFixed(1)}% | ${int(t.sent)} | ${counts(t.statuses)} | ` +
            `${int(errors(t))} | ${ms(t.latencyMs.p50)} | ${ms(t.latencyMs.p99)} | ${ms(t.latencyMs.max)} |`
        : `| ${s.kind} | ${s.request} | ${((100 * s.weight) / total).toFixed(1)}% | 0 | | | | | |`;
    }),
  ];
  const problems = Object.entries(f.problems ?? {});
  if (problems.length > 0) {
    out.push('', 'Answers ≥ 400, the first few bodies of each kind and status:', '');
    for (const [key, bodies] of problems)
      for (const body of bodies) out.push(`- ${key}: \`${body.replace(/`/g, "'").replace(/\s+/g, ' ')}\``);
  }
  if (f.serverLog.first.length > 0) {
    out.push('', 'The first warnings and errors the server logged:', '');
    for (const line of f.serverLog.first) out.push(`- \`${line.replace(/`/g, "'")}\``);
  }
  out.push(
    '',
    '### How the figures are made',
    '',
    'One process (`bench/soak.ts`) builds `dist/` if stale and starts the compiled service as an operator does ' +
      '(`node bin/svc.mjs serve`, its worker on) on a fresh database: a new embedded data dir, or with ' +
      '`--database postgres` a new `svc_soak_<random>` PostgreSQL database, dropped afterwards. A real git ' +
      'repository (`bench/repo`, pull requests 1–20 each adding a file with an `eval`) is served by the local code ' +
      'host. Over the API it creates one project with `setup: true` and waits for the setup run, then one review ' +
      `of pull request 1 (${f.findingsAtStart} finding${f.findingsAtStart === 1 ? '' : 's'}), so every read has data. ` +
      `It then sends the mix above for ${f.warmupSeconds} s (warm-up, not reported) and for SOAK_SECONDS more, ` +
      'measured. The load is open loop at a constant arrival rate: request *i* is due at t0 + i/rate and is sent ' +
      'when due whatever earlier requests are doing, on up to 32 keep-alive sockets on loopback (when all 32 hold ' +
      'a request, the next waits in the generator’s queue; what is still queued or unanswered one timeout after ' +
      'the schedule ends is reported as never sent or unanswered). Latency runs from the due time to the last byte ' +
      'of the answer, so a server that falls behind cannot hide it by slowing the client (no coordinated omission); ' +
      'a request with no byte on its socket for 10 s is an error (`timeout`). The mix is interleaved ' +
      'evenly (smooth weighted round robin), so the writes arrive at a steady rate: ' +
      `${perSecond(f, 'learning create')} learnings and ${perSecond(f, 'review create')} reviews a second ` +
      '(each review of one of the 20 pull requests, rule reviewers only, run by the in-process worker while the ' +
      'reads go on); task reads poll the review created last. Every ' +
      `${f.sampleSeconds} s the server process’s RSS (\`VmRSS\` in /proc/<pid>/status) and CPU time (/proc/<pid>/stat) ` +
      'are read, and its `/metrics` (prom-client’s process metrics) gives the V8 heap in use and the event-loop lag (its longest delay since the previous sample). ' +
      '**Memory bounded** means the least-squares slope of RSS over the second half of the run is below ' +
      `${f.limits.slopeMiBPerMin} MiB/min and the final RSS below ${int(f.limits.ceilingMiB)} MiB. At 500 req/s, ` +
      `${f.limits.slopeMiBPerMin} MiB/min is ~${Math.round((f.limits.slopeMiBPerMin * 2 ** 20) / (f.rate * 60))} bytes ` +
      'kept per request, several GiB a day: a leak of that size shows within ten minutes, while a steady ' +
      'server’s slope moves by its standard error (printed beside it). The first half is left out: it holds the ' +
      'warm-up of caches, JIT and the allocator. The ceiling is the 1 GiB target bench:review holds the server to. ' +
      `A second half shorter than ${f.limits.minJudgedSeconds} s is not judged, nor a run whose server answered ` +
      `fewer than ${DELIVERED_SHARE * 100}% of the requests due (it fell behind, so the load it carried was smaller). With PostgreSQL the figure is the ` +
      'service’s process only; the database’s own processes are not counted.',
    '',
    '```sh',
    'npm run bench:soak                                 # embedded database, 500 req/s for 10 minutes',
    'npm run bench:soak -- --database postgres          # the same on PostgreSQL at 127.0.0.1:5432',
    'SOAK_SECONDS=60 BENCH_NO_WRITE=1 npm run bench:soak   # a quick look, doc untouched',
    '```',
  );
  return out.join('\n');
}
