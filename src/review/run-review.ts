/**
 * The `review` task kind: one pass over one pull request (or commit range) by a lineup of
 * reviewers. Resolve the target, read the diff from real git, plan or take the lineup, run
 * every reviewer, merge what they found and record it in the pull request's ledger.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { and, eq, sql } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import { type CodeHost, CodeHostError } from '../codehost/types';
import { decodeText } from '../core/decode-text';
import { RunFailure } from '../core/failures';
import { type Diff, type FindingDraft, ledgerKeyOf } from '../core/review';
import type { Gap } from '../core/runs';
import { resolveProjectSettings } from '../core/settings';
import { projectAndHost } from '../engine/project-host';
import type { RunContext, TaskHandler } from '../engine/types';
import { declaredRoles, knowledgeBrief } from '../knowledge/brief';
import { knowledgeForReview } from '../knowledge/for-review';
import { configuredProviders } from '../reviewers/llm/provider-config';
import type { ReviewerResult, ReviewFile } from '../reviewers/types';
import { messageOf } from '../storage/bound-values';
import { type Database, isConnectionLost } from '../storage/database';
import { newId } from '../storage/ids';
import { setReviewStatus } from '../storage/review-status';
import { findings, pullRequests, reviewerModelStats, reviewers, reviewResults } from '../storage/schema';
import { baseReader } from './base-reader';
import { type ReviewConfig, reviewConfigSchema } from './config';
import { reviewCoverage } from './coverage';
import { emptyComparison } from './empty-comparison';
import { executeReviewer } from './execute-reviewer';
import { currentLearnings } from './learnings';
import { recordInLedger } from './ledger';
import { type LineupEntry, type ResolvedReviewer, resolveEntry } from './lineup';
import { mergeFindingsCooperatively } from './merge';
import { planLineup } from './planner';
import {
  applyLearnings,
  applyPolicy,
  CONTEXT_PATHS,
  markSuppressedCooperatively,
  prepareFiles,
  repositoryContext,
  type ScopedLearning,
  withDeclaredRoles,
} from './policy';
import { countUse, type ReviewerRow } from './reviewer-catalog';
import { ReviewerGaps } from './reviewer-gaps';

/**
 * What happens on the code host as a review moves through its states (the check, inline
 * findings, the summary). Called only for reviews delivered to the code host; supplied by the
 * automation layer so the review itself stays independent of any code host's conventions.
 */
export interface ReviewLifecycle {
  onStatus(
    ctx: RunContext,
    event: {
      status: 'reviewing' | 'reviews_available' | 'summarizing' | 'reviewed' | 'errored' | 'skipped';
      host: CodeHost;
      repo: string;
      projectId: string;
      pullRequestId: string;
      number: number;
      headSha: string;
      error?: unknown;
      /** On `skipped`: why nothing was reviewed, in words. */
      reason?: string;
    },
  ): Promise<void>;
}

/** A review task created through the API for a pull request, delivered to the code host. */
export interface AnnouncedReview {
  projectId: string;
  pullRequest: number;
  taskId: string;
}

/**
 * Queues the pull request's check for the review (`queued`, the pull request `planning`), with
 * the deadline fallback an automatic review has (automation/, via main.ts).
 */
export type ReviewAnnouncer = (review: AnnouncedReview) => Promise<void>;

export interface ReviewDeps {
  codeHosts: CodeHosts;
  env: NodeJS.ProcessEnv;
  lifecycle?: ReviewLifecycle;
  /**
   * Puts an API-created review delivered to the code host on its check, as the trigger does for
   * an automatic one when it creates it: the acknowledgement asks the code host nothing, so the
   * run does this first, once it knows the pull request's head.
   */
  announce?: ReviewAnnouncer;
}

type Target = {
  pullRequestId: string | null;
  number: number | null;
  /** The commit the diff is taken from: a pull request's merge base when known. */
  baseSha: string;
  headSha: string;
  /** The base as named (a pull request's base branch, a range's base), as a commit. */
  baseRefSha: string;
  /** Where the head left the base; null when unknown. */
  mergeBaseSha: string | null;
};

