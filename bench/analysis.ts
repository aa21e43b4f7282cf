/**
 * `npm run bench:analysis`: how the builtin analysis scales with the sinks of one file, and whether
 * the service keeps answering while it reviews the largest files it reads.
 *
 * 1. Scaling: for each language with a flow adapter and each worst-case shape
 *    (bench/analysis/worst-case.ts), one file with N sinks (BENCH_ANALYSIS_NS, default
 *    1000,2000,4000) reviewed by the security skill (`runBuiltinSkill`, in this process): wall time,
 *    findings and gaps. A file that reaches the budget (BENCH_ANALYSIS_BUDGET_MS, default 10000)
 *    stops there with a `file_analysis_budget` gap, so a slow shape cannot hold the bench for long.
 * 2. Three files of just under MAX_FILE_BYTES (the `functions` shape), reviewed through the real
 *    service on each engine (BENCH_ENGINES, default "pglite,postgres"; PostgreSQL at
 *    BENCH_PG_ADMIN_URL) by bench/review/child.ts's `runChild`, each engine in a process of its
 *    own as an operator runs it (bench/review/child-process.ts), with /healthz probed every
 *    1000/BENCH_PROBE_RATE ms (default 50/s) from another process: p50, p99, max.
 *
 * BENCH_ANALYSIS_PARTS (default "scaling,service") picks the parts. Prints a Markdown section for
 * docs/benchmarks.md at the end.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { snippetDiffFile } from '../eval/evaluate';
import { MAX_FILE_BYTES, runBuiltinSkill } from '../src/reviewers/builtin/engine';
import { catalogSkill } from '../src/skills/catalog';
import {
  type AnalysisLanguage,
  BENCH_SHAPES,
  EXTENSION,
  LANGUAGES,
  type Shape,
  worstCase,
  worstCaseOfSize,
} from './analysis/worst-case';
import { withAdmin } from './pg-admin';
import type { ChildResult, EngineKind } from './review/child';
import { runChildProcess } from './review/child-process';

const NS = (process.env.BENCH_ANALYSIS_NS || '1000,2000,4000').split(',').map(Number);
const BUDGET_MS = Number(process.env.BENCH_ANALYSIS_BUDGET_MS || 10_000);
const PARTS = (process.env.BENCH_ANALYSIS_PARTS || 'scaling,service').split(',');
const LANGS = (process.env.BENCH_ANALYSIS_LANGUAGES || LANGUAGES.join(',')).split(',') as AnalysisLanguage[];
const ENGINES = (process.env.BENCH_ENGINES || 'pglite,postgres').split(',') as EngineKind[];
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE || 50);
const TARGET_P99_MS = 100;

interface ScalingRow {
  language: AnalysisLanguage;
  shape: Shape;
  n: number;
  bytes: number;
  ms: number;
  findings: number;
  gaps: string[];
}

async function scaling(): Promise<ScalingRow[]> {
  const skill = await catalogSkill('security');
  if (!skill) throw new Error('no security skill');
  const rows: ScalingRow[] = [];
  for (const language of LANGS) {
    for (const shape of BENCH_SHAPES) {
      for (const n of NS) {
        const code = worstCase(language, shape, n);
        const file = {
          diff: snippetDiffFile(`src/handlers.${EXTENSION[language]}`, code, null),
          content: code,
        };
        const started = performance.now();
        const result = await runBuiltinSkill(skill, [file], {
          reviewerId: 'security',
          signal: new AbortController().signal,
          fileBudgetMs: BUDGET_MS,
        });
        const row: ScalingRow = {
          language,
          shape,
          n,
          bytes: code.length,
          ms: performance.now() - started,
          findings: result.findings.length,
          gaps: result.gaps.map((g) => g.code),
        };
        rows.push(row);
        console.log(
          `${language} ${shape} N=${n} (${row.bytes} B): ${Math.round(row.ms)} ms, ${row.findings} findings${row.gaps.length ? `, gaps ${row.gaps.join(' ')}` : ''}`,
        );
      }
    }
  }
  return rows;
}

/** A repository whose head adds three JavaScript files of just under MAX_FILE_BYTES each. */
function threeFileRepo(reposDir: string): { base: string; head: string; bytes: number[] } {
  const dir = join(reposDir, 'bench', 'analysis');
  mkdirSync(join(dir, 'src'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'bench',
        GIT_AUTHOR_EMAIL: 'bench@example.com',
        GIT_COMMITTER_NAME: 'bench',
        GIT_COMMITTER_EMAIL: 'bench@example.com',
        GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
        GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
      },
    }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# analysis bench\n');
  git('add', '.');
  git('commit', '-q', '-m', 'base');
  const base = git('rev-parse', 'HEAD');
  const bytes: number[] = [];
  for (const name of ['a', 'b', 'c']) {
    // One function a line: the diff reads at most 20,000 changed lines of a file (codehost limits).
    const compact = worstCaseOfSize('javascript', MAX_FILE_BYTES + 100_000)
      .replace(/\n {2}/g, ' ')
      .replace(/\n\}/g, ' }')
      .replace(/function h/g, `function ${name}`);
    const code = compact.slice(0, compact.lastIndexOf('\n', MAX_FILE_BYTES - 1) + 1);
    bytes.push(code.length);
    writeFileSync(join(dir, 'src', `${name}.js`), code);
  }
  git('add', '.');
  git('commit', '-q', '-m', 'three large files');
  return { base, head: git('rev-parse', 'HEAD'), bytes };
}

