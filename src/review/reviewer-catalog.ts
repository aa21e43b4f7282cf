/**
 * The workspace's reviewers. Catalog reviewers (backed by build-embedded skills) are copied into
 * every workspace at start, so their pins can be governed per workspace; users add their own.
 */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { reviewers } from '../storage/schema';
import { catalogReviewers } from './catalog-reviewers';

export type ReviewerRow = typeof reviewers.$inferSelect;

export { type CatalogReviewer, catalogReviewers, defaultLlmModel } from './catalog-reviewers';

export async function seedCatalogReviewers(
  db: Database,
  workspaceId: string,
  env: NodeJS.ProcessEnv = process.env,
) {
  const rows = catalogReviewers(env).map((r) => ({ ...r, workspaceId, source: 'catalog' as const }));
  await db.orm.insert(reviewers).values(rows).onConflictDoNothing();
}

export async function findReviewers(
  db: Database,
  workspaceId: string,
  ids: string[],
): Promise<Map<string, ReviewerRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.orm
    .select()
    .from(reviewers)
    .where(and(eq(reviewers.workspaceId, workspaceId), inArray(reviewers.id, ids)));
  return new Map(rows.map((r) => [r.id, r]));
}

export async function listReviewersByPopularity(db: Database, workspaceId: string, limit: number) {
  return db.orm
    .select()
    .from(reviewers)
    .where(eq(reviewers.workspaceId, workspaceId))
    .orderBy(desc(reviewers.uses), reviewers.id)
    .limit(limit);
}

export async function countUse(db: Database, workspaceId: string, reviewerIds: string[]) {
  if (reviewerIds.length === 0) return;
  await db.orm
    .update(reviewers)
    .set({ uses: sql`${reviewers.uses} + 1` })
    .where(and(eq(reviewers.workspaceId, workspaceId), inArray(reviewers.id, reviewerIds)));
}