/** Code-host answers become named run failures: a missing PR or range is the caller's input. */
function hostFailure(error: unknown, what: string): never {
  if (error instanceof CodeHostError) {
    const code =
      error.reason === 'unavailable'
        ? 'backend_unavailable'
        : error.reason === 'tool_missing'
          ? 'missing_expected_tool'
          : error.reason === 'timeout'
            ? 'tool_timeout'
            : 'tool_failed';
    throw new RunFailure(code, `${what}: ${error.message}`);
  }
  throw error;
}

async function resolveTarget(
  ctx: RunContext,
  host: CodeHost,
  repo: string,
  config: ReviewConfig,
): Promise<Target> {
  if (config.pr !== null) {
    const pr = await host
      .getPullRequest(repo, config.pr)
      .catch((e) => hostFailure(e, `pull request ${config.pr}`));
    const now = new Date();
    const fields = {
      title: pr.title,
      author: pr.author,
      draft: pr.draft,
      baseRef: pr.baseRef,
      headRef: pr.headRef,
      baseSha: pr.baseSha,
      headSha: pr.headSha,
      updatedAt: now,
    };
    const [row] = await ctx.db.orm
      .insert(pullRequests)
      .values({
        id: newId('pullRequest'),
        workspaceId: ctx.task.workspaceId,
        projectId: ctx.task.projectId ?? '',
        number: pr.number,
        ...fields,
      })
      .onConflictDoUpdate({ target: [pullRequests.projectId, pullRequests.number], set: fields })
      .returning();
    // Through setReviewStatus, like every move: the move back to planning is on the timeline too.
    await setReviewStatus(ctx.db, row?.id ?? null, 'planning', { runId: ctx.run.id });
    // GitHub shows a pull request's changes against the merge base, and so do we.
    return {
      pullRequestId: row?.id ?? null,
      number: pr.number,
      baseSha: pr.mergeBaseSha ?? pr.baseSha,
      headSha: pr.headSha,
      baseRefSha: pr.baseSha,
      mergeBaseSha: pr.mergeBaseSha ?? null,
    };
  }
  const range = await host
    .resolveRange(repo, config.base ?? '', config.head ?? '')
    .catch((e) => hostFailure(e, `range ${config.base}..${config.head}`));
  return {
    pullRequestId: null,
    number: null,
    baseSha: range.baseSha,
    headSha: range.headSha,
    baseRefSha: range.baseSha,
    mergeBaseSha: range.mergeBaseSha,
  };
}

function lineupFor(
  config: ReviewConfig,
  diff: Diff,
  all: ReviewerRow[],
  budgetUsd: number,
  env: NodeJS.ProcessEnv,
) {
  if (config.reviewers)
    return { entries: config.reviewers, plan: { chosen_by: 'request' } as Record<string, unknown> };
  const providers = new Set(
    configuredProviders(env)
      .filter((p) => p.usable)
      .map((p) => p.provider),
  );
  const plan = planLineup({ diff, budgetUsd, reviewers: all, llmProviders: providers });
  return {
    entries: plan.lineup,
    plan: { chosen_by: 'planner', reasons: plan.reasons, signals: plan.signals },
  };
}

function resolveLineup(entries: LineupEntry[], byId: Map<string, ReviewerRow>): ResolvedReviewer[] {
  return entries.map((entry) => {
    const reviewer = byId.get(entry.reviewerId);
    if (!reviewer) {
      throw new RunFailure(
        'skill_instance_not_found',
        `reviewer ${entry.reviewerId} no longer exists in this workspace`,
      );
    }
    return resolveEntry(entry, reviewer);
  });
}

