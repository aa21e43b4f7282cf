/**
 * The repository's say over what a review reports: which files are reviewed and in what role,
 * which rules run and how severe they are, and which findings a person has already answered with
 * an inline `svc-ignore`. Applied the same way by every review path (API, webhooks, `svc review`,
 * the eval), so what one of them reports the others report too.
 */

import { runCooperatively, runToEnd, type Steps, slicer } from '../core/cooperative';
import {
  declaredLanguageOf,
  type FileRole,
  type GitAttributeRule,
  isForeignCode,
  type LanguageAttributeRule,
  outputDirsOf,
  parseGitAttributes,
  parseLanguageAttributes,
  roleOfPath,
} from '../core/file-roles';
import { matchesGlob } from '../core/globs';
import { downgraded, type LearningScope, scopeCovers } from '../core/learning-scope';
import type { FindingDraft } from '../core/review';
import type { Gap } from '../core/runs';
import type { ReviewFile } from '../reviewers/types';
import type { MergedFinding } from './merge';
import { parseRepoConfig, REPO_CONFIG_PATH, type RepoConfig, ruleSetting } from './repo-config';

export const GIT_ATTRIBUTES_PATH = '.gitattributes';
/** Root manifests naming the directories the repository builds into (core/file-roles.ts `outputDirsOf`). */
const PACKAGE_JSON_PATH = 'package.json';
const TSCONFIG_PATH = 'tsconfig.json';

export interface RepositoryContext {
  config: RepoConfig;
  attributes: GitAttributeRule[];
  /** `.gitattributes` `linguist-language` lines: the language rules read a file in. */
  languages?: LanguageAttributeRule[];
  /** Directories the root package.json / tsconfig.json build into: their JavaScript is generated. */
  outputDirs?: string[];
  /** Shortfalls in reading it (an invalid `.svc.yml`), reported as the review's gaps. */
  gaps: Gap[];
}

/** The files the context is read from, at the reviewed head. */
export const CONTEXT_PATHS = [REPO_CONFIG_PATH, GIT_ATTRIBUTES_PATH, PACKAGE_JSON_PATH, TSCONFIG_PATH];

/** Builds the context from the texts of CONTEXT_PATHS (null or missing: the file is absent). */
export function repositoryContext(texts: ReadonlyMap<string, string | null>): RepositoryContext {
  const parsed = parseRepoConfig(texts.get(REPO_CONFIG_PATH) ?? null);
  const gaps: Gap[] = parsed.error
    ? [
        {
          code: 'repo_config_invalid',
          message: `${REPO_CONFIG_PATH} was not applied (${parsed.error}); the review used the defaults`,
        },
      ]
    : [];
  const attributes = texts.get(GIT_ATTRIBUTES_PATH) ?? '';
  return {
    config: parsed.config,
    attributes: parseGitAttributes(attributes),
    languages: parseLanguageAttributes(attributes),
    outputDirs: outputDirsOf({
      packageJson: texts.get(PACKAGE_JSON_PATH) ?? null,
      tsconfig: texts.get(TSCONFIG_PATH) ?? null,
    }),
    gaps,
  };
}

export const EMPTY_CONTEXT: RepositoryContext = repositoryContext(new Map());

/**
 * Adds the roles the repository declares in its knowledge file (`svc.json`): test paths join
 * `.svc.yml`'s `paths.tests`; generated and vendored paths count as `.gitattributes` marks that
 * come first, so the repository's own `.gitattributes` (negations included) still wins.
 */
export function withDeclaredRoles(
  context: RepositoryContext,
  declared: { tests: string[]; attributes: GitAttributeRule[] } | null,
): RepositoryContext {
  if (!declared) return context;
  return {
    ...context,
    config: {
      ...context.config,
      paths: { ...context.config.paths, tests: [...context.config.paths.tests, ...declared.tests] },
    },
    attributes: [...declared.attributes, ...context.attributes],
  };
}

/**
 * The files reviewers are given: paths the repository excludes are dropped, every other file
 * carries its role (which rules run on it and how severe a finding there can be) and the language
 * `.gitattributes` gives it, if any (`linguist-language`: the grammar rules read it in).
 */
export function prepareFiles(files: ReviewFile[], context: RepositoryContext): ReviewFile[] {
  const { exclude, tests } = context.config.paths;
  const languages = context.languages ?? [];
  return files
    .filter((f) => !exclude.some((g) => matchesGlob(f.diff.path, g)))
    .map((f) => {
      const role = roleOfPath(f.diff.path, {
        testGlobs: tests,
        attributes: context.attributes,
        content: f.content,
        outputDirs: context.outputDirs,
      });
      const language = languages.length > 0 ? declaredLanguageOf(f.diff.path, languages) : undefined;
      return language === undefined ? { ...f, role } : { ...f, role, declaredLanguage: language };
    });
}

/** Credentials leak from any file, so secrets keep their severity in every role. */
const keepsSeverityEverywhere = (draft: FindingDraft) => draft.category === 'secrets';

/**
 * What reviewers found, as the repository wants it: disabled rules dropped, severities
 * overridden, findings in generated or vendored code dropped (secrets excepted), and nothing
 * outside production code ever P0 (secrets excepted).
 */