interface ServiceRow {
  engine: EngineKind;
  result: ChildResult;
}

async function service(): Promise<{ rows: ServiceRow[]; bytes: number[] }> {
  const temp = mkdtempSync(join(os.tmpdir(), 'svc-bench-analysis-'));
  const reposDir = join(temp, 'repos');
  const { base, head, bytes } = threeFileRepo(reposDir);
  const rows: ServiceRow[] = [];
  try {
    for (const engine of ENGINES) {
      const dbName = engine === 'postgres' ? `svc_bench_${randomBytes(5).toString('hex')}` : null;
      try {
        const result = await runChildProcess({
          engine,
          reposDir,
          dataDir: join(temp, `data-${engine}`),
          repo: 'bench/analysis',
          base,
          head,
          pgAdminUrl: PG_ADMIN_URL,
          dbName,
          bootstrapKey: `svc_ws_${randomBytes(16).toString('hex')}`,
          probeRate: PROBE_RATE,
        });
        rows.push({ engine, result });
        // Where the service stopped answering: the run's step when each stall began.
        for (const stall of result.responsiveness?.stalls ?? [])
          console.log(
            `  stall ${Math.round(stall.fromMs)}-${Math.round(stall.toMs)} ms in ${stall.step}: worst ${stall.worstMs} ms`,
          );
        const h = result.responsiveness?.probe?.healthz;
        const lag = result.responsiveness?.lag;
        console.log(
          result.skipped
            ? `${engine}: skipped (${result.skipped})`
            : `${engine}: ${result.status}${result.error ? ` (${JSON.stringify(result.error)})` : ''} in ${Math.round(result.wallMs)} ms, ${result.findings} findings, gaps ${result.gaps.map((g) => g.code).join(' ') || 'none'}; /healthz p50 ${h?.p50_ms?.toFixed(1)} ms, p99 ${h?.p99_ms?.toFixed(1)} ms, max ${h?.max_ms?.toFixed(1)} ms (${h?.answered} answered); event-loop lag p99 ${lag?.p99Ms.toFixed(1)} ms, max ${lag?.maxMs.toFixed(1)} ms`,
        );
      } finally {
        if (dbName)
          await withAdmin(PG_ADMIN_URL, (c) =>
            c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
          ).catch(() => {});
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return { rows, bytes };
}

function machine(): string {
  let model = os.cpus()[0]?.model ?? 'unknown CPU';
  try {
    model =
      execFileSync('lscpu', { encoding: 'utf8' })
        .match(/Model name:\s*(.+)/)?.[1]
        ?.trim() ?? model;
  } catch {}
  return `${model}, ${os.cpus().length} cores (shared), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

function render(rows: ScalingRow[], svc: { rows: ServiceRow[]; bytes: number[] } | null): string {
  const out = [
    '## Analysis: bounded and linear (`npm run bench:analysis`)',
    '',
    `Machine: ${machine()}.`,
    '',
  ];
  if (rows.length > 0) {
    out.push(
      `One file with N sinks per shape, reviewed by the security skill in-process (bench/analysis/worst-case.ts; budget ${BUDGET_MS} ms per file).`,
      '',
      `| language | shape | ${NS.map((n) => `N=${n}`).join(' | ')} |`,
      `|---|---|${NS.map(() => '---:').join('|')}|`,
    );
    for (const language of LANGS) {
      for (const shape of BENCH_SHAPES) {
        const cells = NS.map((n) => {
          const r = rows.find((x) => x.language === language && x.shape === shape && x.n === n);
          if (!r) return '';
          const cut = r.gaps.includes('file_analysis_budget') ? ` (budget: ${r.findings}/${n})` : '';
          return `${(r.ms / 1000).toFixed(2)} s${cut}`;
        });
        out.push(`| ${language} | ${shape} | ${cells.join(' | ')} |`);
      }
    }
    out.push('');
  }
  if (svc) {
    out.push(
      `Three JavaScript files of ${svc.bytes.map((b) => b.toLocaleString('en')).join(', ')} bytes (the \`functions\` shape, every function a sink) reviewed through the service; /healthz probed at ${PROBE_RATE}/s from another process (target p99 < ${TARGET_P99_MS} ms).`,
      '',
      '| engine | run | wall | findings | gaps | /healthz p50 | p99 | max | answered | loop lag p99 | loop lag max |',
      '|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const { engine, result } of svc.rows) {
      if (result.skipped) {
        out.push(`| ${engine} | skipped: ${result.skipped} | | | | | | | | | |`);
        continue;
      }
      const h = result.responsiveness.probe?.healthz;
      const lag = result.responsiveness.lag;
      const ms = (x: number | null | undefined) =>
        x === null || x === undefined ? '-' : `${x.toFixed(1)} ms`;
      out.push(
        `| ${engine} | ${result.status} | ${(result.wallMs / 1000).toFixed(1)} s | ${result.findings} | ${result.gaps.map((g) => g.code).join(', ') || 'none'} | ${ms(h?.p50_ms)} | ${ms(h?.p99_ms)} | ${ms(h?.max_ms)} | ${h?.answered ?? 0} | ${ms(lag.p99Ms)} | ${ms(lag.maxMs)} |`,
      );
    }
  }
  return out.join('\n');
}

const rows = PARTS.includes('scaling') ? await scaling() : [];
const svc = PARTS.includes('service') ? await service() : null;
console.log(`\n${render(rows, svc)}\n`);
process.exit(0);
