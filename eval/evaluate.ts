/**
 * The builtin reviewers' labelled evaluation: every case in `eval/cases/*.yml` is one snippet
 * turned into a changed file (all its lines added unless the case says which), run through every
 * builtin catalog skill, and compared with the findings the case expects.
 *
 * Case format (YAML list):
 *   - name: what the snippet shows
 *     path: src/db/users.ts        # the extension picks the grammar; the path drives path rules
 *     expect: [security/sql-injection@3]   # `rule@line` or `rule` (any line); [] = must stay quiet
 *     changed: [3, "5-7"]          # optional: the lines the change added (default: all)
 *     runtimes: { python: ">=3.12" }   # optional: the runtime versions the repository states,
 *                                      # as its knowledge would (default: none stated)
 *     code: |
 *       ...
 *
 * Scoring, per category (a finding's `category`; an expectation's is its rule's skill):
 * a true positive is an expected finding reported; a false negative one not reported; a false
 * positive any reported finding no expectation accounts for, in any case. A finding that stands
 * for one idiom repeated in the file (its `locations`) is scored at each of its places.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { DiffFile, FindingDraft, LineRange } from '../src/core/review';
import { runBuiltinSkill } from '../src/reviewers/builtin/engine';
import type { RuntimeStatement } from '../src/reviewers/builtin/runtime-version';
import type { ReviewFile } from '../src/reviewers/types';
import { type CatalogSkill, loadCatalog } from '../src/skills/catalog';

export const CASES_DIR = fileURLToPath(new URL('./cases/', import.meta.url));
/** Precision and recall every category must reach. */
export const THRESHOLD = 0.9;

export interface EvalCase {
  /** `<file>#<name>` */
  id: string;
  path: string;
  code: string;
  expect: { rule: string; line: number | null }[];
  changed: LineRange[] | null;
  /** The runtime versions the repository states (`runtimes:`); empty: none. */
  runtimes: RuntimeStatement[];
}

export interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

export interface EvalReport {
  cases: number;
  byCategory: Record<string, Score>;
  byRule: Record<string, Score>;
  /** What went wrong, one line each: missed expectations and unexpected findings. */
  misses: string[];
  gaps: string[];
}

/** A DiffFile for a snippet added in full (or with only `changed` lines added). */
export function snippetDiffFile(path: string, code: string, changed: LineRange[] | null = null): DiffFile {
  const lineCount = code.split('\n').length - (code.endsWith('\n') ? 1 : 0);
  const changedLines = changed ?? [{ start: 1, end: lineCount }];
  const additions = changedLines.reduce((n, r) => n + r.end - r.start + 1, 0);
  return {
    path,
    oldPath: null,
    change: changed ? 'modified' : 'added',
    binary: false,
    oldMode: null,
    newMode: '100644',
    language: null,
    additions,
    deletions: 0,
    changedLines,
    hunks: [],
    skipped: null,
  };
}

function parseRanges(value: unknown, where: string): LineRange[] {
  if (!Array.isArray(value)) throw new Error(`${where}: changed must be a list`);
  return value.map((v) => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(String(v));
    if (!m) throw new Error(`${where}: bad changed range ${String(v)}`);
    const start = Number(m[1]);
    return { start, end: m[2] ? Number(m[2]) : start };
  });
}

