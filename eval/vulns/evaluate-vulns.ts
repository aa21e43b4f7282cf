/**
 * Part 4 of the eval: published vulnerabilities replayed at the change that brought them in.
 * Each case (cases.ts) becomes a throwaway git repository whose first commit is the fixed files
 * and whose second is the vulnerable ones; the range is reviewed as svc reviews a pull request
 * (eval/real's git-range.ts and review-range.ts: real git, real diff, every builtin skill), and
 * the case is caught when a finding of the case's class lies on one of its vulnerable lines.
 *
 * Peers run on the same vulnerable files: ESLint with eslint-plugin-security on JS/TS cases,
 * bandit on Python cases (each catches a case with any message on a vulnerable line); Go and
 * Java cases have no peer here. Each case's review is timed (the target: under 3 s).
 *
 * Targets (issue 24): recall >= 75% overall and >= 60% in every class with 3 or more cases, and
 * ahead of every peer in each language where that peer runs.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isChangedLine, type LineRange } from '../../src/core/review';
import type { MergedFinding } from '../../src/review/merge';
import { type CatalogSkill, loadCatalog } from '../../src/skills/catalog';
import { buildRangeRepository, type RangeRepository } from '../real/git-range';
import { reviewRange } from '../real/review-range';
import { duplicateIds, loadVulnCases, type VulnCase } from './case-folders';
import { banditPeer } from './peers/bandit';
import { eslintSecurityPeer } from './peers/eslint-security';
import type { Peer } from './peers/peer';

export const OVERALL_RECALL_TARGET = 0.75;
export const CLASS_RECALL_TARGET = 0.6;
/** A class is held to its target from this many cases on. */
export const CLASS_TARGET_MIN_CASES = 3;
/** Per case; reported, not a failure (the review time depends on the machine's load). */
export const REVIEW_SECONDS_TARGET = 3;

const run = promisify(execFile);

export const PEERS: Peer[] = [eslintSecurityPeer, banditPeer];

export interface CaseResult {
  case: VulnCase;
  caught: boolean;
  /** What the review reported instead, when it missed (one line each); empty when caught. */
  foundInstead: string[];
  /** Peer name -> caught; absent when the peer does not run on the case's language or is not installed. */
  peers: Record<string, boolean>;
  reviewMs: number;
  /**
   * CPU time of this process (every thread) during the review: on a shared machine the wall time
   * also counts waiting for a core, the CPU time does not.
   */
  reviewCpuMs: number;
  /** What makes the case itself wrong (a vulnerable line the change does not add, ...). */
  problems: string[];
  gaps: string[];
}

export interface Tally {
  cases: number;
  caught: number;
}

export interface Tallies {
  total: Tally;
  byClass: Record<string, Tally>;
  byLanguage: Record<string, Tally>;
}

export interface PeerSummary {
  name: string;
  /** `tool version`, or null: not installed here. */
  version: string | null;
  languages: readonly string[];
  tallies: Tallies;
}

export interface VulnsReport {
  results: CaseResult[];
  svc: Tallies;
  peers: PeerSummary[];
  /** Malformed case folders and duplicate ids. */
  errors: string[];
  timing: { medianMs: number; maxMs: number; slowest: string | null; medianCpuMs: number; maxCpuMs: number };
}

export const recall = (t: Tally) => (t.cases === 0 ? 0 : t.caught / t.cases);

const emptyTallies = (): Tallies => ({ total: { cases: 0, caught: 0 }, byClass: {}, byLanguage: {} });

function slot(map: Record<string, Tally>, key: string): Tally {
  const existing = map[key];
  if (existing) return existing;
  const created = { cases: 0, caught: 0 };
  map[key] = created;
  return created;
}

function count(tallies: Tallies, c: VulnCase, caught: boolean): void {
  for (const t of [tallies.total, slot(tallies.byClass, c.class), slot(tallies.byLanguage, c.language)]) {
    t.cases++;
    if (caught) t.caught++;
  }
}

/** Every place a finding stands for (a grouped idiom lists several). */
const places = (f: MergedFinding) => f.locations ?? [{ start: f.line, end: f.endLine }];

function onVulnerableLine(c: VulnCase, f: MergedFinding): boolean {
  return c.vulnerable.some(
    (v) => v.path === f.path && places(f).some((p) => v.lines.some((n) => n >= p.start && n <= p.end)),
  );
}

const ruleClass = (rule: string) => rule.split('/').pop() ?? rule;
const describe = (f: MergedFinding) => `${f.rule} ${f.severity} at ${f.path}:${f.line}`;

