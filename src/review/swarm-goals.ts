/**
 * What each swarm goal fans out to, and what its result is once its children ran. A goal only
 * creates tasks the service already runs (reviews, the study pass, which is followed by a
 * scorecard); its result is read back from those tasks' runs, never guessed.
 *
 * - `review_open_pull_requests`: one review per pull request svc knows to be open (the rows the
 *   webhooks, the local watcher and earlier reviews keep); the result is each pull request's
 *   review status and open P0/P1/P2 counts.
 * - `rereview_merged`: the last `count` merged pull requests reviewed again over the exact range
 *   their last review read, by one reviewer on a candidate model. Every such run is measured into
 *   the reviewer's model statistics (`GET /reviewers/{id}/models`); the result puts the
 *   candidate's findings beside what the earlier review found on the same range.
 * - `study_and_rescore`: the study pass; its run enqueues a scorecard, which the swarm adopts as a
 *   child, so the result is the learnings written and the new score.
 */
import { and, desc, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { Tx } from '../engine/frames';
import type { CreateTaskInput, RunRow, TaskRow } from '../engine/types';
import { pullRequests, reviewResults } from '../storage/schema';
import type { ReviewConfig } from './config';
import { parseLineup, type ReviewerItem } from './lineup';

export const SWARM_GOALS = ['review_open_pull_requests', 'rereview_merged', 'study_and_rescore'] as const;
export type SwarmGoal = (typeof SWARM_GOALS)[number];

/** Params as stored on the swarm task (validated and defaulted by the create operation). */
export interface ReviewOpenParams {
  reviewers: ReviewerItem[] | null;
  delivery: 'none' | 'codehost';
  limit: number;
}
export interface RereviewParams {
  count: number;
  reviewer: { reviewer_id: string; model: string };
}
export type SwarmParams = ReviewOpenParams | RereviewParams | Record<string, never>;

export interface SwarmInput {
  goal: SwarmGoal;
  params: Record<string, unknown>;
}

/** One child to create, and what the swarm remembers about it (in its `started` event). */
export interface PlannedChild {
  task: Omit<CreateTaskInput, 'workspaceId' | 'projectId'>;
  about: Record<string, unknown>;
}

export interface FanOutPlan {
  children: PlannedChild[];
  /** What the goal could not include, each with its reason. */
  skipped: Record<string, unknown>[];
}

interface Scope {
  workspaceId: string;
  projectId: string;
}

const reviewTask = (title: string, config: ReviewConfig) => ({
  kind: 'review' as const,
  title,
  input: config as unknown as Record<string, unknown>,
});

async function planReviewOpen(tx: Tx, scope: Scope, swarmId: string, params: ReviewOpenParams) {
  // Open: not merged and not known closed. The newest pull requests are not favoured: by number.
  const open = await tx
    .select({ number: pullRequests.number })
    .from(pullRequests)
    .where(
      and(
        eq(pullRequests.projectId, scope.projectId),
        eq(pullRequests.state, 'open'),
        isNull(pullRequests.mergedAt),
      ),
    )
    .orderBy(pullRequests.number)
    .limit(params.limit + 1);
  const lineup = params.reviewers ? parseLineup(params.reviewers) : null;
  const plan: FanOutPlan = { children: [], skipped: [] };
  for (const { number } of open.slice(0, params.limit)) {
    plan.children.push({
      task: reviewTask(`Review of pull request #${number} (swarm ${swarmId})`, {
        pr: number,
        base: null,
        head: null,
        reviewers: lineup,
        delivery: params.delivery,
      }),
      about: { pr: number },
    });
  }
  if (open.length > params.limit)
    plan.skipped.push({ reason: 'over_limit', message: `more than ${params.limit} open pull requests` });
  return plan;
}

async function planRereview(tx: Tx, scope: Scope, swarmId: string, params: RereviewParams) {
  const merged = await tx
    .select({ id: pullRequests.id, number: pullRequests.number })
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, scope.projectId), isNotNull(pullRequests.mergedAt)))
    .orderBy(desc(pullRequests.mergedAt), desc(pullRequests.number))
    .limit(params.count);
  const lineup = parseLineup([params.reviewer]);
  const plan: FanOutPlan = { children: [], skipped: [] };
  for (const pr of merged) {
    // The range its last review read: the same code, so the two lineups are compared fairly. A
    // range review keeps its own ledger, so the measurement never touches the pull request's.
    const [last] = await tx
      .select()
      .from(reviewResults)
      .where(eq(reviewResults.pullRequestId, pr.id))
      .orderBy(desc(reviewResults.createdAt), desc(reviewResults.id))
      .limit(1);
    if (!last) {
      plan.skipped.push({
        pr: pr.number,
        reason: 'never_reviewed',
        message: `pull request #${pr.number} merged without a review, so there is no range to compare on`,
      });
      continue;
    }
    plan.children.push({
      task: reviewTask(
        `Re-review of #${pr.number} by ${params.reviewer.reviewer_id}@${params.reviewer.model} (swarm ${swarmId})`,
        { pr: null, base: last.baseSha, head: last.headSha, reviewers: lineup, delivery: 'none' },
      ),
      about: {
        pr: pr.number,
        base_sha: last.baseSha,
        head_sha: last.headSha,
        baseline: { review_task_id: last.taskId, counts: last.counts },
      },
    });
  }
  if (merged.length < params.count)
    plan.skipped.push({
      reason: 'fewer_merged',
      message: `${merged.length} merged pull request(s) known, ${params.count} asked for`,
    });
  return plan;
}

