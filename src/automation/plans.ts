/**
 * Pushes to the default branch. A markdown document under `docs/plans/`, `prds/` or
 * `.svc/plans/` becomes a plan with exactly one plan-review run (a document that already is a
 * plan changes nothing); a change to a file the repository knowledge is derived from starts a
 * `knowledge_refresh` task, so reviews are told the repository as it now is.
 */
import { PLAN_DOCUMENT_PATH } from '../core/plans';
import { knowledgeFilesWanted } from '../knowledge/derive';
import { discoverPlan } from '../plans/lifecycle';
import { type AutomationDeps, findProject } from './triggers';

export interface PushEvent {
  installationId: number;
  repo: string;
  /** `refs/heads/<branch>` */
  ref: string;
  after: string;
  defaultBranch: string | null;
  /** Files added or modified by the pushed commits. */
  paths: string[];
}

export async function onPush(deps: AutomationDeps, event: PushEvent) {
  const project = await findProject(deps.db, event.installationId, event.repo);
  if (!project)
    return {
      outcome: 'ignored' as const,
      reason: `repository ${event.repo} is not a project`,
      plans: [],
      knowledge_refresh_task_id: null,
    };
  if (event.defaultBranch && event.ref !== `refs/heads/${event.defaultBranch}`) {
    return {
      outcome: 'ignored' as const,
      reason: `push to ${event.ref}, not the default branch`,
      plans: [],
      knowledge_refresh_task_id: null,
    };
  }
  const started = await discoverPlanDocuments(deps, project, event.paths, event.after);
  const knowledgeInputs = knowledgeFilesWanted(event.paths);
  const knowledgeTask =
    knowledgeInputs.length === 0
      ? null
      : (
          await deps.engine.createTask({
            workspaceId: project.workspaceId,
            projectId: project.id,
            kind: 'knowledge_refresh',
            title: `Refresh repository knowledge after ${knowledgeInputs.slice(0, 3).join(', ')} changed`,
            input: { after: event.after, paths: knowledgeInputs },
          })
        ).task.id;
  return {
    outcome: started.length > 0 ? ('plans_found' as const) : ('ignored' as const),
    reason: `${started.length} new plan document(s)${knowledgeTask ? '; repository knowledge refreshing' : ''}`,
    plans: started,
    knowledge_refresh_task_id: knowledgeTask,
  };
}

/**
 * Makes a plan, with its one plan-review task, of each plan document among `paths` at `commit`
 * that is not one yet: the documents a push added or modified, or those setup found already on
 * the default branch. A document that already is a plan changes nothing, so each becomes a plan once.
 */
export async function discoverPlanDocuments(
  deps: Pick<AutomationDeps, 'db' | 'engine'>,
  project: { id: string; workspaceId: string },
  paths: readonly string[],
  commit: string,
): Promise<{ plan_id: string; path: string; task_id: string }[]> {
  const started: { plan_id: string; path: string; task_id: string }[] = [];
  for (const path of [...new Set(paths)].filter((p) => PLAN_DOCUMENT_PATH.test(p))) {
    const found = await discoverPlan(deps.db, deps.engine, project, { path, ref: commit });
    if (!found) continue; // already a plan: nothing changes
    started.push({ plan_id: found.plan.id, path, task_id: found.taskId });
  }
  return started;
}
