/**
 * Part 3 of the eval: the builtin rules on real code nobody here wrote. For each pinned project
 * (repos.ts) a throwaway git repository under the OS temp dir holds version A as the base commit
 * and version B as the head; the range is reviewed as svc reviews it (review-range.ts) and every
 * finding is looked up in the labels (labels.yml).
 *
 * Figures, per project and in total:
 * - changed lines: lines the range adds at head (the lines findings can be on), in all files;
 * - production lines: the same in production code: role `production`, a language the rules read,
 *   not a `.d.ts` declaration file;
 * - findings (not dismissed inline), per 1,000 changed lines, and the share labelled actionable;
 * - non-actionable findings (anywhere) per 5,000 production lines, and non-actionable P0s.
 * Target (issue 9): at most 1 non-actionable finding per 5,000 production lines in total, no
 * non-actionable P0, and no finding without a label.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Severity } from '../../src/core/review';
import type { MergedFinding } from '../../src/review/merge';
import { ruleLanguageOf } from '../../src/reviewers/builtin/languages';
import { type CatalogSkill, loadCatalog } from '../../src/skills/catalog';
import { corpusPackage } from '../shared/corpus-cache';
import { buildRangeRepository } from './git-range';
import { keyString, type Label, type LabelKey, type LabelSet, loadLabels } from './labels';
import { REAL_REPOSITORIES, type RealRepository } from './repos';
import { reviewRange } from './review-range';

/** Non-actionable findings allowed per 5,000 changed lines of production code. */
export const NON_ACTIONABLE_PER_5K_TARGET = 1;

export interface Figures {
  changedLines: number;
  productionLines: number;
  findings: number;
  /** Findings an inline `svc-ignore` dismissed (not counted as findings). */
  dismissed: number;
  actionable: number;
  nonActionable: number;
  unlabelled: number;
  nonActionableP0: number;
}

export interface RepositoryFigures extends Figures {
  name: string;
  /** `pkg@version` of each end. */
  base: string;
  head: string;
  files: number;
}

export interface RealFinding {
  repository: string;
  key: LabelKey;
  line: number;
  severity: Severity;
  title: string;
  role: string;
  label: Label | null;
  /** The flagged line with two lines around it, for stubs and reports. */
  context: string[];
}

export interface RealReport {
  repositories: RepositoryFigures[];
  total: Figures;
  findings: RealFinding[];
  byRule: Record<string, { findings: number; actionable: number; nonActionable: number; unlabelled: number }>;
  /** Labels no current finding has (the rules changed); kept, as they still describe the line. */
  staleLabels: Label[];
  gaps: string[];
}

const zero = (): Figures => ({
  changedLines: 0,
  productionLines: 0,
  findings: 0,
  dismissed: 0,
  actionable: 0,
  nonActionable: 0,
  unlabelled: 0,
  nonActionableP0: 0,
});

export const per1k = (f: Figures) => (f.changedLines === 0 ? 0 : (f.findings / f.changedLines) * 1000);
export const nonActionablePer5k = (f: Figures) =>
  f.productionLines === 0
    ? f.nonActionable === 0
      ? 0
      : Number.POSITIVE_INFINITY
    : (f.nonActionable / f.productionLines) * 5000;
export const actionableShare = (f: Figures) => (f.findings === 0 ? null : f.actionable / f.findings);

const isProductionCode = (path: string, role: string | undefined) =>
  (role ?? 'production') === 'production' && ruleLanguageOf(path) !== null && !/\.d\.[cm]?ts$/.test(path);

function contextOf(text: string | null, line: number): string[] {
  const lines = text?.split('\n') ?? [];
  const out: string[] = [];
  for (let n = Math.max(1, line - 2); n <= Math.min(lines.length, line + 2); n++)
    out.push(`${String(n).padStart(5)}${n === line ? '>' : ' '} ${(lines[n - 1] ?? '').slice(0, 140)}`);
  return out;
}

