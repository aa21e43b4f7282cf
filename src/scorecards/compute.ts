/** One scorecard computation: read the facts, judge the checks, suggest the next steps, store it all. */
import type { CodeHost } from '../codehost/types';
import type { Orm } from '../storage/database';
import { evaluateChecks, summarize } from './evaluate';
import { gatherFacts, type ScorecardProject } from './gather';
import { suggestActions } from './quick-actions';
import { type SavedScorecard, type ScorecardTrigger, saveScorecard } from './store';
import type { ScorecardSummary } from './types';

export interface ComputedScorecard extends SavedScorecard {
  summary: ScorecardSummary;
}

export async function computeScorecard(
  orm: Orm,
  host: CodeHost | null,
  project: ScorecardProject,
  options: { trigger: ScorecardTrigger; taskId: string | null; now?: Date },
): Promise<ComputedScorecard> {
  const now = options.now ?? new Date();
  const { facts, gaps } = await gatherFacts(orm, host, project, now);
  const outcomes = evaluateChecks(facts);
  const summary = summarize(outcomes);
  const actions = suggestActions(outcomes, facts);
  const saved = await saveScorecard(orm, {
    workspaceId: project.workspaceId,
    projectId: project.id,
    commitSha: facts.commitSha,
    knowledgeId: facts.knowledge?.id ?? null,
    summary,
    outcomes,
    actions,
    gaps,
    trigger: options.trigger,
    taskId: options.taskId,
    computedAt: now,
  });
  return { ...saved, summary };
}
