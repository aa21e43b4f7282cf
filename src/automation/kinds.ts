/**
 * Task kinds of the pull request automation: the review deadline, fix proposals, the study pass
 * and plan reviews. Each is small but real, and fails by name when it cannot do its work.
 */
import { and, desc, eq, gt, sql } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import { RunFailure } from '../core/failures';
import type { Engine } from '../engine/engine';
import { projectAndHost } from '../engine/project-host';
import type { TaskHandler } from '../engine/types';
import { readFrontMatter } from '../plans/document';
import { recordPlanReview } from '../plans/lifecycle';
import { newId } from '../storage/ids';
import { checkRuns, findings, learnings, pullRequests, runs } from '../storage/schema';
import { checkStillReviewing } from './check';

const DAY_MS = 24 * 60 * 60 * 1000;

async function reviewEnded(ctx: Parameters<TaskHandler>[0], reviewTaskId: string): Promise<boolean> {
  const [latest] = await ctx.db.orm
    .select({ status: runs.status })
    .from(runs)
    .where(eq(runs.taskId, reviewTaskId))
    .orderBy(desc(runs.createdAt))
    .limit(1);
  return latest !== undefined && ['completed', 'failed', 'canceled'].includes(latest.status);
}

/** When a review outlives its deadline, its check completes `neutral` ("still reviewing"). */
export function checkDeadlineHandler(codeHosts: CodeHosts): TaskHandler {
  return async (ctx) => {
    const input = ctx.run.input as { pull_request_id: string; head_sha: string; review_task_id?: string };
    // The deadline guards one review: once that review has ended, a check now in progress
    // belongs to another review of the same head, which has a deadline of its own.
    if (input.review_task_id && (await reviewEnded(ctx, input.review_task_id)))
      return { action: 'none', reason: 'the review it guards has ended' };
    const [check] = await ctx.db.orm
      .select()
      .from(checkRuns)
      .where(and(eq(checkRuns.pullRequestId, input.pull_request_id), eq(checkRuns.headSha, input.head_sha)))
      .limit(1);
    if (!check)
      throw new RunFailure(
        'skill_instance_not_found',
        `no check for ${input.pull_request_id} at ${input.head_sha}`,
      );
    if (check.status === 'completed')
      return { action: 'none', reason: 'the review landed before its deadline' };
    const { project, host } = await projectAndHost(ctx, codeHosts);
    await checkStillReviewing(ctx.db, host, {
      workspaceId: project.workspaceId,
      projectId: project.id,
      pullRequestId: input.pull_request_id,
      headSha: input.head_sha,
      repo: project.repoFullName,
    });
    return { action: 'still_reviewing' };
  };
}

/**
 * `fix this`: proposes a patch for a finding as a suggestion on its thread. The rule engines and
 * model reviewers attach a replacement when they are sure of one; without it there is nothing
 * safe to propose, and the run says so by name.
 */
export function fixHandler(codeHosts: CodeHosts): TaskHandler {
  return async (ctx) => {
    const input = ctx.run.input as { finding_id: string; pull_request: number; reply_to: string | null };
    const [finding] = await ctx.db.orm
      .select()
      .from(findings)
      .where(eq(findings.id, input.finding_id))
      .limit(1);
    if (!finding)
      throw new RunFailure('skill_instance_not_found', `finding ${input.finding_id} no longer exists`);
    if (!finding.suggestion) {
      throw new RunFailure(
        'tool_failed',
        `no fix can be proposed for ${finding.rule} at ${finding.path}:${finding.line}: the finding carries no replacement; its body says how to fix it by hand`,
      );
    }
    const { project, host } = await projectAndHost(ctx, codeHosts);
    const patch = ['```suggestion', finding.suggestion, '```'].join('\n');
    await host.postComment(project.repoFullName, {
      pullRequest: input.pull_request,
      inReplyTo: input.reply_to,
      body: `Proposed fix for lines ${finding.line}-${finding.endLine}:\n\n${patch}`,
    });
    await ctx.message(
      'assistant',
      `Proposed a replacement for ${finding.path}:${finding.line}-${finding.endLine}.`,
      { patch },
    );
    return {
      finding_id: finding.id,
      proposed_patch: {
        path: finding.path,
        line: finding.line,
        end_line: finding.endLine,
        replacement: finding.suggestion,
      },
    };
  };
}

/** Marks the learnings the study pass writes, so a later pass finds and refreshes its own. */
const STUDY_WHY = 'study pass: repeated dismissals';

/**
 * The study pass (after ten merges): what the project's reviews taught. Rules whose findings
 * people dismissed again and again become learnings, so later reviews are told about them.
 */