async function reviewRepository(
  reposDir: string,
  repo: RealRepository,
  skills: CatalogSkill[],
  labels: LabelSet,
  used: Set<string>,
): Promise<{ figures: RepositoryFigures; findings: RealFinding[]; gaps: string[] }> {
  const [base, head] = await Promise.all([corpusPackage(repo.base), corpusPackage(repo.head)]);
  const range = await buildRangeRepository(reposDir, `eval/${repo.name}`, base.dir, head.dir, {
    base: `${base.name}@${base.version}`,
    head: `${head.name}@${head.version}`,
  });
  const review = await reviewRange(reposDir, `eval/${repo.name}`, range, skills);
  const figures: RepositoryFigures = {
    name: repo.name,
    base: `${base.name}@${base.version}`,
    head: `${head.name}@${head.version}`,
    files: review.diff.files.length,
    ...zero(),
  };
  const roles = new Map(review.files.map((f) => [f.diff.path, f.role]));
  for (const file of review.diff.files) {
    if (file.change === 'deleted') continue;
    figures.changedLines += file.additions;
    // Excluded by the repository's configuration: not reviewed, so not in the denominator.
    if (roles.has(file.path) && isProductionCode(file.path, roles.get(file.path)))
      figures.productionLines += file.additions;
  }
  const findings: RealFinding[] = [];
  for (const f of review.findings as MergedFinding[]) {
    if (f.dismissal) {
      figures.dismissed++;
      continue;
    }
    const text = review.text.get(f.path) ?? null;
    const lineText = text?.split('\n')[f.line - 1] ?? '';
    const key: LabelKey = { package: repo.name, path: f.path, rule: f.rule, line: lineText };
    const label = labels.byKey.get(keyString(key)) ?? null;
    if (label) used.add(keyString(key));
    figures.findings++;
    if (!label) figures.unlabelled++;
    else if (label.actionable) figures.actionable++;
    else {
      figures.nonActionable++;
      if (f.severity === 'P0') figures.nonActionableP0++;
    }
    findings.push({
      repository: repo.name,
      key,
      line: f.line,
      severity: f.severity,
      title: f.title,
      role: roles.get(f.path) ?? 'production',
      label,
      context: contextOf(text, f.line),
    });
  }
  return { figures, findings, gaps: review.gaps.map((g) => `${repo.name}: ${g}`) };
}

export async function evaluateReal(
  options: { repositories?: RealRepository[]; skills?: CatalogSkill[]; labels?: LabelSet } = {},
): Promise<RealReport> {
  const repositories = options.repositories ?? REAL_REPOSITORIES;
  const skills = options.skills ?? (await loadCatalog()).filter((s) => s.engine !== 'llm');
  const labels = options.labels ?? (await loadLabels());
  const reposDir = await mkdtemp(join(tmpdir(), 'svc-eval-real-'));
  const used = new Set<string>();
  const report: RealReport = {
    repositories: [],
    total: zero(),
    findings: [],
    byRule: {},
    staleLabels: [],
    gaps: [],
  };
  try {
    for (const repo of repositories) {
      const { figures, findings, gaps } = await reviewRepository(reposDir, repo, skills, labels, used);
      report.repositories.push(figures);
      report.findings.push(...findings);
      report.gaps.push(...gaps);
      for (const key of Object.keys(report.total) as (keyof Figures)[]) report.total[key] += figures[key];
    }
  } finally {
    await rm(reposDir, { recursive: true, force: true });
  }
  for (const f of report.findings) {
    const r = report.byRule[f.key.rule] ?? { findings: 0, actionable: 0, nonActionable: 0, unlabelled: 0 };
    report.byRule[f.key.rule] = r;
    r.findings++;
    if (!f.label) r.unlabelled++;
    else if (f.label.actionable) r.actionable++;
    else r.nonActionable++;
  }
  const reviewed = new Set(repositories.map((r) => r.name));
  report.staleLabels = labels.labels.filter((l) => reviewed.has(l.package) && !used.has(keyString(l)));
  return report;
}

/** What keeps part 3 from its target, one line each (empty: target met). */
export function realFailures(report: RealReport): string[] {
  const out: string[] = [];
  const t = report.total;
  if (t.unlabelled > 0)
    out.push(`${t.unlabelled} finding(s) without a label (npm run eval -- --unlabelled prints stubs)`);
  const rate = nonActionablePer5k(t);
  if (rate > NON_ACTIONABLE_PER_5K_TARGET)
    out.push(
      `${rate.toFixed(2)} non-actionable findings per 5,000 production lines (target <= ${NON_ACTIONABLE_PER_5K_TARGET})`,
    );
  if (t.nonActionableP0 > 0) out.push(`${t.nonActionableP0} non-actionable P0 finding(s) (target 0)`);
  return out;
}
