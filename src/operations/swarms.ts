/**
 * Swarms: multi-agent runs coordinated toward one goal (src/review/swarm.ts). The spec's
 * `swarms_get` and `swarms_list`, and two documented extensions: `swarms_create` (the spec has no
 * create) and `swarms_cancel` (cancels the swarm and every child's active run; `tasks_cancel` on
 * the swarm's task does the same). A swarm is a task: its id is its task id. Another project's
 * swarm is 404.
 */
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import type { TaskRow } from '../engine/types';
import { parseLineup } from '../review/lineup';
import { validateLineup } from '../review/service';
import { cancelSwarm, createSwarm, swarmRecord } from '../review/swarm';
import { SWARM_GOALS, type SwarmGoal } from '../review/swarm-goals';
import { tasks } from '../storage/schema';
import { collectionRecords } from './collections';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { reviewerItem, reviewerObject } from './reviews';
import { listOf, listQuery, taskAck } from './schemas/common';
import { decodeCursor, page, pastCursor } from './schemas/cursor';

/** Parameters of each goal; unknown fields are refused. */
const GOAL_PARAMS = {
  review_open_pull_requests: z.strictObject({
    reviewers: z
      .array(reviewerItem)
      .min(1)
      .max(50)
      .optional()
      .describe(
        'The lineup of every review, as in POST /reviews; omitted: the planner chooses per pull request.',
      ),
    delivery: z.enum(['none', 'codehost']).default('none'),
    limit: z
      .int()
      .min(1)
      .max(200)
      .default(50)
      .describe('At most this many pull requests (lowest numbers first).'),
  }),
  rereview_merged: z.strictObject({
    count: z.int().min(1).max(50).describe('How many of the most recently merged pull requests.'),
    reviewer: z
      .strictObject({
        reviewer_id: reviewerObject.shape.reviewer_id,
        model: reviewerObject.shape.model
          .unwrap()
          .describe('The candidate pin to measure, "<provider>/<model>".'),
      })
      .describe('The reviewer and the model it is measured on; its governed pin is not changed.'),
  }),
  study_and_rescore: z.strictObject({}),
} satisfies Record<SwarmGoal, z.ZodType>;

export const swarmCreateBody = z
  .strictObject({
    goal: z.enum(SWARM_GOALS).describe('What the swarm works toward.'),
    params: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        '`review_open_pull_requests`: `reviewers`?, `delivery`? (`none`), `limit`? (50). `rereview_merged`: `count` (1-50) and `reviewer` {`reviewer_id`, `model`}. `study_and_rescore`: none.',
      ),
  })
  .superRefine((body, ctx) => {
    const parsed = GOAL_PARAMS[body.goal].safeParse(body.params);
    if (parsed.success) return;
    for (const issue of parsed.error.issues)
      ctx.addIssue({ code: 'custom', message: issue.message, path: ['params', ...issue.path] });
  });

const swarmRecordSchema = collectionRecords.swarms;
const swarmAck = taskAck.extend({ swarm_url: z.string().describe('Where to read the swarm.') });
const swarmParams = z.strictObject({
  id: z.string().min(1).max(200).describe('Swarm id (the id of its task, `tsk_…`).'),
});

const scope = (ctx: OperationContext) => ({ workspaceId: ctx.workspaceId, projectId: ctx.projectId ?? '' });

async function findSwarm(ctx: OperationContext, id: string): Promise<TaskRow> {
  const { workspaceId, projectId } = scope(ctx);
  const task = await ctx.services.engine.getTask(workspaceId, projectId, id).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'not_found') return null;
    throw error;
  });
  if (task?.kind !== 'swarm') throw notFound('swarm', id);
  return task;
}

const record = (ctx: OperationContext, task: TaskRow) =>
  swarmRecord(ctx.services.db, task, ctx.services.engine) as Promise<z.infer<typeof swarmRecordSchema>>;

