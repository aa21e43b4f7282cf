/**
 * Plans from pushes: a markdown document under `docs/plans/`, `prds/` or `.svc/plans/` becomes a
 * plan with exactly one plan-review run; a document that already is a plan changes nothing.
 */
import { eq } from 'drizzle-orm';
import { newId } from '../storage/ids';
import { plans } from '../storage/schema';
import { type AutomationDeps, findProject } from './triggers';

export const PLAN_PATH = /^(docs\/plans|prds|\.svc\/plans)\/.+\.(md|markdown)$/i;

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
    return { outcome: 'ignored' as const, reason: `repository ${event.repo} is not a project`, plans: [] };
  if (event.defaultBranch && event.ref !== `refs/heads/${event.defaultBranch}`) {
    return { outcome: 'ignored' as const, reason: `push to ${event.ref}, not the default branch`, plans: [] };
  }
  const started: { plan_id: string; path: string; task_id: string }[] = [];
  for (const path of [...new Set(event.paths)].filter((p) => PLAN_PATH.test(p))) {
    const id = newId('plan');
    const [created] = await deps.db.orm
      .insert(plans)
      .values({
        id,
        workspaceId: project.workspaceId,
        projectId: project.id,
        sourceKind: 'repo',
        repoArtifactPath: path,
      })
      .onConflictDoNothing()
      .returning();
    if (!created) continue; // already a plan: nothing changes
    const { task } = await deps.engine.createTask({
      workspaceId: project.workspaceId,
      projectId: project.id,
      kind: 'plan_review',
      title: `Review plan ${path}`,
      input: { plan_id: id, path, ref: event.after },
    });
    await deps.db.orm.update(plans).set({ reviewTaskId: task.id }).where(eq(plans.id, id));
    started.push({ plan_id: id, path, task_id: task.id });
  }
  return {
    outcome: started.length > 0 ? ('plans_found' as const) : ('ignored' as const),
    reason: `${started.length} new plan document(s)`,
    plans: started,
  };
}
