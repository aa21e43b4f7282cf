/**
 * One review of a local range without the service: no database, no run engine, no worker. It
 * does what the service's review task (./run-review.ts) does between reading the range and
 * writing the ledger, with the same pieces: the diff and head contents from real git, the
 * repository's `.svc.yml` and `.gitattributes` at head (`repositoryContext`, `prepareFiles`), the
 * runtime versions its root files state (svc.json, engines, .nvmrc, pyproject.toml, go.mod: what
 * version-dependent rules run on, as the service's repository knowledge would say), the
 * catalog reviewers as the planner chooses them (a model reviewer only when a provider is
 * configured in the environment), then `applyPolicy`, `mergeFindings` and `markSuppressed`.
 * What it returns goes into a ledger (the CLI's file ledger).
 *
 * Heavy modules load only when needed and while git works: the rule engine (ast-grep,
 * secretlint) as soon as the review starts, the AI SDK only when a model reviewer runs.
 */

import { fileAnalysisBudgetMs } from '../config';
import { decodeText } from '../core/decode-text';
import type { FileRole } from '../core/file-roles';
import { REPO_KNOWLEDGE_FILE } from '../core/repo-knowledge';
import type { Diff, FindingDraft } from '../core/review';
import type { Gap } from '../core/runs';
import { PROJECT_SETTINGS } from '../core/settings';
import { deriveKnowledge } from '../knowledge/derive';
import { VERSION_FILES } from '../knowledge/runtimes';
import type { ReviewerResult, ReviewFile, ReviewInput } from '../reviewers/types';
import { type CatalogSkill, loadCatalog } from '../skills/catalog';
import { baseReader } from './base-reader';
import { catalogReviewers } from './catalog-reviewers';
import { type ReviewCoverage, reviewCoverage } from './coverage';
import type { HeadText } from './ledger-reconcile';
import {
  type LineupEntry,
  parseLineup,
  type ResolvedReviewer,
  type ReviewerItem,
  resolveEntry,
} from './lineup';
import { diffRange, readBlobs } from './local-range';
import { type MergedFinding, mergeFindings } from './merge';
import { planLineup } from './planner';
import { applyPolicy, CONTEXT_PATHS, markSuppressed, prepareFiles, repositoryContext } from './policy';
import type { ReviewerRow } from './reviewer-catalog';
import { ReviewerGaps } from './reviewer-gaps';

export interface LocalReviewInput {
  /** The repository's directory (a work tree or a bare repository). */
  dir: string;
  /** Base commit of the diff. */
  base: string;
  /** Head commit, or the tree of uncommitted changes. */
  head: string;
  /**
   * The base as the caller named it and where the head left it, for the coverage (`base` above is
   * the commit diffed from: the merge base when there is one). Omitted: `base`, merge base unknown.
   */
  ends?: { base: string; mergeBase: string | null } | undefined;
  /** Paths of the ledger's open findings: read at head too, to tell whether they were fixed. */
  ledgerPaths: readonly string[];
  /** The lineup (`security`, `general@anthropic/claude-sonnet-4-5`); omitted: the planner chooses. */
  reviewers?: ReviewerItem[] | undefined;
  /** Where provider settings are read from. */
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

export interface LocalReviewResult {
  diff: Diff;
  /** What the ledger records: merged, with the repository's policy and inline suppressions applied. */
  findings: MergedFinding[];
  headText: HeadText;
  /** Paths whose head content was read (changed files and the ledger's open findings). */
  inspectedPaths: Set<string>;
  gaps: Gap[];
  /** What the review covered: the commits compared, files reviewed by role, files left out by why. */
  coverage: ReviewCoverage;
  /** Each changed file's role, by path (what the repository's configuration made it). */
  roles: ReadonlyMap<string, FileRole>;
  lineup: { key: string; reviewer_id: string; engine: 'builtin' | 'llm'; model: string }[];
  plan: Record<string, unknown>;
  /** Milliseconds by phase, and by reviewer. */
  timings: Record<string, number>;
  byReviewerMs: Record<string, number>;
}

/** The caller asked for something that cannot run (an unknown reviewer): a usage error. */
export class ReviewInputError extends Error {
  override name = 'ReviewInputError';
}

/** No reviewer could run: the review failed. */
export class ReviewFailedError extends Error {
  override name = 'ReviewFailedError';
}

/**
 * Environment variables without which no LLM provider is usable (src/reviewers/llm/providers.ts
 * `configuredProviders`). Checked first so a rules-only run never loads the AI SDK; a test keeps
 * this list and that function in agreement.
 */
export const LLM_PROVIDER_ENV = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'SVC_LLM_COMPAT_URL'] as const;

