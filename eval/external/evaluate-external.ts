/**
 * Part 2 of the eval: the builtin rules on labelled test material written by other people
 * (ESLint security plugins' RuleTester suites, read from node_modules), mapped to our rules by
 * `mapping.yml`. Each snippet is reviewed as an added production file; only the mapped rule is
 * scored: an `invalid` case it reports is a true positive, one it misses a false negative, a
 * `valid` case it reports a false positive. Excluded cases are still run and counted, so the
 * report shows what the rule does where the labels are not ours.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { FindingDraft } from '../../src/core/review';
import { EMPTY_CONTEXT, prepareFiles } from '../../src/review/policy';
import { runBuiltinSkill } from '../../src/reviewers/builtin/engine';
import { type CatalogSkill, loadCatalog } from '../../src/skills/catalog';
import { snippetDiffFile } from '../evaluate';
import { installedPackage } from '../shared/packages';
import { type LabelledSnippet, loadSuite, type Verdict } from './rule-tester-suites';

export const MAPPING_PATH = fileURLToPath(new URL('./mapping.yml', import.meta.url));
/** Precision and recall the mapped rules must reach on the included cases, in total and per rule. */
export const EXTERNAL_THRESHOLD = 0.9;

const exclusionSchema = z
  .object({ valid: z.string().optional(), invalid: z.string().optional(), why: z.string().min(1) })
  .strict()
  .refine((e) => (e.valid === undefined) !== (e.invalid === undefined), 'name exactly one of valid/invalid');

const mappingSchema = z
  .object({
    suites: z.array(
      z
        .object({
          package: z.string(),
          file: z.string(),
          rule: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/),
          /** The path each snippet is reviewed as (its extension picks the grammar). */
          path: z.string().default('lib/index.js'),
          exclude: z.array(exclusionSchema).default([]),
        })
        .strict(),
    ),
    unmapped: z.array(
      z.object({ package: z.string(), files: z.array(z.string()).min(1), why: z.string().min(1) }).strict(),
    ),
  })
  .strict();

export type ExternalMapping = z.infer<typeof mappingSchema>;

export async function loadMapping(path = MAPPING_PATH): Promise<ExternalMapping> {
  return mappingSchema.parse(parseYaml(await readFile(path, 'utf8')));
}

/** Whitespace collapsed, so a mapping entry survives re-indentation of the upstream file. */
export const normalizeCode = (code: string) => code.replace(/\s+/g, ' ').trim();

export interface ExternalCase extends LabelledSnippet {
  /** `package/file#run.verdict[index]` */
  id: string;
  package: string;
  /** The suite's file inside its package. */
  file: string;
  version: string;
  rule: string;
  path: string;
  /** The mapping's reason when the case is not scored. */
  excluded: string | null;
}

export interface RuleScore {
  tp: number;
  fp: number;
  fn: number;
  /** Excluded cases, and how many of them the rule reported anyway. */
  excluded: number;
  excludedFlagged: number;
  precision: number;
  recall: number;
}

export interface ExternalReport {
  packages: { name: string; version: string }[];
  cases: number;
  scored: number;
  total: RuleScore;
  byRule: Record<string, RuleScore>;
  bySuite: Record<string, RuleScore & { rule: string }>;
  /** Scored cases the rule got wrong, one line each. */
  misses: string[];
  /** Exclusions and unmapped suites, with their reasons (what the report must show). */
  exclusions: { suite: string; verdict: Verdict; count: number; why: string }[];
  unmapped: { package: string; files: string[]; why: string }[];
  /** Mapping entries that no longer match the pinned material. */
  mappingErrors: string[];
  gaps: string[];
}

/** Every case of every mapped suite, with the exclusion that applies to it. */
export async function loadExternalCases(
  mapping: ExternalMapping,
): Promise<{ cases: ExternalCase[]; errors: string[]; packages: { name: string; version: string }[] }> {
  const cases: ExternalCase[] = [];
  const errors: string[] = [];
  const packages = new Map<string, string>();
  for (const suite of mapping.suites) {
    const pkg = installedPackage(suite.package);
    packages.set(pkg.name, pkg.version);
    const snippets = loadSuite(pkg.dir, suite.file);
    const used = new Set<number>();
    for (const snippet of snippets) {
      const code = normalizeCode(snippet.code);
      const at = suite.exclude.findIndex((e) => {
        const pattern = snippet.verdict === 'valid' ? e.valid : e.invalid;
        return pattern !== undefined && (pattern === '*' || normalizeCode(pattern) === code);
      });
      if (at >= 0) used.add(at);
      cases.push({
        ...snippet,
        id: `${suite.package}/${suite.file}#${snippet.run}.${snippet.verdict}[${snippet.index}]`,
        package: suite.package,
        file: suite.file,
        version: pkg.version,
        rule: suite.rule,
        path: suite.path,
        excluded: at >= 0 ? (suite.exclude[at]?.why ?? null) : null,
      });
    }
    suite.exclude.forEach((e, i) => {
      if (!used.has(i))
        errors.push(
          `${suite.package}/${suite.file}: exclusion matches no case: ${e.valid !== undefined ? `valid ${e.valid}` : `invalid ${e.invalid}`}`,
        );
    });
  }
  for (const entry of mapping.unmapped) {
    const pkg = installedPackage(entry.package);
    for (const file of entry.files) {
      try {
        loadSuite(pkg.dir, file);
      } catch (error) {
        errors.push(`unmapped ${entry.package}/${file}: ${(error as Error).message}`);
      }
    }
  }
  return { cases, errors, packages: [...packages].map(([name, version]) => ({ name, version })) };
}

