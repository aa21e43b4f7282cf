/**
 * The stored repository knowledge of a project: one record per project, replaced on each
 * refresh. Its id stays the same across refreshes, so `GET /repo-knowledge/{id}` keeps working;
 * `refreshed_at`, `commit_sha` and `refreshed_by` say when, from which commit and by what.
 */
import { and, eq } from 'drizzle-orm';
import type { Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { repoKnowledge } from '../storage/schema';

export type KnowledgeRow = typeof repoKnowledge.$inferSelect;

export interface KnowledgeRefresh {
  workspaceId: string;
  projectId: string;
  commitSha: string;
  content: Record<string, unknown>;
  gaps: { code: string; message: string }[];
  refreshedBy: string;
  at?: Date;
}

/** Writes the project's knowledge, replacing the previous refresh. */
export async function saveKnowledge(orm: Orm, refresh: KnowledgeRefresh): Promise<KnowledgeRow> {
  const at = refresh.at ?? new Date();
  const values = {
    content: refresh.content,
    gaps: refresh.gaps,
    commitSha: refresh.commitSha,
    refreshedBy: refresh.refreshedBy,
    refreshedAt: at,
    updatedAt: at,
  };
  const [row] = await orm
    .insert(repoKnowledge)
    .values({
      id: newId('repoKnowledge'),
      workspaceId: refresh.workspaceId,
      projectId: refresh.projectId,
      createdAt: at,
      ...values,
    })
    .onConflictDoUpdate({ target: repoKnowledge.projectId, set: values })
    .returning();
  if (!row) throw new Error('repo knowledge upsert returned no row');
  return row;
}

/** The project's knowledge, or null before its first refresh. */
export async function knowledgeOf(
  orm: Orm,
  workspaceId: string,
  projectId: string,
): Promise<KnowledgeRow | null> {
  const [row] = await orm
    .select()
    .from(repoKnowledge)
    .where(and(eq(repoKnowledge.workspaceId, workspaceId), eq(repoKnowledge.projectId, projectId)))
    .limit(1);
  return row ?? null;
}
