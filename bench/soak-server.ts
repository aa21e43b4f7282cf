/**
 * The server side of `npm run bench:soak`: the compiled `svc serve` as a child process, as an
 * operator runs it, and what it looks like from outside: its resident memory and CPU time from
 * /proc, its V8 heap, event-loop lag and run counts from its own `/metrics` (prom-client's
 * default process metrics), and the warnings and errors it logs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/helpers/net';

const ROOT = join(import.meta.dirname, '..');
const MiB = 1024 * 1024;
/** Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ) on every common build. */
const TICKS_PER_SECOND = 100;

export interface ServerLog {
  /** Log lines by pino level name (warn, error, fatal), and `other` for non-JSON lines. */
  levels: Record<string, number>;
  /** The first few warnings and errors, as logged (message and error text), for the notes. */
  first: string[];
}

export interface Svc {
  port: number;
  pid: number;
  child: ChildProcess;
  log: ServerLog;
  /** SIGTERM, then the exit code once it has exited (SIGKILL after `graceMs`). */
  stop: (graceMs?: number) => Promise<number | null>;
}

const LEVELS: Record<number, string> = { 40: 'warn', 50: 'error', 60: 'fatal' };

/** `svc serve` on a free loopback port in `cwd`, with `env` over this process's and `args` after serve's own. */
export async function startSvc(env: Record<string, string>, cwd: string, args: string[] = []): Promise<Svc> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'svc.mjs'), 'serve', '--host', '127.0.0.1', '--port', String(port), ...args],
    { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const log: ServerLog = { levels: {}, first: [] };
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      let level = 'other';
      let text = line;
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        level = LEVELS[entry.level ?? 0] ?? `level ${entry.level}`;
        text = [entry.msg, entry.err?.message].filter(Boolean).join(': ');
      } catch {
        // not a pino line (a Node warning, a crash's stack): kept as it is
      }
      log.levels[level] = (log.levels[level] ?? 0) + 1;
      if (log.first.length < 10) log.first.push(`${level}: ${text.slice(0, 300)}`);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (graceMs = 30_000) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  if (child.pid === undefined) throw new Error('svc serve did not start');
  return { port, pid: child.pid, child, log, stop };
}

export async function waitHealthy(svc: Svc, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (svc.child.exitCode !== null)
      throw new Error(`svc serve exited with ${svc.child.exitCode}: ${svc.log.first.join(' | ')}`);
    const ok = await fetch(`http://127.0.0.1:${svc.port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`svc serve was not healthy within ${timeoutMs / 1000} s`);
}

export interface ProcessSample {
  rssMiB: number;
  /** Peak RSS since the process started (VmHWM). */
  hwmMiB: number;
  /** User + system CPU time of the process so far, seconds. */
  cpuS: number;
  heapUsedMiB: number | null;
  heapTotalMiB: number | null;
  /** Memory V8 accounts outside its heap (buffers, and PGlite's WebAssembly memory). */
  externalMiB: number | null;
  /** prom-client's event-loop lag p99 and max since the previous scrape, ms. */
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  /** Runs by status at scrape time (`svc_runs`). */
  runs: Record<string, number>;
}

/** A process's resident memory (VmRSS) or its peak (VmHWM), MiB, from /proc. */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) / 1024;
}

function procCpuSeconds(pid: number): number {
  // Fields after the command (which is in parentheses and may hold spaces): state is field 3,
  // utime and stime are fields 14 and 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** `name{labels} value` lines of a Prometheus text exposition, keyed by `name{labels}`. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

export async function sampleProcess(svc: Svc): Promise<ProcessSample> {
  const sample: ProcessSample = {
    rssMiB: procStatus(svc.pid, 'VmRSS'),
    hwmMiB: procStatus(svc.pid, 'VmHWM'),
    cpuS: procCpuSeconds(svc.pid),
    heapUsedMiB: null,
    heapTotalMiB: null,
    externalMiB: null,
    lagP99Ms: null,
    lagMaxMs: null,
    runs: {},
  };
  try {
    const res = await fetch(`http://127.0.0.1:${svc.port}/metrics`, { signal: AbortSignal.timeout(4_000) });
    const metrics = parseMetrics(await res.text());
    const mib = (name: string) => {
      const v = metrics.get(name);
      return v === undefined ? null : v / MiB;
    };
    sample.heapUsedMiB = mib('svc_nodejs_heap_size_used_bytes');
    sample.heapTotalMiB = mib('svc_nodejs_heap_size_total_bytes');
    sample.externalMiB = mib('svc_nodejs_external_memory_bytes');
    const seconds = (name: string) => {
      const v = metrics.get(name);
      return v === undefined ? null : v * 1000;
    };
    sample.lagP99Ms = seconds('svc_nodejs_eventloop_lag_p99_seconds');
    sample.lagMaxMs = seconds('svc_nodejs_eventloop_lag_max_seconds');
    for (const [key, value] of metrics) {
      const status = /^svc_runs\{status="(\w+)"\}$/.exec(key)?.[1];
      if (status) sample.runs[status] = value;
    }
  } catch {
    // /metrics did not answer in time: the /proc figures still stand, the rest stays null
  }
  return sample;
}
