/**
 * Cold start: how long `node bin/svc.mjs serve` takes from spawn to its first healthy
 * `/healthz`, the way an operator restarts it. Three cases: a new embedded data dir (initdb,
 * migrations, the first workspace key), an existing one, and PostgreSQL (an existing, migrated
 * database). Each case is started BENCH_START_RUNS times (default 5); the worker runs as it does
 * by default. Run alone with `npm run bench:start`; `npm run bench:api` runs it too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { freePort } from '../test/helpers/net';
import { writeSection } from './review/doc-section';

const ROOT = join(import.meta.dirname, '..');
const SVC = join(ROOT, 'bin', 'svc.mjs');
const RUNS = Number(process.env.BENCH_START_RUNS ?? 5);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/test';
/** Targets of issue 12.2, on this kind of machine. */
const TARGET_MS = { new: 5_000, existing: 1_500 } as const;

export interface StartCase {
  name: string;
  target: number | null;
  ms: number[];
  skipped?: string;
}

/** Spawns `svc serve`, waits for a 200 from /healthz, stops it; returns the milliseconds to healthy. */
async function timeOneStart(env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [SVC, 'serve', '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc exited ${child.exitCode} before healthy: ${stderr}`);
      const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (healthy) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error(`svc not healthy after 60 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function embeddedCases(): Promise<StartCase[]> {
  const fresh: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(os.tmpdir(), 'svc-start-new-'));
    try {
      fresh.push(await timeOneStart({ SVC_DATA_DIR: join(dir, 'data') }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-start-existing-'));
  const existing: number[] = [];
  try {
    await timeOneStart({ SVC_DATA_DIR: join(dir, 'data') });
    for (let i = 0; i < RUNS; i++) existing.push(await timeOneStart({ SVC_DATA_DIR: join(dir, 'data') }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    { name: 'embedded, new data dir', target: TARGET_MS.new, ms: fresh },
    { name: 'embedded, existing data dir', target: TARGET_MS.existing, ms: existing },
  ];
}

async function postgresCase(): Promise<StartCase> {
  const name = 'PostgreSQL, migrated database';
  const database = `svc_start_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await admin.connect();
  } catch (error) {
    return {
      name,
      target: null,
      ms: [],
      skipped: `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(error as Error).message}`,
    };
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  try {
    await admin.query(`CREATE DATABASE ${database}`);
    const env = { DATABASE_URL: url.toString() };
    await timeOneStart(env);
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) ms.push(await timeOneStart(env));
    return { name, target: null, ms };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)] ?? Number.NaN;
const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')} ms`;

/**
 * Node's own start and exit (`node -e 0`): the floor under every case, and a reading of how fast
 * the machine is that day, so figures from different days can be compared (the same build
 * has measured 2.2× apart on two days of the same CPU model).
 */
async function bareNodeCase(): Promise<StartCase> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => child.on('exit', resolve));
    ms.push(performance.now() - started);
  }
  return { name: 'Node itself (`node -e 0`), for scale', target: null, ms };
}

export async function measureColdStarts(): Promise<StartCase[]> {
  return [await bareNodeCase(), ...(await embeddedCases()), await postgresCase()];
}

export function renderStartSection(cases: StartCase[]): string {
  const cpus = os.cpus();
  const rows = cases.map((c) => {
    if (c.skipped) return `| ${c.name} | skipped: ${c.skipped} | | | |`;
    const verdict = c.target === null ? 'no target' : median(c.ms) < c.target ? 'met' : '**missed**';
    return `| ${c.name} | ${ms(median(c.ms))} | ${ms(Math.max(...c.ms))} | ${c.target === null ? '—' : `< ${ms(c.target)}`} | ${verdict} |`;
  });
  return [
    '## Cold start (`npm run bench:start`, also run by `bench:api`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus[0]?.model ?? 'unknown'} × ${cpus.length}, ` +
      `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, a shared machine. From spawning ` +
      '`node bin/svc.mjs serve` (the compiled build, worker on) to the first 200 from `/healthz`, ' +
      `${RUNS} starts per case (the existing cases after one start that created them).`,
    '',
    '| case | median | max | target | |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const cases = await measureColdStarts();
  for (const c of cases)
    console.log(
      c.skipped
        ? `${c.name}: skipped (${c.skipped})`
        : `${c.name}: ${c.ms.map((x) => Math.round(x)).join(', ')} ms`,
    );
  if (process.env.BENCH_NO_WRITE !== '1') {
    writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'start', renderStartSection(cases));
    console.log('wrote the start section of docs/benchmarks.md');
  }
}
