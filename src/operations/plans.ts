/** Plans: markdown documents found in the repository (and, later, proposed by svc), with their review score. */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { plans } from '../storage/schema';
import { collectionRecords } from './collections';
import { defineOperation, type OperationContext } from './registry';
import { listOf, listQuery } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';

const planRecord = collectionRecords.plans.extend({
  review_task_id: z.string().nullable().describe('The plan-review task started for this document.'),
  score: z.record(z.string(), z.unknown()).nullable().describe('How the plan scored in its review.'),
});

type PlanRow = typeof plans.$inferSelect;

const toPlan = (row: PlanRow): z.infer<typeof planRecord> => ({
  object: 'plan',
  id: row.id,
  status: row.status as z.infer<typeof planRecord>['status'],
  approval_status: row.approvalStatus as z.infer<typeof planRecord>['approval_status'],
  requires_approval: row.requiresApproval,
  repo_write_mode: 'draft_pr',
  repo_write_status: row.repoWriteStatus as z.infer<typeof planRecord>['repo_write_status'],
  source_kind: row.sourceKind,
  repo_artifact_path: row.repoArtifactPath,
  target_outcome: row.targetOutcome,
  summary: row.summary,
  review_task_id: row.reviewTaskId,
  score: row.score ?? null,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

const scoped = (ctx: OperationContext) =>
  and(eq(plans.workspaceId, ctx.workspaceId), eq(plans.projectId, ctx.projectId ?? ''));

const get = defineOperation({
  tool: 'plans_get',
  method: 'GET',
  path: '/api/v1/plans/{id}',
  summary: 'Read one plan with its status and review score.',
  scope: 'project',
  params: z.strictObject({ id: z.string().min(1).max(200).describe('Plan id.') }),
  response: planRecord,
  handler: async ({ params }, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(plans)
      .where(and(eq(plans.id, params.id), scoped(ctx)))
      .limit(1);
    if (!row) throw new ApiError('not_found', `plan ${params.id} was not found`);
    return toPlan(row);
  },
});

const list = defineOperation({
  tool: 'plans_list',
  method: 'GET',
  path: '/api/v1/plans',
  summary: "List the project's plans, newest first.",
  scope: 'project',
  query: listQuery,
  response: listOf(planRecord),
  handler: async ({ query }, ctx) => {
    const after = decodeCursor(query.cursor);
    const rows = await ctx.services.db.orm
      .select()
      .from(plans)
      .where(
        and(
          scoped(ctx),
          after
            ? or(
                lt(plans.createdAt, after.createdAt),
                and(eq(plans.createdAt, after.createdAt), lt(plans.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(plans.createdAt), desc(plans.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toPlan), next_cursor: nextCursor };
  },
});

export const operations = [get, list];