/** What a missed case's review reported, most telling first. */
function foundInstead(c: VulnCase, findings: MergedFinding[]): string[] {
  const onLines = findings.filter((f) => onVulnerableLine(c, f));
  const sameClass = findings.filter((f) => ruleClass(f.rule) === c.class && !onLines.includes(f));
  const out = [
    ...onLines.map((f) => `on a vulnerable line: ${describe(f)}${f.dismissal ? ' (dismissed inline)' : ''}`),
    ...sameClass.map((f) => `${c.class} elsewhere: ${describe(f)}`),
  ];
  const others = findings.filter((f) => !onLines.includes(f) && !sameClass.includes(f));
  if (others.length > 0)
    out.push(
      `${others.length} other finding(s) in the change: ${others.slice(0, 3).map(describe).join('; ')}${others.length > 3 ? '; ...' : ''}`,
    );
  return out.length > 0 ? out : ['no finding in the change'];
}

/** The case's vulnerable lines that are not in its head files or not added by the change. */
async function caseProblems(
  c: VulnCase,
  changed: readonly { path: string; changedLines: LineRange[] }[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const v of c.vulnerable) {
    const text = await readFile(join(c.headDir, v.path), 'utf8');
    const lineCount = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const diffFile = changed.find((f) => f.path === v.path);
    if (!diffFile) {
      problems.push(`${v.path} is not changed by the case's change`);
      continue;
    }
    for (const n of v.lines) {
      if (n > lineCount)
        problems.push(`${v.path}:${n} is past the end of the head file (${lineCount} lines)`);
      else if (!isChangedLine(diffFile, n)) problems.push(`${v.path}:${n} is not a line the change adds`);
    }
  }
  return problems;
}

/** The case as a two-commit repository under `reposDir` (base: fixed files, head: vulnerable ones). */
async function caseRange(
  reposDir: string,
  c: VulnCase,
): Promise<{ fullName: string; range: RangeRepository }> {
  const fullName = `vulns/${c.id}`;
  // Every involved file new in the vulnerable version: the base commit is empty.
  const emptyDir = join(reposDir, '.empty-base');
  await mkdir(emptyDir, { recursive: true });
  const range = await buildRangeRepository(reposDir, fullName, c.baseDir ?? emptyDir, c.headDir, {
    base: `${c.id}: fixed (${c.project})`,
    head: `${c.id}: vulnerable (${c.project})`,
  });
  return { fullName, range };
}

/** Lines `git diff` says the change adds to one file (base absent: every line of the head file). */
async function addedLines(c: VulnCase, path: string): Promise<LineRange[]> {
  const base = c.baseDir ? join(c.baseDir, path) : null;
  const args = ['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv', '-U0'];
  let stdout = '';
  try {
    ({ stdout } = await run(
      'git',
      [...args, '--', base && existsSync(base) ? base : '/dev/null', join(c.headDir, path)],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    ));
  } catch (error) {
    // `git diff --no-index` exits 1 when the files differ.
    stdout = (error as { stdout?: string }).stdout ?? '';
  }
  const ranges: LineRange[] = [];
  for (const m of stdout.matchAll(/^@@ -\S+ \+(\d+)(?:,(\d+))? @@/gm)) {
    const start = Number(m[1]);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    if (count > 0) ranges.push({ start, end: start + count - 1 });
  }
  return ranges;
}

/**
 * What is wrong with each case's change, without reviewing it: case id -> problems, for every
 * case that has any. Uses `git diff --no-index` file by file (the same diff algorithm as the
 * review's `git diff`, without building a repository per case).
 */
export async function checkVulnCases(cases: VulnCase[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const c of cases) {
    const files = [];
    for (const path of new Set(c.vulnerable.map((v) => v.path))) {
      const changedLines = await addedLines(c, path);
      if (changedLines.length > 0) files.push({ path, changedLines });
    }
    const problems = await caseProblems(c, files);
    if (problems.length > 0) out[c.id] = problems;
  }
  return out;
}

async function runPeers(
  c: VulnCase,
  installed: Map<Peer, string | null>,
): Promise<{ peers: Record<string, boolean>; gaps: string[] }> {
  const peers: Record<string, boolean> = {};
  const gaps: string[] = [];
  const paths = [...new Set(c.vulnerable.map((v) => v.path))];
  for (const peer of PEERS) {
    if (!peer.languages.includes(c.language) || !installed.get(peer)) continue;
    const run = await peer.flag(c.headDir, paths);
    gaps.push(...run.gaps.map((g) => `${peer.name}: ${g}`));
    peers[peer.name] = c.vulnerable.some((v) => v.lines.some((n) => run.flagged.get(v.path)?.has(n)));
  }
  return { peers, gaps };
}

