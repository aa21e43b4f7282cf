/**
 * Learnings: one-sentence facts about a project that later reviews are told. A learning stops
 * being used once its `forgets_at` has passed (a null `forgets_at` never expires).
 */
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { learnings } from '../storage/schema';

export type LearningRow = typeof learnings.$inferSelect;

/** The condition "not forgotten at `now`": no `forgets_at`, or one still in the future. */
export const notForgottenAt = (now: Date) => or(isNull(learnings.forgetsAt), gt(learnings.forgetsAt, now));

/** A learning is forgotten from its `forgets_at` on (inclusive). */
export const isForgotten = (row: Pick<LearningRow, 'forgetsAt'>, now: Date) =>
  row.forgetsAt !== null && row.forgetsAt.getTime() <= now.getTime();

/** At most this many learnings go into one review (the newest), so they cannot crowd out the diff. */
export const MAX_LEARNINGS_PER_REVIEW = 100;

/**
 * The project's learnings a review uses at `now`: those not past `forgets_at`, newest first,
 * at most `limit`. The review engine calls this; a failure here is the caller's gap
 * (`learnings_unavailable`).
 */
export async function currentLearnings(
  db: Database,
  projectId: string,
  now: Date,
  limit = MAX_LEARNINGS_PER_REVIEW,
): Promise<LearningRow[]> {
  return db.orm
    .select()
    .from(learnings)
    .where(and(eq(learnings.projectId, projectId), notForgottenAt(now)))
    .orderBy(desc(learnings.learnedAt), desc(learnings.id))
    .limit(limit);
}