export function reviewHandler(deps: ReviewDeps): TaskHandler {
  const handler: TaskHandler = async (ctx) => {
    const config = reviewConfigSchema.parse(ctx.run.input);
    const { project, host } = await projectAndHost(ctx, deps.codeHosts);
    const repo = project.repoFullName;
    const settings = resolveProjectSettings(project.settings);

    await ctx.progress({
      phase: 'planning',
      statusText: config.pr !== null ? `resolving pull request #${config.pr}` : 'resolving the commit range',
      currentStep: 'resolve',
      pct: 5,
    });
    const target = await resolveTarget(ctx, host, repo, config);
    await announce(ctx, deps, config, target);
    try {
      return await review(ctx, deps, {
        host,
        repo,
        config,
        target,
        budgetUsd: settings['svc.review.budget_usd'],
        guidance: settings['svc.review.guidance'],
        project,
      });
    } catch (error) {
      await notReviewed(ctx, deps, { host, repo, config, target }, error);
      throw error;
    }
  };
  // A review that never ran (a brake refused it, no worker took it, its worker died for good)
  // still ends its pull request's check: skipped, with the reason.
  handler.abandoned = async (ctx, error) => {
    const config = reviewConfigSchema.parse(ctx.run.input);
    const { project, host } = await projectAndHost(ctx, deps.codeHosts);
    const target = await resolveTarget(ctx, host, project.repoFullName, config);
    await notReviewed(ctx, deps, { host, repo: project.repoFullName, config, target }, error);
  };
  return handler;
}

/**
 * An API review delivered to the code host gets its check `queued` with the deadline fallback,
 * before the run reports `in_progress`. Automatic reviews were queued by their trigger, and a
 * replacement run by the run it replaces. A failure to queue is a warning, not the run's end:
 * the run still posts the check (in progress, then its verdict).
 */
async function announce(ctx: RunContext, deps: ReviewDeps, config: ReviewConfig, target: Target) {
  if (!deps.announce || config.delivery !== 'codehost' || target.number === null) return;
  if ((ctx.run.input as { automatic?: unknown }).automatic === true || ctx.run.retryOf !== null) return;
  await deps
    .announce({ projectId: ctx.task.projectId ?? '', pullRequest: target.number, taskId: ctx.task.id })
    .catch((e: unknown) => ctx.warn(`could not queue the code-host check: ${(e as Error).message}`));
}

/** The pull request's review errored: its status says so and its check completes skipped. */
async function notReviewed(
  ctx: RunContext,
  deps: ReviewDeps,
  job: { host: CodeHost; repo: string; config: ReviewConfig; target: Target },
  error: unknown,
) {
  await setReviewStatus(ctx.db, job.target.pullRequestId, 'errored', {
    runId: ctx.run.id,
    ifHead: job.target.headSha,
  }).catch(() => {});
  await lifecycle(ctx, deps, job, 'errored', error).catch((e) =>
    ctx.warn(`could not mark the code-host check errored: ${(e as Error).message}`),
  );
}