async function evaluateCase(
  reposDir: string,
  c: VulnCase,
  skills: CatalogSkill[],
  installed: Map<Peer, string | null>,
): Promise<CaseResult> {
  const { fullName, range } = await caseRange(reposDir, c);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const review = await reviewRange(reposDir, fullName, range, skills);
  const cpu = process.cpuUsage(cpuBefore);
  const reviewMs = performance.now() - started;
  const reviewCpuMs = (cpu.user + cpu.system) / 1000;
  const findings = review.findings;
  const caught = findings.some(
    (f) => !f.dismissal && ruleClass(f.rule) === c.class && onVulnerableLine(c, f),
  );
  const { peers, gaps } = await runPeers(c, installed);
  return {
    case: c,
    caught,
    foundInstead: caught ? [] : foundInstead(c, findings),
    peers,
    reviewMs,
    reviewCpuMs,
    problems: await caseProblems(c, review.diff.files),
    gaps: [...review.gaps, ...gaps],
  };
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export async function evaluateVulns(
  options: {
    cases?: VulnCase[];
    /** Only the cases with these ids (an unknown id is an error in the report). */
    only?: string[];
    skills?: CatalogSkill[];
    peers?: boolean;
  } = {},
): Promise<VulnsReport> {
  const loaded = options.cases ? { cases: options.cases, errors: [] } : await loadVulnCases();
  if (options.only) {
    const known = new Set(loaded.cases.map((c) => c.id));
    loaded.errors.push(...options.only.filter((id) => !known.has(id)).map((id) => `${id}: no such case`));
    loaded.cases = loaded.cases.filter((c) => options.only?.includes(c.id));
  }
  const skills = options.skills ?? (await loadCatalog()).filter((s) => s.engine !== 'llm');
  const installed = new Map<Peer, string | null>();
  for (const peer of PEERS) installed.set(peer, options.peers === false ? null : await peer.version());
  const report: VulnsReport = {
    results: [],
    svc: emptyTallies(),
    peers: PEERS.map((p) => ({
      name: p.name,
      version: installed.get(p) ?? null,
      languages: p.languages,
      tallies: emptyTallies(),
    })),
    errors: [...loaded.errors, ...duplicateIds(loaded.cases).map((d) => `id used twice: ${d}`)],
    timing: { medianMs: 0, maxMs: 0, slowest: null, medianCpuMs: 0, maxCpuMs: 0 },
  };
  const reposDir = await mkdtemp(join(tmpdir(), 'svc-eval-vulns-'));
  try {
    for (const c of loaded.cases) {
      const result = await evaluateCase(reposDir, c, skills, installed);
      report.results.push(result);
      count(report.svc, c, result.caught);
      for (const summary of report.peers)
        if (summary.name in result.peers) count(summary.tallies, c, result.peers[summary.name] === true);
    }
  } finally {
    await rm(reposDir, { recursive: true, force: true });
  }
  const times = report.results.map((r) => r.reviewMs);
  const slowest = report.results.reduce<CaseResult | null>(
    (a, r) => (a && a.reviewMs >= r.reviewMs ? a : r),
    null,
  );
  report.timing = {
    medianMs: median(times),
    maxMs: slowest?.reviewMs ?? 0,
    slowest: slowest?.case.id ?? null,
    medianCpuMs: median(report.results.map((r) => r.reviewCpuMs)),
    maxCpuMs: Math.max(0, ...report.results.map((r) => r.reviewCpuMs)),
  };
  return report;
}

/** What keeps part 4 from its targets, one line each (empty: targets met). */
export function vulnsFailures(report: VulnsReport): string[] {
  const out: string[] = [...report.errors.map((e) => `malformed case: ${e}`)];
  for (const r of report.results) for (const p of r.problems) out.push(`malformed case: ${r.case.id}: ${p}`);
  const total = report.svc.total;
  if (total.cases === 0) return [...out, 'no case'];
  if (recall(total) < OVERALL_RECALL_TARGET)
    out.push(
      `recall ${pct(recall(total))} overall (${total.caught}/${total.cases}; target >= ${pct(OVERALL_RECALL_TARGET)})`,
    );
  for (const [name, t] of Object.entries(report.svc.byClass).sort())
    if (t.cases >= CLASS_TARGET_MIN_CASES && recall(t) < CLASS_RECALL_TARGET)
      out.push(
        `recall ${pct(recall(t))} in ${name} (${t.caught}/${t.cases}; target >= ${pct(CLASS_RECALL_TARGET)})`,
      );
  for (const peer of report.peers) {
    if (!peer.version) continue;
    for (const [language, t] of Object.entries(peer.tallies.byLanguage).sort()) {
      const ours = report.svc.byLanguage[language] ?? { cases: 0, caught: 0 };
      if (!(recall(ours) > recall(t)))
        out.push(
          `${language}: svc ${pct(recall(ours))} (${ours.caught}/${ours.cases}) is not ahead of ${peer.name} ${pct(recall(t))} (${t.caught}/${t.cases})`,
        );
    }
  }
  return out;
}

const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