const swarmsCreate = defineOperation({
  tool: 'swarms_create',
  method: 'POST',
  path: '/api/v1/swarms',
  summary: 'Start a swarm toward one goal: its task fans out to child tasks; answers the task to poll.',
  description:
    "Documented extension (the spec has no create for swarms). Goals: `review_open_pull_requests` (a review of every open pull request svc knows), `rereview_merged` (the last `count` merged pull requests reviewed again over the range their last review read, by `reviewer` on a candidate `model`: measured into GET /reviewers/{id}/models), `study_and_rescore` (the study pass and the scorecard it is followed by). The swarm's status, children, spend and result are read at GET /swarms/{id}.",
  scope: 'project',
  body: swarmCreateBody,
  response: swarmAck,
  status: 202,
  handler: async ({ body }, ctx) => {
    const params = GOAL_PARAMS[body.goal].parse(body.params) as Record<string, unknown>;
    const lineup =
      body.goal === 'review_open_pull_requests' && params.reviewers
        ? (params.reviewers as Parameters<typeof parseLineup>[0])
        : body.goal === 'rereview_merged'
          ? [params.reviewer as { reviewer_id: string; model: string }]
          : null;
    const deps = {
      db: ctx.services.db,
      engine: ctx.services.engine,
      codeHosts: ctx.services.codeHosts,
      env: ctx.services.config.env,
    };
    // Refused here rather than as N failed children: unknown reviewers, unknown providers.
    if (lineup) await validateLineup(deps, scope(ctx), parseLineup(lineup));
    const stored = body.goal === 'review_open_pull_requests' ? { reviewers: null, ...params } : params;
    const { task, run } = await createSwarm(
      ctx.services.db,
      ctx.services.engine,
      scope(ctx),
      { goal: body.goal, params: stored },
      ctx.principal.keyId,
    );
    return {
      id: task.id,
      run_id: run.id,
      status_url: `/api/v1/tasks/${task.id}/status`,
      swarm_url: `/api/v1/swarms/${task.id}`,
    };
  },
});

const swarmsGet = defineOperation({
  tool: 'swarms_get',
  method: 'GET',
  path: '/api/v1/swarms/{id}',
  summary: "Read one swarm: its status, its children's counts and ids, spend and the goal's result.",
  scope: 'project',
  params: swarmParams,
  response: swarmRecordSchema,
  handler: async ({ params }, ctx) => record(ctx, await findSwarm(ctx, params.id)),
});

const swarmsList = defineOperation({
  tool: 'swarms_list',
  method: 'GET',
  path: '/api/v1/swarms',
  summary: "List the project's swarms, newest first.",
  scope: 'project',
  query: listQuery,
  response: listOf(swarmRecordSchema),
  handler: async ({ query }, ctx) => {
    const { workspaceId, projectId } = scope(ctx);
    const rows = await ctx.services.db.orm
      .select()
      .from(tasks)
      .where(
        and(
          eq(tasks.workspaceId, workspaceId),
          eq(tasks.projectId, projectId),
          eq(tasks.kind, 'swarm'),
          pastCursor(tasks, decodeCursor(query.cursor), 'newest_first'),
        ),
      )
      .orderBy(desc(tasks.createdAt), desc(tasks.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return {
      object: 'list' as const,
      data: await Promise.all(data.map((task) => record(ctx, task))),
      next_cursor: nextCursor,
    };
  },
});

const swarmsCancel = defineOperation({
  tool: 'swarms_cancel',
  method: 'POST',
  path: '/api/v1/swarms/{id}/cancel',
  summary: "Cancel a swarm: its own run and every child's active run end `canceled`; answers the swarm.",
  description:
    'Documented extension. Pending runs end at once, running ones are stopped by their workers. A swarm that already completed or failed is 409 `conflict`; canceling a canceled swarm again changes nothing.',
  scope: 'project',
  params: swarmParams,
  response: swarmRecordSchema,
  handler: async ({ params }, ctx) => {
    const swarm = await findSwarm(ctx, params.id);
    await cancelSwarm(
      ctx.services.db,
      ctx.services.engine,
      swarm,
      ctx.principal.keyId,
      `canceled through the API (request ${ctx.requestId})`,
    );
    return record(ctx, swarm);
  },
});

export const operations: Operation[] = [swarmsCreate, swarmsGet, swarmsList, swarmsCancel];
