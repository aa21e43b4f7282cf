/**
 * The workspace's reviewers. Catalog reviewers (backed by build-embedded skills) are copied into
 * every workspace at start, so their pins can be governed per workspace; users add their own.
 */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { reviewers } from '../storage/schema';

export type ReviewerRow = typeof reviewers.$inferSelect;

export interface CatalogReviewer {
  id: string;
  name: string;
  description: string;
  engine: 'builtin' | 'llm';
  skillId: string;
  /** Default pin: `builtin/rules` for rule reviewers, or `<provider>/<model>` for LLM reviewers. */
  modelPin: string;
}

/** The default model of catalog LLM reviewers: SVC_LLM_DEFAULT_MODEL, else a small OpenAI model. */
export const defaultLlmModel = (env: NodeJS.ProcessEnv = process.env) =>
  env.SVC_LLM_DEFAULT_MODEL || 'openai/gpt-4o-mini';

export function catalogReviewers(env: NodeJS.ProcessEnv = process.env): CatalogReviewer[] {
  return [
    {
      id: 'security',
      name: 'Security rules',
      description:
        'Injection, eval, command execution, unsafe deserialization, weak crypto, XSS sinks, SSRF and path traversal (JavaScript, TypeScript, Python).',
      engine: 'builtin',
      skillId: 'security',
      modelPin: 'builtin/rules',
    },
    {
      id: 'correctness',
      name: 'Correctness rules',
      description:
        'Floating promises, empty catch, assignment in condition, unreachable code, leftover debug statements.',
      engine: 'builtin',
      skillId: 'correctness',
      modelPin: 'builtin/rules',
    },
    {
      id: 'secrets',
      name: 'Secrets',
      description: 'Credentials committed in the change (secretlint, recommended preset with AWS keys).',
      engine: 'builtin',
      skillId: 'secrets',
      modelPin: 'builtin/rules',
    },
    {
      id: 'general',
      name: 'General review (LLM)',
      description:
        'A model reads the diff for bugs, risky changes and unclear code; needs a configured LLM provider.',
      engine: 'llm',
      skillId: 'general',
      modelPin: defaultLlmModel(env),
    },
  ];
}

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