async function review(
  ctx: RunContext,
  deps: ReviewDeps,
  job: {
    host: CodeHost;
    repo: string;
    config: ReviewConfig;
    target: Target;
    budgetUsd: number;
    guidance: string;
    project: { id: string; workspaceId: string; repoFullName: string };
  },
) {
  const { db } = ctx;
  const { host, repo, config, target } = job;
  const projectId = ctx.task.projectId ?? '';
  const ledgerKey = ledgerKeyOf(
    target.pullRequestId
      ? { pullRequestId: target.pullRequestId }
      : { pullRequestId: null, baseSha: target.baseSha, headSha: target.headSha },
  );

  await ctx.progress({
    statusText: `diffing ${target.baseSha.slice(0, 12)}..${target.headSha.slice(0, 12)}`,
    currentStep: 'diff',
    pct: 10,
  });
  // Where the time goes, phase by phase: the benchmark separates the analyzers from svc's own work.
  const timings: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    timings[name] = Math.round((timings[name] ?? 0) + (now - mark));
    mark = now;
  };
  // What does not depend on the diff is read while git computes it: the thread mostly waits on
  // git there (~0.1 s of a 100,000-line review). One Promise.all, so a failure of any is handled.
  const [diff, openRows, { knowledge, gaps: knowledgeGaps }, allReviewers] = await Promise.all([
    host
      .getDiff(repo, target.baseSha, target.headSha, {}, { pullRequest: target.number })
      .catch((e) => hostFailure(e, 'diff')),
    // Files of open findings: their head contents tell whether they were fixed.
    db.orm
      .selectDistinct({ path: findings.path })
      .from(findings)
      .where(and(eq(findings.ledgerKey, ledgerKey), eq(findings.status, 'open'))),
    knowledgeForReview(db.orm, host, job.project),
    db.orm.select().from(reviewers).where(eq(reviewers.workspaceId, ctx.task.workspaceId)),
  ]);
  lap('diff_ms');
  for (const gap of diff.gaps) ctx.gap(gap);
  // Reviewers that read nothing report nothing, which would pass for a clean change.
  const empty = emptyComparison(target, diff);
  if (empty) return notReviewable(ctx, deps, job, empty);

  // Head contents: the changed files, plus files of open findings.
  const readable = diff.files.filter((f) => f.change !== 'deleted' && !f.binary && !f.skipped);
  const paths = [...new Set([...readable.map((f) => f.path), ...openRows.map((r) => r.path)])];
  const contents = await host
    .readFiles(repo, target.headSha, [...new Set([...paths, ...CONTEXT_PATHS])])
    .catch((e) => hostFailure(e, 'reading files'));
  const text = new Map(paths.map((p) => [p, decodeText(contents.get(p))]));
  // The repository's own configuration and attributes decide which files are reviewed, in what role.
  // What the repository's knowledge declares (svc.json) joins them: its test, generated and
  // vendored paths; for model reviewers, a summary of its runtimes and tooling; for rule
  // reviewers, the runtime versions that decide which version-dependent rules run.
  const context = withDeclaredRoles(
    repositoryContext(new Map(CONTEXT_PATHS.map((p) => [p, decodeText(contents.get(p))]))),
    knowledge ? declaredRoles(knowledge) : null,
  );
  for (const gap of [...context.gaps, ...knowledgeGaps]) ctx.gap(gap);
  // Deriving the knowledge and giving every file its role each take tens of milliseconds on a
  // change of a thousand files: the server answers in between.
  await nextTurn();
  const files: ReviewFile[] = prepareFiles(
    diff.files.map((f) => ({ diff: f, content: text.get(f.path) ?? null })),
    context,
  );

  const byId = new Map(allReviewers.map((r) => [r.id, r]));
  lap('read_files_ms');
  const { entries, plan } = lineupFor(config, diff, allReviewers, job.budgetUsd, deps.env);
  const lineup = resolveLineup(entries, byId);
  await ctx.message(
    'note',
    `Lineup: ${lineup.map((r) => `${r.key} (${r.engine === 'builtin' ? 'builtin/rules' : `${r.provider}/${r.model}`})`).join(', ') || 'none'}`,
    { plan },
  );

  let learningRows: ScopedLearning[] = [];
  try {
    learningRows = await currentLearnings(db, projectId, new Date());
  } catch (error) {
    ctx.gap({
      code: 'learnings_unavailable',
      message: `learnings could not be loaded, so reviewers ran without them: ${messageOf(error)}`,
    });
  }

  await setReviewStatus(db, target.pullRequestId, 'reviewing', { runId: ctx.run.id, ifHead: target.headSha });
  await lifecycle(ctx, deps, job, 'reviewing');
  await ctx.progress({
    phase: 'reviewing',
    statusText: `running ${lineup.length} reviewer(s)`,
    currentStep: 'review',
    pct: 20,
  });
  const guidance = [job.guidance, context.config.guidance].filter((g) => g.trim() !== '').join('\n\n');
  const input = {
    diff,
    files,
    guidance,
    learnings: learningRows.map((l) => l.learning),
    knowledge: knowledge ? knowledgeBrief(knowledge) : '',
    // Rules that depend on a runtime version run on the versions the repository states.
    runtimes: knowledge?.runtimes ?? [],
    // Rule reviewers read the base of a file they found something in (pre-existing findings).
    readBase: baseReader((basePaths) => host.readFiles(repo, target.baseSha, basePaths)),
    // ... and the modules a changed file imports, at head (helpers that are sinks).
    readHead: baseReader((headPaths) => host.readFiles(repo, target.headSha, headPaths)),
    signal: ctx.signal,
    // Model reviewers write their prompts and answers (redacted) to the run's transcript.
    transcript: {
      write: (
        role: 'system' | 'user' | 'assistant' | 'tool',
        content: string,
        data?: Record<string, unknown>,
      ) => ctx.message(role, content, data),
      // A failed write here shows on the transcript write that follows; it must not go unhandled.
      firstToken: () => void ctx.firstToken().catch(() => {}),
    },
  };
  const drafts: FindingDraft[] = [];
  const failures: { key: string; error: unknown }[] = [];
  const skills: ReviewerResult['skills'] = [];
  const models: string[] = [];
  lap('plan_ms');
  const reviewerMs: Record<string, number> = {};
  // A file no reviewer could read in full is named once, with every reviewer it was left out by.
  const reviewerGaps = new ReviewerGaps();
  for (const [index, reviewer] of lineup.entries()) {
    const started = Date.now();
    mark = performance.now();
    try {
      const result = await executeReviewer(
        { db, workspaceId: ctx.task.workspaceId, env: deps.env },
        reviewer,
        input,
      );
      reviewerMs[reviewer.key] = Math.round(performance.now() - mark);
      drafts.push(...result.findings);
      reviewerGaps.add(reviewer.key, result.gaps);
      for (const item of result.usage) ctx.usage(item);
      skills.push(...result.skills);
      if (result.backend.model) models.push(`${result.backend.provider}/${result.backend.model}`);
      await recordModelStat(db, ctx.task.workspaceId, reviewer, {
        findings: result.findings.length,
        ms: Date.now() - started,
        failed: false,
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      // Tokens a failed model reviewer already paid for still count toward cost and spend caps.
      const spent =
        error instanceof RunFailure
          ? (error.details?.usage as ReviewerResult['usage'] | undefined)
          : undefined;
      for (const item of spent ?? []) ctx.usage(item);
      failures.push({ key: reviewer.key, error });
      await recordModelStat(db, ctx.task.workspaceId, reviewer, {
        findings: 0,
        ms: Date.now() - started,
        failed: true,
      });
    }
    mark = performance.now();
    await ctx.progress({
      statusText: `${index + 1}/${lineup.length} reviewers done`,
      pct: 20 + Math.round(((index + 1) / Math.max(1, lineup.length)) * 60),
    });
  }
  const gapsOfReviewers = reviewerGaps.list();
  for (const gap of gapsOfReviewers) ctx.gap(gap);
  if (lineup.length > 0 && failures.length === lineup.length) {
    // Nothing reviewed: the run fails by the first reviewer's named reason.
    const first = failures[0]?.error;
    // A lost database connection goes up as it is: the worker fails the run by name and replaces it.
    throw first instanceof RunFailure || isConnectionLost(first)
      ? first
      : new RunFailure('unknown', `every reviewer failed: ${messageOf(first)}`);
  }
  for (const failure of failures) {
    const code = failure.error instanceof RunFailure ? failure.error.code : 'unknown';
    ctx.gap({
      code: `reviewer_failed`,
      message: `${failure.key} failed with ${code}: ${(failure.error as Error).message}`,
    });
  }
  ctx.setSkills(skills);
  ctx.setBackend({
    harness: lineup.some((r) => r.engine === 'llm') ? 'llm+builtin' : 'builtin',
    provider: models.length === 1 ? (models[0]?.split('/')[0] ?? null) : null,
    model: models.length === 1 ? (models[0]?.split('/').slice(1).join('/') ?? null) : null,
    preset: 'review',
  });

  await ctx.progress({
    phase: 'summarizing',
    statusText: 'merging findings into the ledger',
    currentStep: 'ledger',
    pct: 85,
  });
  lap('bookkeeping_ms');
  // A canceled or timed-out run must not write the ledger or post anything after the fact.
  ctx.signal.throwIfAborted();
  // Tens of thousands of findings must not stop the server answering: the merge gives the event
  // loop a turn every few milliseconds and writes the ledger in short batches (./ledger.ts).
  const merged = applyLearnings(
    await markSuppressedCooperatively(
      await mergeFindingsCooperatively(applyPolicy(drafts, files, context)),
      (p) => text.get(p) ?? null,
    ),
    learningRows,
  );
  let progressAt = performance.now();
  const outcome = await recordInLedger(
    db,
    {
      ledgerKey,
      workspaceId: ctx.task.workspaceId,
      projectId,
      pullRequestId: target.pullRequestId,
      taskId: ctx.task.id,
      runId: ctx.run.id,
      headSha: target.headSha,
    },
    merged,
    (path) => text.get(path) ?? null,
    new Set(paths),
    {
      signal: ctx.signal,
      onProgress: async (written, total) => {
        if (performance.now() - progressAt < 2_000) return;
        progressAt = performance.now();
        await ctx.progress({
          statusText: `merging findings into the ledger: ${written} of ${total} written`,
        });
      },
    },
  );
  // The findings are committed to the ledger before anything is posted: a failed post loses none.
  await setReviewStatus(db, target.pullRequestId, 'reviews_available', {
    runId: ctx.run.id,
    ifHead: target.headSha,
  });
  await lifecycle(ctx, deps, job, 'reviews_available');
  await setReviewStatus(db, target.pullRequestId, 'summarizing', {
    runId: ctx.run.id,
    ifHead: target.headSha,
  });
  await lifecycle(ctx, deps, job, 'summarizing');
  const counts = {
    findings: outcome.reported.length,
    p0: outcome.reported.filter((f) => f.severity === 'P0' && f.status === 'open').length,
    p1: outcome.reported.filter((f) => f.severity === 'P1' && f.status === 'open').length,
    p2: outcome.reported.filter((f) => f.severity === 'P2' && f.status === 'open').length,
    opened: outcome.opened,
    reopened: outcome.reopened,
    fixed: outcome.fixed,
    dismissed: outcome.stillDismissed,
    dismissed_inline: outcome.dismissedInline,
    files: diff.files.length,
    changed_lines: diff.files.reduce((n, f) => n + f.additions, 0),
    reviewers: lineup.length,
  };
  const lineupRecord = lineup.map((r) => ({
    key: r.key,
    reviewer_id: r.reviewer.id,
    engine: r.engine,
    model: r.engine === 'builtin' ? 'builtin/rules' : `${r.provider}/${r.model}`,
    pin_source: r.pinSource,
  }));
  lap('merge_ledger_ms');
  timings.reviewers_ms = Object.values(reviewerMs).reduce((a, b) => a + b, 0);
  await db.orm.insert(reviewResults).values({
    id: newId('reviewResult'),
    workspaceId: ctx.task.workspaceId,
    projectId,
    taskId: ctx.task.id,
    runId: ctx.run.id,
    pullRequestId: target.pullRequestId,
    baseSha: target.baseSha,
    headSha: target.headSha,
    lineup: lineupRecord,
    plan,
    counts,
    // The check's summary names the files this review could not read in full (files_not_analyzed).
    gaps: [...diff.gaps, ...gapsOfReviewers],
  });
  await countUse(db, ctx.task.workspaceId, [...new Set(lineup.map((r) => r.reviewer.id))]);
  if (config.delivery === 'codehost' && !deps.lifecycle) {
    // Said, not hidden: posting to the pull request arrives with the GitHub code host.
    ctx.gap({
      code: 'delivery_not_available',
      message: 'delivery "codehost" is not implemented yet; the findings are in the API only',
    });
  }
  await setReviewStatus(db, target.pullRequestId, 'reviewed', {
    columns: { lastReviewedAt: new Date(), lastReviewRunId: ctx.run.id },
    runId: ctx.run.id,
    // A push since the diff was read has its own trigger and check; its status is not ours.
    ifHead: target.headSha,
    // What the review did to the ledger, as one event rather than one per finding.
    details: {
      head_sha: target.headSha,
      counts: {
        p0: counts.p0,
        p1: counts.p1,
        p2: counts.p2,
        opened: counts.opened,
        opened_p0: outcome.openedP0,
        reopened: counts.reopened,
        fixed: counts.fixed,
      },
    },
  });
  await lifecycle(ctx, deps, job, 'reviewed');
  await ctx.progress({
    phase: 'done',
    statusText: `${counts.findings} finding(s)`,
    currentStep: 'done',
    pct: 100,
  });
  return {
    review: {
      timings: { ...timings, by_reviewer_ms: reviewerMs },
      pr: target.number,
      base_sha: target.baseSha,
      head_sha: target.headSha,
      lineup: lineupRecord,
      plan,
      counts,
      // What was read and what was not: a review with no findings must not pass for a full one.
      coverage: reviewCoverage({
        base: target.baseRefSha,
        head: target.headSha,
        mergeBase: target.mergeBaseSha,
        comparedFrom: target.baseSha,
        diff,
        files,
        gaps: [...diff.gaps, ...gapsOfReviewers],
      }),
    },
  };
}

/**
 * Nothing to review (an empty comparison): the run names the gap and ends without touching the
 * ledger (a finding is not fixed by a diff that shows nothing), and the pull request is `skipped`
 * with its check, not `reviewed`.
 */
async function notReviewable(
  ctx: RunContext,
  deps: ReviewDeps,
  job: { host: CodeHost; repo: string; config: ReviewConfig; target: Target },
  gap: Gap,
) {
  const { target } = job;
  ctx.gap(gap);
  await setReviewStatus(ctx.db, target.pullRequestId, 'skipped', {
    runId: ctx.run.id,
    details: { reason: gap.code, base_sha: target.baseSha, head_sha: target.headSha },
  });
  await lifecycle(ctx, deps, job, 'skipped', undefined, `No reviewable diff: ${gap.message}.`);
  await ctx.progress({ phase: 'done', statusText: 'nothing to review', currentStep: 'done', pct: 100 });
  return {
    review: {
      pr: target.number,
      base_sha: target.baseSha,
      head_sha: target.headSha,
      not_reviewed: gap.code,
      counts: { findings: 0, files: 0, changed_lines: 0, reviewers: 0 },
    },
  };
}

/** Tells the code host about a state change, for reviews delivered there. */
async function lifecycle(
  ctx: RunContext,
  deps: ReviewDeps,
  job: { host: CodeHost; repo: string; config: ReviewConfig; target: Target },
  status: 'reviewing' | 'reviews_available' | 'summarizing' | 'reviewed' | 'errored' | 'skipped',
  error?: unknown,
  reason?: string,
) {
  const { target } = job;
  if (
    !deps.lifecycle ||
    job.config.delivery !== 'codehost' ||
    !target.pullRequestId ||
    target.number === null
  )
    return;
  await deps.lifecycle.onStatus(ctx, {
    status,
    host: job.host,
    repo: job.repo,
    projectId: ctx.task.projectId ?? '',
    pullRequestId: target.pullRequestId,
    number: target.number,
    headSha: target.headSha,
    error,
    reason,
  });
}

async function recordModelStat(
  db: Database,
  workspaceId: string,
  reviewer: ResolvedReviewer,
  m: { findings: number; ms: number; failed: boolean },
) {
  const model = reviewer.engine === 'builtin' ? 'builtin/rules' : `${reviewer.provider}/${reviewer.model}`;
  await db.orm
    .insert(reviewerModelStats)
    .values({
      workspaceId,
      reviewerId: reviewer.reviewer.id,
      model,
      runs: 1,
      findings: m.findings,
      failures: m.failed ? 1 : 0,
      totalMs: m.ms,
      lastUsedAt: new Date(),
    })
    .onConflictDoUpdate({
      target: [reviewerModelStats.workspaceId, reviewerModelStats.reviewerId, reviewerModelStats.model],
      set: {
        runs: sql`${reviewerModelStats.runs} + 1`,
        findings: sql`${reviewerModelStats.findings} + ${m.findings}`,
        failures: sql`${reviewerModelStats.failures} + ${m.failed ? 1 : 0}`,
        totalMs: sql`${reviewerModelStats.totalMs} + ${m.ms}`,
        lastUsedAt: new Date(),
      },
    });
}
