/**
 * The `knowledge_refresh` task: a push to the default branch changed a file the repository
 * knowledge is derived from (a manifest, a version file, a tool config, a CI workflow, svc.json),
 * so the project's record is read again at the new head. A tree the host cannot read fails the
 * run by name; the stored record stays as it was, still saying which commit it describes.
 */
import type { CodeHosts } from '../../codehost';
import { CodeHostError } from '../../codehost/types';
import { RunFailure } from '../../core/failures';
import { refreshKnowledge } from '../../knowledge/refresh';
import { projectAndHost } from '../project-host';
import type { TaskHandler } from '../types';

export function knowledgeRefreshHandler(codeHosts: CodeHosts): TaskHandler {
  return async (ctx) => {
    const { project, host } = await projectAndHost(ctx, codeHosts);
    const tree = await host.readTree(project.repoFullName).catch((error: unknown) => {
      if (error instanceof CodeHostError)
        throw new RunFailure('tool_failed', `could not read ${project.repoFullName}: ${error.message}`);
      throw error;
    });
    const knowledge = await refreshKnowledge(ctx.db.orm, host, project, tree, 'push');
    for (const gap of knowledge.gaps) ctx.gap(gap);
    return { repo_knowledge: { id: knowledge.id, commit_sha: tree.commit }, runtimes: knowledge.runtimes };
  };
}
