/**
 * Pull request events → reviews. Filters (draft, release PR, no reviewable diff → check
 * `skipped`), dedupe (a head commit is reviewed once unless forced), the review deadline, and
 * merge counting toward the study pass.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import type { CodeHost } from '../codehost/types';
import {
  reviewDeadlineMs,
  reviewStatusesOfCheck,
  SKIPPED_ERRORED_TITLE,
  SKIPPED_FILTERED_TITLE,
  SKIPPED_PROJECT_OFF_TITLE,
  SKIPPED_PULL_REQUEST_OFF_TITLE,
  sizeBucket,
} from '../core/checks';
import { resolveProjectSettings } from '../core/settings';
import type { Engine } from '../engine/engine';
import { completePlansOfPullRequest } from '../plans/lifecycle';
import type { ReviewConfig } from '../review/config';
import type { AnnouncedReview } from '../review/run-review';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { setReviewStatus } from '../storage/review-status';
import { type PullRequestState, projects, pullRequests, reviewResults, runs } from '../storage/schema';
import { type CheckRow, type CheckTarget, checkQueued, checkSkipped, findCheck } from './check';

export interface AutomationDeps {
  db: Database;
  engine: Engine;
  codeHosts: CodeHosts;
}

export interface PullRequestEvent {
  action: string;
  installationId: number;
  repo: string;
  number: number;
  title: string;
  draft: boolean;
  merged: boolean;
  /**
   * The pull request is closed (GitHub's `state`), which any action can report: a closed pull
   * request can still be labelled or edited. Absent: closed exactly when the action is `closed`.
   */
  closed?: boolean;
  headRef: string | null;
  headSha: string;
  baseRef: string | null;
  author: string | null;
}

export type TriggerOutcome =
  | { outcome: 'review_started'; reason: string; taskId: string; runId: string }
  | {
      outcome: 'skipped' | 'deduplicated' | 'ignored' | 'merge_counted' | 'study_started';
      reason: string;
      taskId?: string;
    };

/** Merged pull requests between two study passes. */
export const MERGES_PER_STUDY = 10;
const REVIEW_ACTIONS = new Set(['opened', 'synchronize', 'reopened', 'ready_for_review']);

export async function findProject(db: Database, installationId: number, repo: string) {
  const [project] = await db.orm
    .select()
    .from(projects)
    .where(and(eq(projects.installationId, installationId), eq(projects.repoFullName, repo)))
    .limit(1);
  return project ?? null;
}

type ProjectRow = NonNullable<Awaited<ReturnType<typeof findProject>>>;

/** The project of `repo` in this installation and its code host, or why there is none to act on. */
export async function projectAndHost(
  deps: AutomationDeps,
  installationId: number,
  repo: string,
): Promise<{ project: ProjectRow; host: CodeHost } | { ignored: string }> {
  const project = await findProject(deps.db, installationId, repo);
  if (!project) return { ignored: `repository ${repo} is not a project of installation ${installationId}` };
  const host = deps.codeHosts.forInstallation(project.installationId);
  if (!host) return { ignored: `installation ${project.installationId} has no configured code host` };
  return { project, host };
}

export function isReleasePullRequest(event: Pick<PullRequestEvent, 'title' | 'headRef'>): boolean {
  return (
    /^(release|releases)[/-]/i.test(event.headRef ?? '') ||
    /^(release\b|chore\(release\))/i.test(event.title.trim())
  );
}

async function upsertPullRequest(
  db: Database,
  workspaceId: string,
  projectId: string,
  event: PullRequestEvent,
) {
  const closed = event.closed ?? event.action === 'closed';
  const state: PullRequestState = event.merged ? 'merged' : closed ? 'closed' : 'open';
  const fields = {
    state,
    title: event.title,
    author: event.author,
    draft: event.draft,
    headRef: event.headRef,
    baseRef: event.baseRef,
    headSha: event.headSha,
    updatedAt: new Date(),
  };
  const [row] = await db.orm
    .insert(pullRequests)
    .values({ id: newId('pullRequest'), workspaceId, projectId, number: event.number, ...fields })
    .onConflictDoUpdate({ target: [pullRequests.projectId, pullRequests.number], set: fields })
    .returning();
  if (!row) throw new Error('pull request upsert returned no row');
  return row;
}