function parseRuntimes(value: unknown, where: string): RuntimeStatement[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: runtimes must map a runtime name to its version`);
  return Object.entries(value).map(([name, version]) => {
    // Unquoted, YAML reads 3.10 as the number 3.1.
    if (typeof version !== 'string') throw new Error(`${where}: quote the ${name} version`);
    return { name, version, source: 'eval case' };
  });
}

export async function loadCases(dir = CASES_DIR): Promise<EvalCase[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.yml')).sort();
  const cases: EvalCase[] = [];
  for (const name of names) {
    const raw: unknown = parseYaml(await readFile(join(dir, name), 'utf8'));
    if (!Array.isArray(raw)) throw new Error(`${name}: expected a list of cases`);
    for (const item of raw as Record<string, unknown>[]) {
      const where = `${name}#${String(item.name)}`;
      if (typeof item.path !== 'string' || typeof item.code !== 'string' || !Array.isArray(item.expect))
        throw new Error(`${where}: path, code and expect are required`);
      cases.push({
        id: where,
        path: item.path,
        code: item.code,
        expect: item.expect.map((e) => {
          const [rule, line] = String(e).split('@');
          return { rule: rule ?? '', line: line ? Number(line) : null };
        }),
        changed: item.changed === undefined ? null : parseRanges(item.changed, where),
        runtimes: parseRuntimes(item.runtimes, where),
      });
    }
  }
  return cases;
}

const emptyScore = (): Score => ({ tp: 0, fp: 0, fn: 0, precision: 1, recall: 1 });

export async function evaluate(
  options: { cases?: EvalCase[]; skills?: CatalogSkill[] } = {},
): Promise<EvalReport> {
  const cases = options.cases ?? (await loadCases());
  const skills = options.skills ?? (await loadCatalog()).filter((s) => s.engine !== 'llm');
  const byCategory: Record<string, Score> = {};
  const byRule: Record<string, Score> = {};
  const misses: string[] = [];
  const gaps: string[] = [];
  const signal = new AbortController().signal;
  const bump = (category: string, rule: string, key: 'tp' | 'fp' | 'fn') => {
    byCategory[category] ??= emptyScore();
    byRule[rule] ??= emptyScore();
    byCategory[category][key]++;
    byRule[rule][key]++;
  };

  for (const c of cases) {
    const file: ReviewFile = { diff: snippetDiffFile(c.path, c.code, c.changed), content: c.code };
    const findings: FindingDraft[] = [];
    for (const skill of skills) {
      const result = await runBuiltinSkill(skill, [file], {
        reviewerId: skill.id,
        signal,
        runtimes: c.runtimes,
      });
      findings.push(...result.findings);
      gaps.push(...result.gaps.map((g) => `${c.id}: ${g.code}: ${g.message}`));
    }
    // A finding standing for an idiom repeated in the file (reviewers/builtin/group.ts) answers
    // one expectation at each of its places, and each place no expectation accounts for counts.
    const unmatched = findings.flatMap((f) =>
      (f.locations ?? [{ start: f.line, end: f.endLine }]).map((l) => ({
        ...f,
        line: l.start,
        endLine: l.end,
      })),
    );
    for (const e of c.expect) {
      const category = e.rule.split('/')[0] ?? e.rule;
      const at = unmatched.findIndex(
        (f) => f.rule === e.rule && (e.line === null || (f.line <= e.line && e.line <= f.endLine)),
      );
      if (at >= 0) {
        unmatched.splice(at, 1);
        bump(category, e.rule, 'tp');
      } else {
        bump(category, e.rule, 'fn');
        misses.push(`missed    ${c.id}: ${e.rule}${e.line === null ? '' : `@${e.line}`}`);
      }
    }
    for (const f of unmatched) {
      bump(f.category, f.rule, 'fp');
      misses.push(`unwanted  ${c.id}: ${f.rule}@${f.line} ${f.title}`);
    }
  }
  for (const score of [...Object.values(byCategory), ...Object.values(byRule)]) {
    score.precision = score.tp + score.fp === 0 ? 1 : score.tp / (score.tp + score.fp);
    score.recall = score.tp + score.fn === 0 ? 1 : score.tp / (score.tp + score.fn);
  }
  return { cases: cases.length, byCategory, byRule, misses, gaps };
}

/** Categories below the threshold in precision or recall. */
export const failingCategories = (report: EvalReport, threshold = THRESHOLD) =>
  Object.entries(report.byCategory)
    .filter(([, s]) => s.precision < threshold || s.recall < threshold)
    .map(([c]) => c);
