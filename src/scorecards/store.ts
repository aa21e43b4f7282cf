/**
 * Stored scorecards: each computation writes one scorecard, its checks and its quick actions in
 * one transaction, with a `computed` event on the new scorecard saying what changed since the
 * previous one (score, level, and each check whose result moved). Old scorecards stay as history.
 */
import { and, asc, desc, eq } from 'drizzle-orm';
import type { Gap } from '../core/runs';
import type { Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { appendObjectEvent } from '../storage/object-events';
import { quickActions, scorecardChecks, scorecards } from '../storage/schema';
import type { CheckOutcome, ScorecardSummary, SuggestedAction } from './types';

export type ScorecardRow = typeof scorecards.$inferSelect;
export type ScorecardCheckRow = typeof scorecardChecks.$inferSelect;
export type QuickActionRow = typeof quickActions.$inferSelect;

export const SCORECARD_TRIGGERS = ['setup', 'study', 'request'] as const;
export type ScorecardTrigger = (typeof SCORECARD_TRIGGERS)[number];

/** The tool and route that run a quick action as a task. */
export const QUICK_ACTION_RUN_TOOL = 'quick_actions_run';
export const quickActionRunPath = (id: string) => `/api/v1/quick-actions/${id}/runs`;

/** What changed between two scorecards: the payload of the `computed` event. */
export interface ScorecardChange {
  previous_scorecard_id: string | null;
  score: { from: number | null; to: number | null };
  level: { from: number | null; to: number };
  changed: { check: string; from: string | null; to: string }[];
}

export async function latestScorecard(
  orm: Orm,
  workspaceId: string,
  projectId: string,
): Promise<ScorecardRow | null> {
  const [row] = await orm
    .select()
    .from(scorecards)
    .where(and(eq(scorecards.workspaceId, workspaceId), eq(scorecards.projectId, projectId)))
    .orderBy(desc(scorecards.computedAt), desc(scorecards.id))
    .limit(1);
  return row ?? null;
}

export async function checksOf(orm: Orm, scorecardId: string): Promise<ScorecardCheckRow[]> {
  return orm
    .select()
    .from(scorecardChecks)
    .where(eq(scorecardChecks.scorecardId, scorecardId))
    .orderBy(asc(scorecardChecks.id));
}

export interface NewScorecard {
  workspaceId: string;
  projectId: string;
  commitSha: string | null;
  knowledgeId: string | null;
  summary: ScorecardSummary;
  outcomes: CheckOutcome[];
  actions: SuggestedAction[];
  gaps: Gap[];
  trigger: ScorecardTrigger;
  taskId: string | null;
  computedAt: Date;
}

export interface SavedScorecard {
  scorecard: ScorecardRow;
  checks: ScorecardCheckRow[];
  actions: QuickActionRow[];
  change: ScorecardChange;
}

/** Writes the scorecard, its checks and quick actions, and its `computed` event, in one transaction. */
export async function saveScorecard(orm: Orm, input: NewScorecard): Promise<SavedScorecard> {
  return orm.transaction(async (tx) => {
    const [previous] = await tx
      .select()
      .from(scorecards)
      .where(and(eq(scorecards.workspaceId, input.workspaceId), eq(scorecards.projectId, input.projectId)))
      .orderBy(desc(scorecards.computedAt), desc(scorecards.id))
      .limit(1);
    const before = previous
      ? await tx
          .select({ check: scorecardChecks.check, result: scorecardChecks.result })
          .from(scorecardChecks)
          .where(eq(scorecardChecks.scorecardId, previous.id))
      : [];
    const at = input.computedAt;
    const scope = { workspaceId: input.workspaceId, projectId: input.projectId };
    const [scorecard] = await tx
      .insert(scorecards)
      .values({
        id: newId('scorecard'),
        ...scope,
        commitSha: input.commitSha,
        knowledgeId: input.knowledgeId,
        score: input.summary.score,
        level: input.summary.level.level,
        nextLevel: input.summary.next_level,
        counts: input.summary.counts,
        gaps: input.gaps,
        trigger: input.trigger,
        taskId: input.taskId,
        previousScorecardId: previous?.id ?? null,
        computedAt: at,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    if (!scorecard) throw new Error('scorecard insert returned no row');
    // Inserted one by one, in catalogue order: ids are time-ordered, so `ORDER BY id` is that order.
    const checks: ScorecardCheckRow[] = [];
    for (const o of input.outcomes) {
      const [row] = await tx
        .insert(scorecardChecks)
        .values({
          id: newId('scorecardCheck'),
          ...scope,
          scorecardId: scorecard.id,
          check: o.check,
          title: o.title,
          category: o.category,
          weight: o.weight,
          result: o.result,
          evidence: o.evidence as unknown as Record<string, unknown>,
          remedy: o.remedy,
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      if (row) checks.push(row);
    }
    const actions: QuickActionRow[] = [];
    for (const a of input.actions) {
      const id = newId('quickAction');
      const [row] = await tx
        .insert(quickActions)
        .values({
          id,
          ...scope,
          scorecardId: scorecard.id,
          kind: a.kind,
          check: a.check,
          title: a.title,
          does: a.does,
          operation:
            a.execution === null
              ? null
              : { tool: QUICK_ACTION_RUN_TOOL, method: 'POST', path: quickActionRunPath(id) },
          whyNoOperation: a.why_no_operation,
          change: a.change as unknown as Record<string, unknown> | null,
          status: 'available',
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      if (row) actions.push(row);
    }
    const was = new Map(before.map((b) => [b.check, b.result]));
    const change: ScorecardChange = {
      previous_scorecard_id: previous?.id ?? null,
      score: { from: previous ? previous.score : null, to: scorecard.score },
      level: { from: previous ? previous.level : null, to: scorecard.level },
      changed: input.outcomes
        .filter((o) => was.get(o.check) !== o.result)
        .map((o) => ({ check: o.check, from: was.get(o.check) ?? null, to: o.result })),
    };
    await appendObjectEvent(tx, {
      ...scope,
      objectType: 'scorecard',
      objectId: scorecard.id,
      kind: 'computed',
      payload: change as unknown as Record<string, unknown>,
      occurredAt: at,
      actor: null,
    });
    return { scorecard, checks, actions, change };
  });
}