/** p75 of past review durations for pull requests of this size (null: any size), capped at ten minutes. */
export async function deadlineFor(
  db: Database,
  projectId: string,
  changedLines: number | null,
): Promise<number> {
  const bucket = changedLines === null ? null : sizeBucket(changedLines);
  const past = await db.orm
    .select({ counts: reviewResults.counts, queuedAt: runs.queuedAt, finishedAt: runs.finishedAt })
    .from(reviewResults)
    .innerJoin(runs, eq(runs.id, reviewResults.runId))
    .where(eq(reviewResults.projectId, projectId))
    .orderBy(desc(reviewResults.createdAt))
    .limit(200);
  const durations = past
    .filter((r) => r.finishedAt && (bucket === null || sizeBucket(r.counts.changed_lines ?? 0) === bucket))
    .map((r) => (r.finishedAt as Date).getTime() - r.queuedAt.getTime());
  return reviewDeadlineMs(durations);
}

/** The check of a pull request head: where `Service / Review` is recorded and posted. */
export function checkTargetOf(
  project: Pick<typeof projects.$inferSelect, 'id' | 'workspaceId' | 'repoFullName'>,
  pr: Pick<typeof pullRequests.$inferSelect, 'id'>,
  headSha: string,
): CheckTarget {
  return {
    workspaceId: project.workspaceId,
    projectId: project.id,
    pullRequestId: pr.id,
    headSha,
    repo: project.repoFullName,
  };
}

/**
 * Puts a review task on its pull request head's check: `queued` with its deadline (persisted on
 * the check row, nothing held in memory), and the pull request `planning`. When the review
 * outlives the deadline, the serving process's DeadlineTimer completes the check "still
 * reviewing" (deadline-timer.ts): a hard cap no queue of reviews can delay.
 */
async function queueReviewCheck(
  deps: AutomationDeps,
  review: {
    project: typeof projects.$inferSelect;
    host: CodeHost;
    pr: typeof pullRequests.$inferSelect;
    headSha: string;
    taskId: string;
    deadlineMs: number;
  },
) {
  const { project, pr, headSha } = review;
  const target = checkTargetOf(project, pr, headSha);
  const deadlineAt = new Date(Date.now() + review.deadlineMs);
  await checkQueued(deps.db, review.host, target, deadlineAt, review.taskId);
  await setReviewStatus(deps.db, pr.id, 'planning');
}

/**
 * An API-created review delivered to the code host gets what an automatic one gets: its check
 * `queued` and the same deadline fallback, as the first step of its run (the acknowledgement asks
 * the code host nothing). The run has just written the pull request row; the deadline is the
 * project's p75 for reviews of any size, since no diff has been read yet.
 */
export async function announceApiReview(deps: AutomationDeps, review: AnnouncedReview): Promise<void> {
  const [project] = await deps.db.orm
    .select()
    .from(projects)
    .where(eq(projects.id, review.projectId))
    .limit(1);
  const host = project ? deps.codeHosts.forInstallation(project.installationId) : null;
  const [pr] = await deps.db.orm
    .select()
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, review.projectId), eq(pullRequests.number, review.pullRequest)))
    .limit(1);
  if (!project || !host || !pr?.headSha) return;
  const deadlineMs = await deadlineFor(deps.db, project.id, null);
  await queueReviewCheck(deps, { project, host, pr, headSha: pr.headSha, taskId: review.taskId, deadlineMs });
}

