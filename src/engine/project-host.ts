/** The project a run works on and the code host behind it; a run without them fails by name. */
import { eq } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import type { CodeHost } from '../codehost/types';
import { RunFailure } from '../core/failures';
import { projects } from '../storage/schema';
import type { RunContext } from './types';

/** The project a run works on; a run whose project is gone fails by name. */
export async function projectOf(ctx: Pick<RunContext, 'db' | 'task'>) {
  const [project] = await ctx.db.orm
    .select()
    .from(projects)
    .where(eq(projects.id, ctx.task.projectId ?? ''))
    .limit(1);
  if (!project)
    throw new RunFailure('project_run_mode_unreadable', `project ${ctx.task.projectId} no longer exists`);
  return project;
}

export async function projectAndHost(ctx: Pick<RunContext, 'db' | 'task'>, codeHosts: CodeHosts) {
  const project = await projectOf(ctx);
  const host: CodeHost | null = codeHosts.forInstallation(project.installationId);
  if (!host) {
    throw new RunFailure(
      'backend_unavailable',
      `installation ${project.installationId} has no configured code host`,
    );
  }
  return { project, host };
}