/** Providers a model reviewer can run on here, by name. */
export async function usableProviders(env: NodeJS.ProcessEnv): Promise<Set<string>> {
  if (!LLM_PROVIDER_ENV.some((name) => env[name]?.trim())) return new Set();
  const { configuredProviders } = await import('../reviewers/llm/provider-config');
  return new Set(
    configuredProviders(env)
      .filter((p) => p.usable)
      .map((p) => p.provider),
  );
}

/** The catalog reviewers as the rows the planner and lineup resolution read. */
function reviewerRows(env: NodeJS.ProcessEnv): ReviewerRow[] {
  const epoch = new Date(0);
  return catalogReviewers(env).map((r) => ({
    ...r,
    workspaceId: 'local',
    skillRevisionId: null,
    instructions: null,
    source: 'catalog' as const,
    uses: 0,
    createdAt: epoch,
    updatedAt: epoch,
  }));
}

async function lineupFor(
  input: LocalReviewInput,
  diff: Diff,
  rows: ReviewerRow[],
): Promise<{ entries: LineupEntry[]; plan: Record<string, unknown> }> {
  if (input.reviewers) return { entries: parseLineup(input.reviewers), plan: { chosen_by: 'request' } };
  const plan = planLineup({
    diff,
    // A project's budget lives in the service's settings; the CLI has the default.
    budgetUsd: PROJECT_SETTINGS['svc.review.budget_usd'].default,
    reviewers: rows,
    llmProviders: await usableProviders(input.env),
  });
  return {
    entries: plan.lineup,
    plan: { chosen_by: 'planner', reasons: plan.reasons, signals: plan.signals },
  };
}

function resolveLineup(entries: LineupEntry[], rows: ReviewerRow[]): ResolvedReviewer[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return entries.map((entry) => {
    const reviewer = byId.get(entry.reviewerId);
    if (!reviewer)
      throw new ReviewInputError(
        `there is no reviewer ${JSON.stringify(entry.reviewerId)}; the reviewers are ${rows.map((r) => r.id).join(', ')}`,
      );
    const resolved = resolveEntry(entry, reviewer);
    if (resolved.engine === 'llm' && (!resolved.provider || !resolved.model))
      throw new ReviewInputError(
        `reviewer ${entry.key}: model ${JSON.stringify(entry.model)} is not <provider>/<model>`,
      );
    return resolved;
  });
}

async function runReviewer(
  reviewer: ResolvedReviewer,
  skill: CatalogSkill,
  input: ReviewInput,
  env: NodeJS.ProcessEnv,
): Promise<ReviewerResult> {
  if (reviewer.engine === 'builtin') {
    const { runBuiltinSkill } = await import('../reviewers/builtin/engine');
    return runBuiltinSkill(skill, input.files, {
      reviewerId: reviewer.key,
      signal: input.signal,
      runtimes: input.runtimes,
      readBase: input.readBase,
      readHead: input.readHead,
      fileBudgetMs: fileAnalysisBudgetMs(env),
    });
  }
  // Only here does the AI SDK load.
  const { runLlmReviewer } = await import('../reviewers/llm/engine');
  return runLlmReviewer({
    reviewerId: reviewer.key,
    instructions: skill.instructions,
    provider: reviewer.provider ?? '',
    model: reviewer.model ?? '',
    input,
    env,
    skills: [{ skill_id: skill.id, source: 'catalog', executed_hash: skill.hash }],
  });
}

/**
 * Files at the repository's root that state runtime versions (the service reads the whole tree;
 * a local review reads these few): svc.json, version files and manifests.
 */
export const ROOT_RUNTIME_FILES = [
  REPO_KNOWLEDGE_FILE,
  ...VERSION_FILES,
  'package.json',
  'pyproject.toml',
  'setup.cfg',
  'Pipfile',
  'go.mod',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'Cargo.toml',
  'Gemfile',
  'composer.json',
];

/**
 * The runtime versions the repository states at its root, read as the service's repository
 * knowledge reads them (svc.json's `runtimes` win over what is derived); an invalid svc.json
 * is a gap, as it is for the service.
 */
export function rootRuntimes(texts: ReadonlyMap<string, string | null>, commit: string) {
  const present = ROOT_RUNTIME_FILES.filter((p) => typeof texts.get(p) === 'string');
  if (present.length === 0) return { runtimes: [], gaps: [] };
  const derived = deriveKnowledge({ commit, paths: present, texts });
  return {
    runtimes: derived.content.runtimes,
    gaps: derived.gaps.filter((g) => g.code === 'repo_knowledge_file_invalid'),
  };
}