export function applyPolicy(
  drafts: FindingDraft[],
  files: ReviewFile[],
  context: RepositoryContext,
): FindingDraft[] {
  const roles = new Map(files.map((f) => [f.diff.path, f.role ?? 'production']));
  const out: FindingDraft[] = [];
  for (const draft of drafts) {
    const role: FileRole | undefined = roles.get(draft.path);
    if (role === undefined) continue; // an excluded path (or one no reviewer was given)
    const setting = ruleSetting(context.config, draft.rule);
    if (setting?.disable) continue;
    if (isForeignCode(role) && !keepsSeverityEverywhere(draft)) continue;
    let severity = setting?.severity ?? draft.severity;
    if (role !== 'production' && severity === 'P0' && !keepsSeverityEverywhere(draft)) severity = 'P1';
    out.push(severity === draft.severity ? draft : { ...draft, severity });
  }
  return out;
}

/**
 * `svc-ignore <rule>: <reason>` in a comment on the finding's first line or the line above. The
 * rule is the finding's full id (`security/sql-injection`) or its bare name (`sql-injection`); the
 * reason is what the ledger records for the dismissal.
 */
const SUPPRESSION =
  /(?:\/\/|#|\/\*|--|<!--|;|\*)\s*svc-ignore[\s:]+([a-z0-9-]+(?:\/[a-z0-9-]+)?)\s*(?::\s*(.*?))?\s*(?:\*\/|-->)?\s*$/i;

export interface Suppression {
  rule: string;
  reason: string;
}

/** The suppression written in this line of code, if any. */
export function suppressionIn(line: string): Suppression | null {
  if (!line.includes('svc-ignore')) return null;
  const m = SUPPRESSION.exec(line);
  if (!m) return null;
  const reason = m[2]?.trim();
  return { rule: (m[1] as string).toLowerCase(), reason: reason || 'suppressed inline (no reason given)' };
}

const suppresses = (s: Suppression, rule: string) =>
  s.rule === rule || s.rule === rule.slice(rule.indexOf('/') + 1);

/** Marks the findings a person suppressed inline; the ledger records them as dismissed. */
export function markSuppressed(
  found: MergedFinding[],
  headText: (path: string) => string | null,
): MergedFinding[] {
  return runToEnd(suppressionSteps(found, headText));
}

/** `markSuppressed`, giving the event loop a turn every few milliseconds (core/cooperative.ts). */
export function markSuppressedCooperatively(
  found: MergedFinding[],
  headText: (path: string) => string | null,
): Promise<MergedFinding[]> {
  return runCooperatively(suppressionSteps(found, headText));
}

function* suppressionSteps(
  found: MergedFinding[],
  headText: (path: string) => string | null,
): Steps<MergedFinding[]> {
  const linesOf = new Map<string, string[] | null>();
  const tick = slicer();
  const out: MergedFinding[] = [];
  for (const finding of found) {
    if (tick()) yield;
    if (!linesOf.has(finding.path)) linesOf.set(finding.path, headText(finding.path)?.split('\n') ?? null);
    const lines = linesOf.get(finding.path);
    out.push(lines ? withSuppression(finding, lines) : finding);
  }
  return out;
}

/**
 * A finding standing for an idiom repeated in a file (its `locations`) is dismissed only when
 * each of its places says so, with the first one's reason: one place ignored leaves the others.
 */
function withSuppression(finding: MergedFinding, lines: string[]): MergedFinding {
  let first: Suppression | null = null;
  for (const { start } of finding.locations ?? [{ start: finding.line }]) {
    const s = suppressionAt(start, finding.rule, lines);
    if (!s) return finding;
    first ??= s;
  }
  return first ? { ...finding, dismissal: { reason: first.reason } } : finding;
}

/** The suppression of `rule` on line `at` or the line above, if any. */
function suppressionAt(at: number, rule: string, lines: string[]): Suppression | null {
  for (const line of [at, at - 1]) {
    const s = line >= 1 ? suppressionIn(lines[line - 1] ?? '') : null;
    if (s && suppresses(s, rule)) return s;
  }
  return null;
}

/** A learning as the policy applies it: its id and sentence name it in what it changes. */
export interface ScopedLearning {
  id: string;
  learning: string;
  scope: LearningScope | null;
}

/**
 * Applies the learnings whose scope covers a finding: `suppress` records it as dismissed with the
 * learning as its reason (the ledger keeps it, as with `svc-ignore`); `downgrade` lowers its
 * severity one step and says so in its body. A finding already dismissed inline is left alone.
 */
export function applyLearnings(
  found: MergedFinding[],
  learnings: readonly ScopedLearning[],
): MergedFinding[] {
  const scoped = learnings.filter((l): l is ScopedLearning & { scope: LearningScope } => l.scope !== null);
  if (scoped.length === 0) return found;
  return found.map((finding) => {
    if (finding.dismissal) return finding;
    const covering = scoped.filter((l) => scopeCovers(l.scope, finding));
    const suppressing = covering.find((l) => l.scope.action === 'suppress');
    if (suppressing)
      return { ...finding, dismissal: { reason: `learning ${suppressing.id}: ${suppressing.learning}` } };
    const lowering = covering.find((l) => l.scope.action === 'downgrade');
    if (!lowering || finding.severity === 'P2') return finding;
    return {
      ...finding,
      severity: downgraded(finding.severity),
      body: `${finding.body}\n\n_Severity lowered from ${finding.severity} by learning ${lowering.id}: ${lowering.learning}_`,
    };
  });
}
