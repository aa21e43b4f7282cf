/**
 * A pull request's review status moves (trigger → planning → reviewing → … → reviewed, or skipped,
 * errored), each move a timeline event on the pull request in the same transaction: before and
 * after, the run that moved it, and what the move carries (a finished review's counts: opened,
 * reopened, fixed; one event per merge, not one per finding).
 */
import { eq } from 'drizzle-orm';
import type { Database } from './database';
import { appendObjectEvent } from './object-events';
import { pullRequests } from './schema';

export async function setReviewStatus(
  db: Database,
  pullRequestId: string | null,
  status: string,
  options: {
    /** Other columns set with the status (last_reviewed_at, last_review_run_id). */
    columns?: Partial<typeof pullRequests.$inferInsert>;
    /** The run that moved it, if any. */
    runId?: string | null;
    /** Added to the event's payload. */
    details?: Record<string, unknown>;
    /**
     * Move only while this is the pull request's head: a review of a head the pull request has
     * since left must not overwrite the status of the head that replaced it (say a draft push,
     * skipped). The columns are still set.
     */
    ifHead?: string;
  } = {},
): Promise<void> {
  if (!pullRequestId) return;
  await db.orm.transaction(async (tx) => {
    const [before] = await tx
      .select({
        workspaceId: pullRequests.workspaceId,
        projectId: pullRequests.projectId,
        reviewStatus: pullRequests.reviewStatus,
        headSha: pullRequests.headSha,
      })
      .from(pullRequests)
      .where(eq(pullRequests.id, pullRequestId))
      .for('update');
    if (!before) return;
    if (options.ifHead !== undefined && before.headSha !== options.ifHead) {
      if (options.columns)
        await tx.update(pullRequests).set(options.columns).where(eq(pullRequests.id, pullRequestId));
      return;
    }
    await tx
      .update(pullRequests)
      .set({ reviewStatus: status, updatedAt: new Date(), ...options.columns })
      .where(eq(pullRequests.id, pullRequestId));
    if (before.reviewStatus === status && !options.details) return;
    await appendObjectEvent(tx, {
      workspaceId: before.workspaceId,
      projectId: before.projectId,
      objectType: 'pull_request',
      objectId: pullRequestId,
      kind: 'review_status_changed',
      payload: {
        before: { review_status: before.reviewStatus },
        after: { review_status: status },
        run_id: options.runId ?? null,
        ...options.details,
      },
      actor: null,
    });
  });
}
