/**
 * The repository knowledge a review works with: the stored record, or, for a project setup never
 * ran on, one refreshed now from the default branch (the planner's pass writes it, as setup
 * does). A failure to read it is a named gap and the review goes on without it.
 */
import type { CodeHost } from '../codehost/types';
import type { RepoKnowledge } from '../core/repo-knowledge';
import type { Gap } from '../core/runs';
import type { Orm } from '../storage/database';
import { refreshKnowledge } from './refresh';
import { knowledgeOf } from './store';

export async function knowledgeForReview(
  orm: Orm,
  host: CodeHost,
  project: { id: string; workspaceId: string; repoFullName: string },
): Promise<{ knowledge: RepoKnowledge | null; gaps: Gap[] }> {
  try {
    const row = await knowledgeOf(orm, project.workspaceId, project.id);
    if (row) return { knowledge: row.content as unknown as RepoKnowledge, gaps: [] };
    const tree = await host.readTree(project.repoFullName);
    const refreshed = await refreshKnowledge(orm, host, project, tree, 'review');
    return { knowledge: refreshed.content, gaps: [] };
  } catch (error) {
    return {
      knowledge: null,
      gaps: [
        {
          code: 'repo_knowledge_unavailable',
          message: `the repository knowledge could not be read, so reviewers were not told it: ${(error as Error).message}`,
        },
      ],
    };
  }
}
