/**
 * The scorecard task kinds: `scorecard` (compute and store the project's scorecard) and
 * `quick_action` (do one quick action on the code host). `followedByScorecard` makes any kind
 * enqueue a scorecard when its run succeeds (setup, the study pass), so the scorecard is fresh
 * after whatever changed its facts.
 */
import { and, eq } from 'drizzle-orm';
import type { CodeHosts } from '../../codehost';
import { RunFailure } from '../../core/failures';
import { computeScorecard } from '../../scorecards/compute';
import { failureOf, QuickActionFailure, recordFailure, runQuickAction } from '../../scorecards/run-action';
import { SCORECARD_TRIGGERS, type ScorecardTrigger } from '../../scorecards/store';
import { quickActions } from '../../storage/schema';
import type { Engine } from '../engine';
import { projectOf } from '../project-host';
import type { RunContext, TaskHandler } from '../types';

/** Creates the task that computes a project's scorecard; returns its task and run. */
export function enqueueScorecard(
  engine: Engine,
  project: { workspaceId: string; projectId: string },
  trigger: ScorecardTrigger,
) {
  return engine.createTask({
    workspaceId: project.workspaceId,
    projectId: project.projectId,
    kind: 'scorecard',
    title: `Scorecard (${trigger})`,
    input: { trigger },
  });
}

export function scorecardHandler(codeHosts: CodeHosts): TaskHandler {
  return async (ctx) => {
    const project = await projectOf(ctx);
    // Without a code host the scorecard is still computed from what is stored, its gaps say so.
    const host = codeHosts.forInstallation(project.installationId);
    const requested = (ctx.run.input as { trigger?: string }).trigger;
    const trigger = SCORECARD_TRIGGERS.find((t) => t === requested) ?? 'request';
    ctx.setBackend({ harness: 'static-inspection', provider: null, model: null, preset: 'scorecard' });
    await ctx.progress({
      phase: 'reading',
      statusText: `reading the facts of ${project.repoFullName}`,
      pct: 10,
    });
    const computed = await computeScorecard(ctx.db.orm, host, project, { trigger, taskId: ctx.task.id });
    const { scorecard, summary, change, actions } = computed;
    for (const gap of scorecard.gaps) ctx.gap(gap);
    ctx.setSeedGraph({
      counts: { ...summary.counts, checks: computed.checks.length, quick_actions: actions.length },
      gaps: scorecard.gaps,
    });
    const next = summary.next_level
      ? `; level ${summary.next_level.level} ${summary.next_level.name} needs ${summary.next_level.needs.join(', ')}`
      : '';
    await ctx.message(
      'assistant',
      `Score ${summary.score ?? 'unknown'}/100, level ${summary.level.level} ${summary.level.name}${next}. ` +
        `${summary.counts.pass} checks pass, ${summary.counts.fail} fail, ${summary.counts.unknown} unknown; ` +
        `${change.changed.length} changed since ${change.previous_scorecard_id ?? 'no earlier scorecard'}.`,
      change,
    );
    await ctx.progress({ phase: 'done', statusText: 'scorecard recorded', pct: 100 });
    return {
      scorecard_id: scorecard.id,
      score: summary.score,
      level: summary.level,
      next_level: summary.next_level,
      counts: summary.counts,
      change,
      quick_actions: actions.map((a) => a.id),
    };
  };
}

async function actionOf(ctx: RunContext) {
  const id = (ctx.run.input as { quick_action_id?: string }).quick_action_id ?? '';
  const [action] = await ctx.db.orm
    .select()
    .from(quickActions)
    .where(and(eq(quickActions.id, id), eq(quickActions.projectId, ctx.task.projectId ?? '')))
    .limit(1);
  if (!action) throw new RunFailure('skill_instance_not_found', `quick action ${id} no longer exists`);
  return action;
}

/** Does one quick action; its status and result record what happened, a failure fails the run by name. */
export function quickActionHandler(codeHosts: CodeHosts): TaskHandler {
  const handler: TaskHandler = async (ctx) => {
    const action = await actionOf(ctx);
    const project = await projectOf(ctx);
    const host = codeHosts.forInstallation(project.installationId);
    if (!host) {
      const message = `installation ${project.installationId} has no configured code host`;
      await recordFailure(ctx.db.orm, action.id, new QuickActionFailure(message, 'unavailable'));
      throw new RunFailure('backend_unavailable', message);
    }
    ctx.setBackend({
      harness: 'codehost',
      provider: null,
      model: null,
      preset: `quick_action:${action.kind}`,
    });
    await ctx.progress({ phase: 'acting', statusText: action.title, currentStep: action.kind, pct: 20 });
    try {
      const result = await runQuickAction(ctx.db.orm, host, project.repoFullName, action);
      await ctx.message('assistant', `${action.title}: done.`, result);
      await ctx.progress({ phase: 'done', statusText: 'quick action done', pct: 100 });
      return { quick_action_id: action.id, kind: action.kind, ...result };
    } catch (error) {
      const failure = failureOf(error);
      throw new RunFailure(
        'tool_failed',
        `quick action ${action.kind} failed (${failure.reason}): ${failure.message}`,
      );
    }
  };
  // A brake refused the run, or the sweeper gave up on it: the action is not left `running`.
  handler.abandoned = async (ctx, error) => {
    const action = await actionOf(ctx).catch(() => null);
    if (action) await recordFailure(ctx.db.orm, action.id, error);
  };
  return handler;
}

/**
 * The handler, then a scorecard task once its run succeeded; the new task's id joins the run's
 * result. Enqueueing it never fails the run: a refusal is a gap on it.
 */
export function followedByScorecard(
  handler: TaskHandler,
  trigger: ScorecardTrigger,
  engine: Engine,
): TaskHandler {
  const wrapped: TaskHandler = async (ctx) => {
    const result = await handler(ctx);
    if (!ctx.task.projectId) return result;
    try {
      const { task } = await enqueueScorecard(
        engine,
        { workspaceId: ctx.task.workspaceId, projectId: ctx.task.projectId },
        trigger,
      );
      return { ...result, scorecard_task_id: task.id };
    } catch (error) {
      ctx.gap({
        code: 'scorecard_not_enqueued',
        message: `the scorecard was not recomputed after this ${trigger}: ${error instanceof Error ? error.message : String(error)}`,
      });
      return result;
    }
  };
  if (handler.abandoned) wrapped.abandoned = handler.abandoned;
  return wrapped;
}