export async function reviewLocalRange(input: LocalReviewInput): Promise<LocalReviewResult> {
  const signal = input.signal ?? new AbortController().signal;
  const timings: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    timings[name] = Math.round((timings[name] ?? 0) + (now - mark));
    mark = now;
  };
  // Loaded while git diffs: the catalog (YAML rules) and the rule engine (ast-grep, secretlint).
  const catalog = loadCatalog();
  const engine = import('../reviewers/builtin/engine');
  catalog.catch(() => {});
  engine.catch(() => {});

  const diff = await diffRange(input.dir, input.base, input.head);
  lap('diff_ms');
  const gaps: Gap[] = [...diff.gaps];
  const readable = diff.files.filter((f) => f.change !== 'deleted' && !f.binary && !f.skipped);
  const paths = [...new Set([...readable.map((f) => f.path), ...input.ledgerPaths])];
  const contents = await readBlobs(input.dir, input.head, [
    ...new Set([...paths, ...CONTEXT_PATHS, ...ROOT_RUNTIME_FILES]),
  ]);
  const text = new Map(paths.map((p) => [p, decodeText(contents.get(p))]));
  const context = repositoryContext(new Map(CONTEXT_PATHS.map((p) => [p, decodeText(contents.get(p))])));
  gaps.push(...context.gaps);
  // The runtime versions version-dependent rules run on, as the service's knowledge states them.
  const runtimes = rootRuntimes(
    new Map(ROOT_RUNTIME_FILES.map((p) => [p, decodeText(contents.get(p))])),
    input.head,
  );
  gaps.push(...runtimes.gaps);
  const files: ReviewFile[] = prepareFiles(
    diff.files.map((f) => ({ diff: f, content: text.get(f.path) ?? null })),
    context,
  );
  lap('read_files_ms');

  const rows = reviewerRows(input.env);
  const { entries, plan } = await lineupFor(input, diff, rows);
  const lineup = resolveLineup(entries, rows);
  const skills = new Map((await catalog).map((s) => [s.id, s]));
  lap('plan_ms');

  const reviewInput: ReviewInput = {
    diff,
    files,
    guidance: context.config.guidance,
    learnings: [],
    runtimes: runtimes.runtimes,
    // Rule reviewers read the base of a file they found something in (pre-existing findings).
    readBase: baseReader((basePaths) => readBlobs(input.dir, input.base, basePaths)),
    // ... and the modules a changed file imports, at head (helpers that are sinks).
    readHead: baseReader((headPaths) => readBlobs(input.dir, input.head, headPaths)),
    signal,
  };
  await engine;
  lap('load_engine_ms');
  const failures: { key: string; error: unknown }[] = [];
  const byReviewerMs: Record<string, number> = {};
  // The reviewers run together: a model reviewer waits on the network while the rules run, and
  // the rule skills share each file's parse (on libuv's pool) while one of them matches.
  const results = await Promise.all(
    lineup.map(async (reviewer) => {
      const started = performance.now();
      try {
        const skill = skills.get(reviewer.reviewer.skillId);
        if (!skill)
          throw new ReviewFailedError(
            `reviewer ${reviewer.key} needs skill ${reviewer.reviewer.skillId}, which is not in the catalog`,
          );
        return await runReviewer(reviewer, skill, reviewInput, input.env);
      } catch (error) {
        if (signal.aborted) throw error;
        failures.push({ key: reviewer.key, error });
        return null;
      } finally {
        byReviewerMs[reviewer.key] = Math.round(performance.now() - started);
      }
    }),
  );
  const drafts: FindingDraft[] = [];
  const reviewerGaps = new ReviewerGaps();
  for (const [i, result] of results.entries()) {
    if (!result) continue;
    drafts.push(...result.findings);
    reviewerGaps.add(lineup[i]?.key ?? '', result.gaps);
  }
  gaps.push(...reviewerGaps.list());
  lap('reviewers_ms');
  if (lineup.length > 0 && failures.length === lineup.length) {
    const first = failures[0];
    throw new ReviewFailedError(`every reviewer failed; ${first?.key}: ${(first?.error as Error)?.message}`);
  }
  for (const failure of failures) {
    const code = (failure.error as { code?: unknown }).code;
    gaps.push({
      code: 'reviewer_failed',
      message: `${failure.key} failed${typeof code === 'string' ? ` with ${code}` : ''}: ${(failure.error as Error).message}`,
    });
  }

  const headText: HeadText = (path) => text.get(path) ?? null;
  const findings = markSuppressed(mergeFindings(applyPolicy(drafts, files, context)), headText);
  lap('merge_ms');
  return {
    diff,
    findings,
    headText,
    inspectedPaths: new Set(paths),
    gaps,
    coverage: reviewCoverage({
      base: input.ends?.base ?? input.base,
      head: input.head,
      mergeBase: input.ends ? input.ends.mergeBase : null,
      diff,
      files,
      gaps,
    }),
    roles: new Map(files.map((f) => [f.diff.path, f.role ?? 'production'])),
    lineup: lineup.map((r) => ({
      key: r.key,
      reviewer_id: r.reviewer.id,
      engine: r.engine,
      model: r.engine === 'builtin' ? 'builtin/rules' : `${r.provider}/${r.model}`,
    })),
    plan,
    timings,
    byReviewerMs,
  };
}
