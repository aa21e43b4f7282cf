/**
 * Takes back a merge the local watcher counted in error: the pull request's head moved on to
 * commits its base lacks, so it was never merged. Its `merged_at` is cleared (the scorecard and
 * the study pass count merged pull requests by it) and, when the merge is still among those
 * waiting for the next study, that count goes down by one. A study already started on it is not
 * undone.
 */
import { and, eq, gt, isNotNull, sql } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { projects, pullRequests } from '../storage/schema';

/** True when a counted merge was taken back; false when the pull request had none. */
export async function withdrawMerge(db: Database, projectId: string, number: number): Promise<boolean> {
  const withdrawn = await db.orm
    .update(pullRequests)
    .set({ mergedAt: null, updatedAt: new Date() })
    .where(
      and(
        eq(pullRequests.projectId, projectId),
        eq(pullRequests.number, number),
        isNotNull(pullRequests.mergedAt),
      ),
    )
    .returning({ id: pullRequests.id });
  if (withdrawn.length === 0) return false;
  await db.orm
    .update(projects)
    .set({ mergesSinceStudy: sql`${projects.mergesSinceStudy} - 1` })
    .where(and(eq(projects.id, projectId), gt(projects.mergesSinceStudy, 0)));
  return true;
}
