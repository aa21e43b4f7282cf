/**
 * `svc review` as a developer or a CI job runs it: a real process (`node bin/svc.mjs review`, the
 * TypeScript sources through tsx) on the checked-out branch of a generated repository, with no
 * flags but `--format json`. Measured from spawn to exit, with the process's peak RSS (maxRSS,
 * written at exit by ./rss-probe.mjs).
 *
 * - fresh: the first review in the repository (no ledger in the git dir yet);
 * - warm: later reviews of the same branch (the ledger exists; the median of several runs);
 * - cold compile cache: a fresh repository and tsx's compile cache empty (the first run after
 *   `npm install`), for reference.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export interface CliRun {
  wallMs: number;
  maxRssBytes: number;
  exitCode: number | null;
  findings: number;
  changedLines: number;
  files: number;
  timings: Record<string, number>;
}

export interface CliFigures {
  fresh: CliRun;
  warm: CliRun[];
  /** The median warm run. */
  warmMedian: CliRun;
  coldCache: CliRun;
}

export const CLI_TARGETS = { warmMs: 2000, freshMs: 4000, rssBytes: 300 * 2 ** 20 };

function runOnce(root: string, repo: string, env: NodeJS.ProcessEnv): Promise<CliRun> {
  const rssFile = join(mkdtempSync(join(os.tmpdir(), 'svc-bench-rss-')), 'rss');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        '--import',
        pathToFileURL(join(root, 'bench', 'review', 'rss-probe.mjs')).href,
        join(root, 'bin', 'svc.mjs'),
        'review',
        '--format',
        'json',
      ],
      { cwd: repo, env: { ...env, SVC_BENCH_RSS_FILE: rssFile }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      try {
        const review = JSON.parse(out) as {
          counts: { findings: number; changed_lines: number; files: number };
          timings: Record<string, number>;
        };
        resolve({
          wallMs,
          maxRssBytes: Number(readFileSync(rssFile, 'utf8')),
          exitCode: code,
          findings: review.counts.findings,
          changedLines: review.counts.changed_lines,
          files: review.counts.files,
          timings: Object.fromEntries(
            Object.entries(review.timings).filter(([, v]) => typeof v === 'number'),
          ),
        });
      } catch (error) {
        reject(new Error(`svc review exited ${code}: ${(error as Error).message}\n${err}`));
      } finally {
        rmSync(join(rssFile, '..'), { recursive: true, force: true });
      }
    });
  });
}

/** Runs the fresh, warm and cold-cache reviews of the checked-out branch of `repo`. */
export async function measureCli(root: string, repo: string, warmRuns = 5): Promise<CliFigures> {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  delete env.SVC_LLM_COMPAT_URL;
  const ledger = join(repo, '.git', 'svc');
  // Once before measuring, so tsx's compile cache is as warm as on a developer's machine.
  await runOnce(root, repo, env);
  rmSync(ledger, { recursive: true, force: true });
  const fresh = await runOnce(root, repo, env);
  const warm: CliRun[] = [];
  for (let i = 0; i < warmRuns; i++) warm.push(await runOnce(root, repo, env));
  const sorted = [...warm].sort((a, b) => a.wallMs - b.wallMs);
  const warmMedian = sorted[Math.floor(sorted.length / 2)] as CliRun;
  rmSync(ledger, { recursive: true, force: true });
  const tmp = mkdtempSync(join(os.tmpdir(), 'svc-bench-tsx-'));
  try {
    const coldCache = await runOnce(root, repo, { ...env, TMPDIR: tmp });
    return { fresh, warm, warmMedian, coldCache };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