export const studyHandler: TaskHandler = async (ctx) => {
  const projectId = ctx.task.projectId ?? '';
  const rows = await ctx.db.orm
    .select({ rule: findings.rule, status: findings.status, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(eq(findings.projectId, projectId))
    .groupBy(findings.rule, findings.status);
  const byRule = new Map<string, Record<string, number>>();
  for (const r of rows) byRule.set(r.rule, { ...(byRule.get(r.rule) ?? {}), [r.status]: Number(r.n) });
  // A rule people keep dismissing becomes a scoped learning: its findings are downgraded from then
  // on. One learning per rule: a later pass refreshes it (sentence, learned_at, forgets_at).
  const created: string[] = [];
  const refreshed: string[] = [];
  const now = new Date();
  for (const [rule, counts] of byRule) {
    const dismissed = counts.dismissed ?? 0;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    if (dismissed < 3 || dismissed / total < 0.5) continue;
    const learning = `Findings of rule ${rule} were dismissed ${dismissed} of ${total} times in this repository; report it only when clearly exploitable or wrong.`;
    const values = {
      learning,
      why: STUDY_WHY,
      learnedAt: now,
      forgetsAt: new Date(now.getTime() + 90 * DAY_MS),
      scope: { rule, action: 'downgrade' as const },
      updatedAt: now,
    };
    const [existing] = await ctx.db.orm
      .select({ id: learnings.id })
      .from(learnings)
      .where(
        and(
          eq(learnings.projectId, projectId),
          eq(learnings.why, STUDY_WHY),
          sql`${learnings.scope}->>'rule' = ${rule}`,
        ),
      )
      .limit(1);
    if (existing) {
      await ctx.db.orm.update(learnings).set(values).where(eq(learnings.id, existing.id));
      refreshed.push(existing.id);
    } else {
      const id = newId('learning');
      await ctx.db.orm
        .insert(learnings)
        .values({ id, workspaceId: ctx.task.workspaceId, projectId, createdAt: now, ...values });
      created.push(id);
    }
  }
  const merged = await ctx.db.orm
    .select({ n: sql<number>`count(*)::int` })
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, projectId), gt(pullRequests.mergedAt, new Date(0))));
  if (created.length + refreshed.length === 0)
    ctx.gap({ code: 'nothing_learned', message: 'no rule was dismissed often enough to become a learning' });
  return {
    rules: Object.fromEntries(byRule),
    learnings: { created, refreshed },
    merged_pull_requests: Number(merged[0]?.n ?? 0),
  };
};

const SECTION = (names: string) => new RegExp(`^#{1,6}\\s*(${names})\\b`, 'im');

/**
 * Reviews a plan document: is it a plan someone can act on? Records the score on the plan, moves
 * it to `reviewed` (and on, when its front matter waives approval or supersedes older plans).
 */
export function planReviewHandler(codeHosts: CodeHosts, engine: Engine): TaskHandler {
  return async (ctx) => {
    const input = ctx.run.input as { plan_id: string; path: string; ref: string };
    const { project, host } = await projectAndHost(ctx, codeHosts);
    const bytes = await host.readFile(project.repoFullName, input.ref, input.path);
    if (!bytes)
      throw new RunFailure(
        'tool_failed',
        `plan document ${input.path} is not in ${project.repoFullName} at ${input.ref}`,
      );
    const text = bytes.toString('utf8');
    const checks = {
      title: /^#\s+\S/m.test(text),
      goal: SECTION('goal|goals|outcome|objective|why').test(text),
      steps: SECTION('steps|plan|approach|milestones|tasks').test(text) || /^\s*(?:\d+\.|-)\s+\S/m.test(text),
      risks: SECTION('risks?|open questions|alternatives').test(text),
      done_when: SECTION('done when|acceptance|success criteria|definition of done').test(text),
    };
    const score = Object.values(checks).filter(Boolean).length / Object.keys(checks).length;
    const goal = SECTION('goal|goals|outcome|objective').exec(text);
    const targetOutcome = goal
      ? (text
          .slice(goal.index)
          .split('\n')
          .slice(1)
          .find((l) => l.trim())
          ?.trim() ?? null)
      : null;
    const summary =
      text
        .split('\n')
        .find((l) => /^#\s+/.test(l))
        ?.replace(/^#\s+/, '') ?? input.path;
    for (const [part, present] of Object.entries(checks)) {
      if (!present)
        ctx.gap({
          code: `plan_missing_${part}`,
          message: `${input.path} has no ${part.replace('_', ' ')} section`,
        });
    }
    const frontMatter = readFrontMatter(text);
    for (const problem of frontMatter.problems)
      ctx.gap({ code: 'plan_front_matter_invalid', message: `${input.path}: ${problem}` });
    const plan = await recordPlanReview(
      ctx.db,
      engine,
      { workspaceId: project.workspaceId, projectId: project.id },
      input.plan_id,
      { score: { ...checks, score }, summary, targetOutcome, frontMatter },
    );
    return {
      plan_id: input.plan_id,
      score,
      checks,
      status: plan.status,
      approval_status: plan.approvalStatus,
      supersedes: frontMatter.supersedes,
    };
  };
}