/** Starts an automatic review of a pull request head (delivered to the code host), with its check. */
export async function startAutomaticReview(
  deps: AutomationDeps,
  project: typeof projects.$inferSelect,
  host: CodeHost,
  pr: typeof pullRequests.$inferSelect,
  headSha: string,
  options: { force: boolean; reason: string },
): Promise<TriggerOutcome> {
  const target = checkTargetOf(project, pr, headSha);
  const existing = await findCheck(deps.db, target);
  if (existing && existing.conclusion !== 'skipped' && !options.force) {
    await restoreReviewStatus(deps.db, pr, existing);
    return {
      outcome: 'deduplicated',
      reason: `head ${headSha.slice(0, 12)} was already reviewed; @service review force reviews it again`,
    };
  }
  await setReviewStatus(deps.db, pr.id, 'trigger');
  let diff: Awaited<ReturnType<CodeHost['getDiff']>>;
  try {
    const info = await host.getPullRequest(project.repoFullName, pr.number);
    diff = await host.getDiff(
      project.repoFullName,
      info.mergeBaseSha ?? info.baseSha,
      info.headSha,
      {},
      { pullRequest: pr.number },
    );
  } catch (error) {
    // Never left at `trigger` with no check: the head says the review failed to run. A
    // redelivery (or the run's replacement) finds the check skipped and tries again.
    await checkSkipped(
      deps.db,
      host,
      target,
      SKIPPED_ERRORED_TITLE,
      `The pull request could not be read: ${(error as Error).message}`,
    ).catch(() => {});
    await setReviewStatus(deps.db, pr.id, 'errored', { details: { reason: (error as Error).message } });
    throw error;
  }
  const reviewable = diff.files.some(
    (f) => !f.skipped && f.change !== 'deleted' && f.changedLines.length > 0,
  );
  if (!reviewable) {
    await checkSkipped(
      deps.db,
      host,
      target,
      SKIPPED_FILTERED_TITLE,
      'No reviewable diff: nothing was added that svc can read.',
    );
    await setReviewStatus(deps.db, pr.id, 'skipped', { details: { reason: 'no reviewable diff' } });
    return { outcome: 'skipped', reason: 'no reviewable diff' };
  }
  const changedLines = diff.files.reduce((n, f) => n + f.additions, 0);
  const deadlineMs = await deadlineFor(deps.db, project.id, changedLines);
  const config: ReviewConfig = {
    pr: pr.number,
    base: null,
    head: null,
    reviewers: null,
    delivery: 'codehost',
  };
  const { task, run } = await deps.engine.createTask({
    workspaceId: project.workspaceId,
    projectId: project.id,
    kind: 'review',
    title: `Review of pull request #${pr.number} at ${headSha.slice(0, 12)} (${options.reason})`,
    input: { ...config, automatic: true } as unknown as Record<string, unknown>,
  });
  await queueReviewCheck(deps, { project, host, pr, headSha, taskId: task.id, deadlineMs });
  return {
    outcome: 'review_started',
    reason: `reviewing ${headSha.slice(0, 12)}`,
    taskId: task.id,
    runId: run.id,
  };
}

export async function onPullRequestEvent(
  deps: AutomationDeps,
  event: PullRequestEvent,
): Promise<TriggerOutcome> {
  const found = await projectAndHost(deps, event.installationId, event.repo);
  if ('ignored' in found) return { outcome: 'ignored', reason: found.ignored };
  const { project, host } = found;
  const pr = await upsertPullRequest(deps.db, project.workspaceId, project.id, event);

  if (event.action === 'closed') {
    if (!event.merged) return { outcome: 'ignored', reason: 'closed without merging' };
    // A plan's draft pull request merging completes the plan.
    await completePlansOfPullRequest(deps.db, project.id, pr.number);
    return countMerge(deps, project, pr);
  }
  if (!REVIEW_ACTIONS.has(event.action))
    return { outcome: 'ignored', reason: `action ${event.action} does not trigger a review` };
  const target = checkTargetOf(project, pr, event.headSha);
  const off = reviewOff(project, pr);
  if (off) return skipReviewOff(deps, host, target, pr, off);
  if (event.draft || isReleasePullRequest(event)) {
    await setReviewStatus(deps.db, pr.id, 'trigger');
    const why = event.draft ? 'draft pull request' : 'release pull request';
    await checkSkipped(deps.db, host, target, SKIPPED_FILTERED_TITLE, `Not reviewed: ${why}.`);
    await setReviewStatus(deps.db, pr.id, 'skipped', { details: { reason: why } });
    return { outcome: 'skipped', reason: why };
  }
  return startAutomaticReview(deps, project, host, pr, event.headSha, { force: false, reason: event.action });
}