const emptyScore = (): RuleScore => ({
  tp: 0,
  fp: 0,
  fn: 0,
  excluded: 0,
  excludedFlagged: 0,
  precision: 1,
  recall: 1,
});

function finish(score: RuleScore) {
  score.precision = score.tp + score.fp === 0 ? 1 : score.tp / (score.tp + score.fp);
  score.recall = score.tp + score.fn === 0 ? 1 : score.tp / (score.tp + score.fn);
}

/** The findings the builtin skill that owns `rule` reports on one snippet, reviewed like svc. */
async function findingsOn(skill: CatalogSkill, c: ExternalCase, gaps: string[]): Promise<FindingDraft[]> {
  const files = prepareFiles([{ diff: snippetDiffFile(c.path, c.code), content: c.code }], EMPTY_CONTEXT);
  const result = await runBuiltinSkill(skill, files, {
    reviewerId: skill.id,
    signal: new AbortController().signal,
  });
  gaps.push(...result.gaps.map((g) => `${c.id}: ${g.code}: ${g.message}`));
  return result.findings;
}

export async function evaluateExternal(
  options: { mapping?: ExternalMapping; skills?: CatalogSkill[] } = {},
): Promise<ExternalReport> {
  const mapping = options.mapping ?? (await loadMapping());
  const skills = options.skills ?? (await loadCatalog()).filter((s) => s.engine !== 'llm');
  const { cases, errors, packages } = await loadExternalCases(mapping);
  const total = emptyScore();
  const byRule: Record<string, RuleScore> = {};
  const bySuite: ExternalReport['bySuite'] = {};
  const misses: string[] = [];
  const gaps: string[] = [];
  const exclusions = new Map<string, ExternalReport['exclusions'][number]>();

  for (const c of cases) {
    const skillId = c.rule.split('/')[0];
    const skill = skills.find((s) => s.id === skillId);
    if (!skill) {
      errors.push(`${c.id}: no builtin skill ${skillId} for ${c.rule}`);
      continue;
    }
    const flagged = (await findingsOn(skill, c, gaps)).some((f) => f.rule === c.rule);
    const suiteKey = `${c.package}/${c.file}`;
    const ruleScore = byRule[c.rule] ?? emptyScore();
    const suiteScore = bySuite[suiteKey] ?? { ...emptyScore(), rule: c.rule };
    byRule[c.rule] = ruleScore;
    bySuite[suiteKey] = suiteScore;
    const scores = [total, ruleScore, suiteScore];
    if (c.excluded !== null) {
      for (const s of scores) {
        s.excluded++;
        if (flagged) s.excludedFlagged++;
      }
      const key = `${suiteKey}\0${c.verdict}\0${c.excluded}`;
      const entry = exclusions.get(key) ?? { suite: suiteKey, verdict: c.verdict, count: 0, why: c.excluded };
      entry.count++;
      exclusions.set(key, entry);
      continue;
    }
    const outcome = c.verdict === 'invalid' ? (flagged ? 'tp' : 'fn') : flagged ? 'fp' : null;
    if (outcome === null) continue;
    for (const s of scores) s[outcome]++;
    if (outcome !== 'tp')
      misses.push(
        `${outcome === 'fn' ? 'missed  ' : 'unwanted'}  ${c.id} ${c.rule}: ${normalizeCode(c.code).slice(0, 100)}`,
      );
  }
  for (const s of [total, ...Object.values(byRule), ...Object.values(bySuite)]) finish(s);
  return {
    packages,
    cases: cases.length,
    scored: cases.filter((c) => c.excluded === null).length,
    total,
    byRule,
    bySuite,
    misses,
    exclusions: [...exclusions.values()],
    unmapped: mapping.unmapped,
    mappingErrors: errors,
    gaps,
  };
}

/** What keeps part 2 from its target: mapping errors, and rules below the threshold. */
export function externalFailures(report: ExternalReport, threshold = EXTERNAL_THRESHOLD): string[] {
  const out = [...report.mappingErrors];
  for (const [name, s] of [['total', report.total] as const, ...Object.entries(report.byRule)]) {
    if (s.precision < threshold) out.push(`${name}: precision ${s.precision.toFixed(2)} < ${threshold}`);
    if (s.recall < threshold) out.push(`${name}: recall ${s.recall.toFixed(2)} < ${threshold}`);
  }
  return out;
}
