/**
 * Plans: markdown documents found in the repository, with their review score, their approval and
 * their draft pull request (lifecycle: src/core/plans.ts). Approve and reject are documented
 * extensions; every move appends a plan event with its actor, readable through `plans_events`.
 */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import { PLAN_TRANSITION_EVENTS } from '../core/plans';
import { approvePlan, rejectPlan } from '../plans/lifecycle';
import { plans } from '../storage/schema';
import { collectionRecords, type EventSubject, eventOperations } from './collections';
import { defineOperation, type OperationContext } from './registry';
import { listOf, listQuery } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';

const planRecord = collectionRecords.plans.extend({
  review_task_id: z.string().nullable().describe('The plan-review task started for this document.'),
  score: z.record(z.string(), z.unknown()).nullable().describe('How the plan scored in its review.'),
  draft_pull_request: z
    .object({ number: z.int(), url: z.string().nullable() })
    .nullable()
    .describe('The draft pull request svc opened once the plan was approved.'),
  repo_write_error: z
    .string()
    .nullable()
    .describe("The code host's reason when `repo_write_status` is `failed`."),
  superseded_by: z.string().nullable().describe('The plan whose document replaced this one.'),
});

type PlanRow = typeof plans.$inferSelect;

const toPlan = (row: PlanRow): z.infer<typeof planRecord> => ({
  object: 'plan',
  id: row.id,
  status: row.status,
  approval_status: row.approvalStatus,
  requires_approval: row.requiresApproval,
  repo_write_mode: 'draft_pr',
  repo_write_status: row.repoWriteStatus,
  source_kind: row.sourceKind,
  repo_artifact_path: row.repoArtifactPath,
  target_outcome: row.targetOutcome,
  summary: row.summary,
  review_task_id: row.reviewTaskId,
  score: row.score ?? null,
  draft_pull_request:
    row.draftPullRequestNumber === null
      ? null
      : { number: row.draftPullRequestNumber, url: row.draftPullRequestUrl },
  repo_write_error: row.repoWriteError,
  superseded_by: row.supersededBy,
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
    if (!row) throw notFound('plan', params.id);
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

const decisionBody = z.strictObject({
  reason: z.string().trim().min(1).max(2000).optional().describe('Why: recorded on the event.'),
});

const scopeOf = (ctx: OperationContext) => ({ workspaceId: ctx.workspaceId, projectId: ctx.projectId ?? '' });

const approve = defineOperation({
  tool: 'plans_approve',
  method: 'POST',
  path: '/api/v1/plans/{id}/approve',
  summary: 'Approve a reviewed plan: svc then opens its draft pull request as a task.',
  description:
    "Documented extension (the spec names an approval but not its operation). Moves the plan to `approved` and `repo_write_status` to `draft_pr_requested`, and starts a `plan_activate` task that opens a draft pull request with the plan as its body; the plan turns `active` when it opens, or `repo_write_status` turns `failed` with the code host's reason (approve again to retry). 409 `conflict` when the plan is not awaiting approval.",
  scope: 'project',
  params: z.strictObject({ id: z.string().min(1).max(200).describe('Plan id.') }),
  body: decisionBody,
  response: planRecord,
  handler: async ({ params, body }, ctx) =>
    toPlan(
      await approvePlan(
        ctx.services.db,
        ctx.services.engine,
        scopeOf(ctx),
        params.id,
        ctx.principal.keyId,
        body.reason ?? null,
      ),
    ),
});

const reject = defineOperation({
  tool: 'plans_reject',
  method: 'POST',
  path: '/api/v1/plans/{id}/reject',
  summary: 'Reject a reviewed plan: nothing is written to the repository for it.',
  description:
    'Documented extension. Sets `approval_status` to `rejected` (the plan stays `reviewed`, so it can still be approved later). 409 `conflict` when the plan is not awaiting a decision.',
  scope: 'project',
  params: z.strictObject({ id: z.string().min(1).max(200).describe('Plan id.') }),
  body: decisionBody,
  response: planRecord,
  handler: async ({ params, body }, ctx) =>
    toPlan(
      await rejectPlan(ctx.services.db, scopeOf(ctx), params.id, ctx.principal.keyId, body.reason ?? null),
    ),
});

const RESERVED = new Set<string>(PLAN_TRANSITION_EVENTS);

/**
 * `plans_append_event` records notes (a comment, a link); the transition kinds are svc's own and
 * are refused, so a plan's history never claims a move that did not happen.
 */
const planSubject: EventSubject = {
  objectType: 'plan',
  exists: async (ctx, id) => {
    const [row] = await ctx.services.db.orm
      .select({ id: plans.id })
      .from(plans)
      .where(and(eq(plans.id, id), scoped(ctx)))
      .limit(1);
    return row !== undefined;
  },
  apply: async (_tx, _ctx, id, event) => {
    if (!RESERVED.has(event.kind)) return;
    const how =
      event.kind === 'approved' || event.kind === 'rejected'
        ? `use POST /api/v1/plans/${id}/${event.kind === 'approved' ? 'approve' : 'reject'}`
        : 'svc appends it when the plan moves';
    throw new ApiError('validation_failed', `event kind ${event.kind} records a plan transition: ${how}`);
  },
};

export const operations = [
  get,
  list,
  approve,
  reject,
  ...eventOperations('plans', 'plans', 'id', planSubject),
];