/** Why automatic review is off for this pull request (the project's setting first), or null. */
function reviewOff(
  project: typeof projects.$inferSelect,
  pr: typeof pullRequests.$inferSelect,
): { title: string; reason: string } | null {
  if (!resolveProjectSettings(project.settings)['svc.review.enabled'])
    return {
      title: SKIPPED_PROJECT_OFF_TITLE,
      reason: 'automatic review is off for the project (svc.review.enabled)',
    };
  if (!pr.autoReview)
    return {
      title: SKIPPED_PULL_REQUEST_OFF_TITLE,
      reason: `automatic review is off for this pull request: ${pr.autoReviewOffReason ?? 'no reason given'}`,
    };
  return null;
}

/**
 * Review off still completes the head's check, `skipped`, saying how to turn it back on: a
 * required check that never appears would block the merge for good. A head that already has a
 * check (reviewed before review was turned off, or a review still under way) keeps it.
 */
async function skipReviewOff(
  deps: AutomationDeps,
  host: CodeHost,
  target: CheckTarget,
  pr: typeof pullRequests.$inferSelect,
  off: { title: string; reason: string },
): Promise<TriggerOutcome> {
  const existing = await findCheck(deps.db, target);
  if (existing) {
    await restoreReviewStatus(deps.db, pr, existing);
    return {
      outcome: 'ignored',
      reason: `${off.reason}; head ${target.headSha.slice(0, 12)} keeps its check`,
    };
  }
  await checkSkipped(deps.db, host, target, off.title, `Not reviewed: ${off.reason}.`);
  await setReviewStatus(deps.db, pr.id, 'skipped', { details: { reason: off.reason } });
  return { outcome: 'skipped', reason: off.reason };
}

/**
 * A trigger that changes nothing leaves the pull request's status in step with its head's
 * check: it was the status of that check's review, unless a review of another head moved it.
 */
async function restoreReviewStatus(
  db: Database,
  pr: Pick<typeof pullRequests.$inferSelect, 'id'>,
  check: CheckRow,
): Promise<void> {
  const agreeing = reviewStatusesOfCheck(check);
  const [current] = await db.orm
    .select({ reviewStatus: pullRequests.reviewStatus })
    .from(pullRequests)
    .where(eq(pullRequests.id, pr.id))
    .limit(1);
  if (agreeing.includes(current?.reviewStatus as never)) return;
  await setReviewStatus(db, pr.id, agreeing[0] as string, {
    details: { reason: `restored from the check of ${check.headSha.slice(0, 12)}` },
  });
}

async function countMerge(
  deps: AutomationDeps,
  project: typeof projects.$inferSelect,
  pr: typeof pullRequests.$inferSelect,
): Promise<TriggerOutcome> {
  if (pr.mergedAt) return { outcome: 'ignored', reason: 'merge already counted' };
  // Its state is already 'merged': upsertPullRequest took it from the event.
  await deps.db.orm.update(pullRequests).set({ mergedAt: new Date() }).where(eq(pullRequests.id, pr.id));
  const [updated] = await deps.db.orm
    .update(projects)
    .set({ mergesSinceStudy: sql`${projects.mergesSinceStudy} + 1` })
    .where(eq(projects.id, project.id))
    .returning({ merges: projects.mergesSinceStudy });
  const merges = updated?.merges ?? 0;
  if (merges < MERGES_PER_STUDY)
    return {
      outcome: 'merge_counted',
      reason: `${merges} of ${MERGES_PER_STUDY} merges toward the next study`,
    };
  await deps.db.orm.update(projects).set({ mergesSinceStudy: 0 }).where(eq(projects.id, project.id));
  const { task } = await deps.engine.createTask({
    workspaceId: project.workspaceId,
    projectId: project.id,
    kind: 'study',
    title: `Study after ${MERGES_PER_STUDY} merged pull requests`,
    input: { merges: MERGES_PER_STUDY },
  });
  return {
    outcome: 'study_started',
    reason: `${MERGES_PER_STUDY} merges since the last study`,
    taskId: task.id,
  };
}