/** The children a goal creates, read in the fan-out's transaction. */
export async function planFanOut(
  tx: Tx,
  scope: Scope,
  swarmId: string,
  input: SwarmInput,
): Promise<FanOutPlan> {
  switch (input.goal) {
    case 'review_open_pull_requests':
      return planReviewOpen(tx, scope, swarmId, input.params as unknown as ReviewOpenParams);
    case 'rereview_merged':
      return planRereview(tx, scope, swarmId, input.params as unknown as RereviewParams);
    case 'study_and_rescore':
      return {
        children: [
          {
            task: { kind: 'study', title: `Study pass (swarm ${swarmId})`, input: { requested_by: swarmId } },
            about: {},
          },
        ],
        skipped: [],
      };
  }
}

/** A child task with its latest run and what the fan-out remembered about it. */
export interface ChildView {
  task: TaskRow;
  latest: RunRow | null;
  about: Record<string, unknown>;
}

type ReviewCounts = Record<string, number>;
const reviewCounts = (run: RunRow | null): ReviewCounts | null =>
  run?.status === 'completed'
    ? ((run.result as { review?: { counts?: ReviewCounts } } | null)?.review?.counts ?? null)
    : null;
const runStatus = (c: ChildView) => c.latest?.status ?? 'pending';
const errorCode = (c: ChildView) => (c.latest?.status === 'failed' ? (c.latest.error?.code ?? null) : null);

function sumCounts(views: ChildView[], key: string): number | null {
  const counts = views.map((c) => reviewCounts(c.latest)).filter((c): c is ReviewCounts => c !== null);
  return counts.length === 0 ? null : counts.reduce((n, c) => n + (c[key] ?? 0), 0);
}

async function reviewOpenResult(tx: Tx, projectId: string, children: ChildView[]) {
  const numbers = children.map((c) => Number(c.about.pr));
  const rows =
    numbers.length === 0
      ? []
      : await tx
          .select({ number: pullRequests.number, reviewStatus: pullRequests.reviewStatus })
          .from(pullRequests)
          .where(and(eq(pullRequests.projectId, projectId), inArray(pullRequests.number, numbers)));
  const statusOf = new Map(rows.map((r) => [r.number, r.reviewStatus]));
  return {
    pull_requests: children.map((c) => {
      const counts = reviewCounts(c.latest);
      return {
        pr: Number(c.about.pr),
        task_id: c.task.id,
        run_status: runStatus(c),
        error_code: errorCode(c),
        review_status: statusOf.get(Number(c.about.pr)) ?? null,
        findings: counts?.findings ?? null,
        p0: counts?.p0 ?? null,
        p1: counts?.p1 ?? null,
        p2: counts?.p2 ?? null,
      };
    }),
    open: { p0: sumCounts(children, 'p0'), p1: sumCounts(children, 'p1'), p2: sumCounts(children, 'p2') },
  };
}

function rereviewResult(params: RereviewParams, children: ChildView[]) {
  const completed = children.filter((c) => c.latest?.status === 'completed');
  const durations = completed
    .map((c) =>
      c.latest?.startedAt && c.latest.finishedAt
        ? c.latest.finishedAt.getTime() - c.latest.startedAt.getTime()
        : null,
    )
    .filter((d): d is number => d !== null);
  return {
    reviewer_id: params.reviewer.reviewer_id,
    model: params.reviewer.model,
    // Every run above was also counted into the reviewer's per-model statistics there.
    models_url: `/api/v1/reviewers/${params.reviewer.reviewer_id}/models`,
    measured: {
      reviews: children.length,
      completed: completed.length,
      failed: children.filter((c) => c.latest?.status === 'failed').length,
      findings: sumCounts(children, 'findings'),
      baseline_findings: completed.length ? completed.reduce((n, c) => n + baselineFindings(c), 0) : null,
      avg_ms: durations.length ? Math.round(durations.reduce((a, b) => a + b, 0) / durations.length) : null,
    },
    pull_requests: children.map((c) => ({
      pr: Number(c.about.pr),
      task_id: c.task.id,
      base_sha: c.about.base_sha,
      head_sha: c.about.head_sha,
      run_status: runStatus(c),
      error_code: errorCode(c),
      findings: reviewCounts(c.latest)?.findings ?? null,
      baseline_findings: baselineFindings(c),
      baseline_review_task_id:
        (c.about.baseline as { review_task_id?: string } | undefined)?.review_task_id ?? null,
    })),
  };
}

function baselineFindings(c: ChildView): number {
  return Number((c.about.baseline as { counts?: ReviewCounts } | undefined)?.counts?.findings ?? 0);
}

function studyResult(children: ChildView[]) {
  const study = children.find((c) => c.task.kind === 'study');
  const scorecard = children.find((c) => c.task.kind === 'scorecard');
  const studied =
    study?.latest?.status === 'completed' ? (study.latest.result as Record<string, unknown>) : null;
  const learnings = studied?.learnings as { created?: string[]; refreshed?: string[] } | undefined;
  const scored =
    scorecard?.latest?.status === 'completed' ? (scorecard.latest.result as Record<string, unknown>) : null;
  const change = scored?.change as { score?: { from?: number | null } } | undefined;
  return {
    study: study
      ? {
          task_id: study.task.id,
          run_status: runStatus(study),
          error_code: errorCode(study),
          learnings_created: learnings?.created ?? null,
          learnings_refreshed: learnings?.refreshed ?? null,
        }
      : null,
    scorecard: scorecard
      ? {
          task_id: scorecard.task.id,
          run_status: runStatus(scorecard),
          error_code: errorCode(scorecard),
          scorecard_id: (scored?.scorecard_id as string | undefined) ?? null,
          score: (scored?.score as number | null | undefined) ?? null,
          previous_score: change?.score?.from ?? null,
          level: scored?.level ?? null,
        }
      : null,
  };
}

/** The goal's result as far as its children have got (final once every child has ended). */
export async function goalResult(
  tx: Tx,
  projectId: string,
  input: SwarmInput,
  children: ChildView[],
): Promise<Record<string, unknown>> {
  switch (input.goal) {
    case 'review_open_pull_requests':
      return reviewOpenResult(tx, projectId, children);
    case 'rereview_merged':
      return rereviewResult(input.params as unknown as RereviewParams, children);
    case 'study_and_rescore':
      return studyResult(children);
  }
}

/**
 * Tasks a child's successful run enqueued as its own follow-up, which belong to the swarm too:
 * the study pass names the scorecard it queued (`scorecard_task_id`).
 */
export function followUpTaskIds(child: ChildView): string[] {
  if (child.task.kind !== 'study' || child.latest?.status !== 'completed') return [];
  const id = (child.latest.result as { scorecard_task_id?: unknown } | null)?.scorecard_task_id;
  return typeof id === 'string' ? [id] : [];
}
