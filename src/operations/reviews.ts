/**
 * Reviews: a review is a task (its id is the task id) over one pull request or commit range,
 * run by a lineup of reviewers, per the spec's "Reviews" endpoints.
 */
import { z } from 'zod';
import { notFound } from '../core/errors';
import { commitIdSchema } from '../core/git-grammar';
import { RUN_STATUSES } from '../core/runs';
import type { TaskRow } from '../engine/types';
import type { ReviewConfig } from '../review/config';
import { type LineupEntry, parseLineup } from '../review/lineup';
import {
  ack,
  checkIfMatch,
  createReview,
  getReviewTask,
  listReviewTasks,
  REVIEW_ORIGINS,
  type ReviewDeps,
  reviewRecord,
  saveConfig,
  validateLineup,
} from '../review/service';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { listOf, listQuery, taskAck, timestamp } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';

const deps = (ctx: OperationContext): ReviewDeps => ({
  db: ctx.services.db,
  engine: ctx.services.engine,
  codeHosts: ctx.services.codeHosts,
  env: ctx.services.config.env,
});
const scope = (ctx: OperationContext) => ({ workspaceId: ctx.workspaceId, projectId: ctx.projectId ?? '' });
const toItem = (e: LineupEntry) => ({
  reviewer_id: e.reviewerId,
  ...(e.model ? { model: e.model } : {}),
  ...(e.skillRevisionId ? { skill_revision_id: e.skillRevisionId } : {}),
});

/**
 * A configuration edit: the review under its current revision (`If-Match`), `change` applied
 * to a copy of its configuration, saved as the next revision.
 */
async function editConfig(
  ctx: OperationContext,
  reviewId: string,
  change: (config: ReviewConfig) => Promise<void>,
) {
  const task = await getReviewTask(deps(ctx), scope(ctx), reviewId);
  checkIfMatch(ctx.headers['if-match'], task.revision);
  const config = { ...(task.input as unknown as ReviewConfig) };
  await change(config);
  return saved(ctx, await saveConfig(deps(ctx), task, config));
}

/** An edited configuration answers with the review at its new revision, and its ETag. */
async function saved(ctx: OperationContext, task: TaskRow) {
  ctx.setHeader('etag', `"${task.revision}"`);
  return reviewRecord(deps(ctx), task);
}

// Hex only (core/git-grammar.ts): abbreviated ids are taken, as the run resolves them on the host.
const commitId = commitIdSchema;

const reviewerId = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, ".", "_" and "-"')
  .describe('Reviewer id.');

/**
 * The string forms: `<reviewer_id>` (governed pin), `<reviewer_id>@<provider>/<model>` (pins the
 * model for this run) and `svc:<reviewer_id>:auto` (explicit spelling of the governed pin).
 */
export const reviewerString = z
  .string()
  .regex(
    /^(?:svc:[a-z0-9][a-z0-9._-]*:auto|[a-z0-9][a-z0-9._-]*(?:@[A-Za-z0-9._-]+\/[A-Za-z0-9._:/-]+)?)$/,
    'one of "<reviewer_id>", "<reviewer_id>@<provider>/<model>", "svc:<reviewer_id>:auto"',
  )
  .max(300)
  .describe('"<reviewer_id>", "<reviewer_id>@<provider>/<model>" or "svc:<reviewer_id>:auto".');

/** The object form: a reviewer with a model and, optionally, a pinned immutable skill revision. */
export const reviewerObject = z.strictObject({
  reviewer_id: reviewerId,
  model: z
    .string()
    .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._:/-]+$/, '"<provider>/<model>"')
    .max(200)
    .optional()
    .describe('"<provider>/<model>"; omitted: the governed model pin.'),
  skill_revision_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Immutable skill revision to run (from POST /skill-imports).'),
});

export const reviewerItem = z.union([reviewerString, reviewerObject]);

const delivery = z
  .enum(['none', 'codehost'])
  .describe('`none`: the result is only read; `codehost`: posts the result on the pull request.');

export const reviewCreateBody = z
  .strictObject({
    pr: z
      .int()
      .min(1)
      .optional()
      .describe('Pull request number; required unless `base` and `head` are given.'),
    base: commitId.optional().describe('Base commit id of a commit range (with `head`).'),
    head: commitId.optional().describe('Head commit id of a commit range (with `base`).'),
    reviewers: z
      .array(reviewerItem)
      .min(1)
      .max(50)
      .optional()
      .describe('The lineup; omitted: the planner chooses it from the diff.'),
    delivery: delivery.default('none'),
  })
  .superRefine((body, ctx) => {
    if ((body.base === undefined) !== (body.head === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: '`base` and `head` go together',
        path: [body.base ? 'head' : 'base'],
      });
    }
    if (body.pr === undefined && (body.base === undefined || body.head === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: '`pr` is required unless `base` and `head` are given',
        path: ['pr'],
      });
    }
  });

/** The latest run's receipt as inlined on a task read (the tasks area owns the full status block). */
export const runReceipt = z.looseObject({
  id: z.string().describe('Run id.'),
  status: z.enum(RUN_STATUSES),
  result: z.unknown().optional(),
  usage: z.record(z.string(), z.unknown()).nullable().optional(),
  cost_usd: z.number().nullable().describe('Null when unknown, never 0 for unknown.'),
  error: z
    .looseObject({ code: z.string(), message: z.string() })
    .nullable()
    .describe('The named failure when the run failed.'),
  gaps: z.array(z.looseObject({ code: z.string(), message: z.string() })),
  created_at: timestamp,
  started_at: timestamp.nullable().optional(),
  finished_at: timestamp.nullable().optional(),
});

export const finding = z.looseObject({
  object: z.literal('finding'),
  id: z.string(),
  severity: z.enum(['P0', 'P1', 'P2']),
  path: z.string(),
  line: z.int().nullable(),
  task_id: z.string().describe('The review task that produced the finding.'),
});

const configuredReviewer = z.object({
  key: z.string().describe('Key of this entry in the configuration (the `reviewer_key` path parameter).'),
  reviewer_id: z.string(),
  model: z.string().nullable().describe('"<provider>/<model>"; null: the governed pin.'),
  skill_revision_id: z.string().nullable(),
});

export const review = z.object({
  object: z.literal('review'),
  id: z.string().describe('Review id; a review is a task, so GET /tasks/{id} works too.'),
  pr: z.int().nullable(),
  base: z.string().nullable(),
  head: z.string().nullable(),
  delivery,
  origin: z
    .enum(REVIEW_ORIGINS)
    .describe(
      '`api`: created with POST /reviews; `automatic`: a pull request push, `@service` command or code-host re-run; `swarm`: a swarm child.',
    ),
  reviewers: z.array(configuredReviewer).nullable().describe('Null: the planner chooses the lineup.'),
  revision: z.int().describe('Configuration revision; sent quoted in `If-Match` on edits (also the ETag).'),
  run: runReceipt.nullable(),
  findings: z
    .array(finding)
    .nullable()
    .describe('Null until the run is done; [] for a done review that found nothing.'),
  findings_truncated: z.boolean().describe('True when there are more findings than the page holds.'),
  created_at: timestamp,
  updated_at: timestamp,
});

/**
 * The spec lists the API-created reviews; the automatic and swarm reviews of the same project
 * (often far more) are there only when asked for.
 */
const reviewsListQuery = listQuery.extend({
  origin: z
    .enum([...REVIEW_ORIGINS, 'all'])
    .default('api')
    .describe('Which reviews: `api` (default, created with POST /reviews), `automatic`, `swarm` or `all`.'),
});

const reviewParams = z.strictObject({
  review_id: z.string().min(1).max(200).describe('Review id (a task id).'),
});
const reviewerParams = z.strictObject({
  review_id: z.string().min(1).max(200).describe('Review id (a task id).'),
  reviewer_key: z.string().min(1).max(200).describe('Key of the reviewer entry in the configuration.'),
});

export const reviewUpdateBody = z
  .strictObject({
    reviewers: z
      .array(reviewerItem)
      .min(1)
      .max(50)
      .nullable()
      .optional()
      .describe('Null: back to planner choice.'),
    delivery: delivery.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

export const reviewerUpdateBody = z
  .strictObject({
    model: reviewerObject.shape.model.unwrap().nullable().optional(),
    skill_revision_id: z.string().min(1).max(200).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

export const operations: Operation[] = [
  defineOperation({
    tool: 'reviews_create',
    method: 'POST',
    path: '/api/v1/reviews',
    summary: 'Create a review and start its run immediately.',
    description:
      "Body per the review creation request: `pr` (or `base`+`head`), optional `reviewers` (strings or objects) and `delivery`. Answers the task acknowledgement to poll. The request and its lineup are validated before the answer; the pull request or range is resolved by the run, which fails by name (with the code host's message) when it does not exist.",
    scope: 'project',
    body: reviewCreateBody,
    response: taskAck,
    status: 202,
    acknowledgement: true,
    handler: async ({ body }, ctx) => createReview(deps(ctx), scope(ctx), body, ctx.acknowledge),
  }),
  defineOperation({
    tool: 'reviews_get',
    method: 'GET',
    path: '/api/v1/reviews/{review_id}',
    summary: 'Read a review with its latest run receipt; findings are inlined once done.',
    scope: 'project',
    params: reviewParams,
    response: review,
    handler: async ({ params }, ctx) => {
      const task = await getReviewTask(deps(ctx), scope(ctx), params.review_id);
      ctx.setHeader('etag', `"${task.revision}"`);
      return reviewRecord(deps(ctx), task);
    },
  }),
  defineOperation({
    tool: 'reviews_list',
    method: 'GET',
    path: '/api/v1/reviews',
    summary:
      "List the project's API-created reviews, newest first; `origin` lists automatic or swarm reviews instead, or all.",
    scope: 'project',
    query: reviewsListQuery,
    response: listOf(review),
    handler: async ({ query }, ctx) => {
      const origins = query.origin === 'all' ? REVIEW_ORIGINS : [query.origin];
      const rows = await listReviewTasks(
        deps(ctx),
        scope(ctx),
        query.limit,
        decodeCursor(query.cursor),
        origins,
      );
      const { data, nextCursor } = page(rows, query.limit);
      return {
        object: 'list' as const,
        data: await Promise.all(data.map((task) => reviewRecord(deps(ctx), task))),
        next_cursor: nextCursor,
      };
    },
  }),
  defineOperation({
    tool: 'reviews_run',
    method: 'POST',
    path: '/api/v1/reviews/{review_id}/runs',
    summary: "Re-run the review against the pull request's current head.",
    scope: 'project',
    params: reviewParams,
    response: taskAck,
    status: 202,
    handler: async ({ params }, ctx) => {
      const task = await getReviewTask(deps(ctx), scope(ctx), params.review_id);
      const run = await ctx.services.engine.startRun(task.id);
      return ack(task.id, run.id);
    },
  }),
  defineOperation({
    tool: 'reviews_update',
    ifMatch: true,
    method: 'PATCH',
    path: '/api/v1/reviews/{review_id}',
    summary: 'Change the review configuration for the next run; requires If-Match with the current revision.',
    scope: 'project',
    params: reviewParams,
    body: reviewUpdateBody,
    response: review,
    handler: async ({ params, body }, ctx) =>
      editConfig(ctx, params.review_id, async (config) => {
        if (body.reviewers !== undefined) {
          config.reviewers = body.reviewers === null ? null : parseLineup(body.reviewers);
          if (config.reviewers) await validateLineup(deps(ctx), scope(ctx), config.reviewers);
        }
        if (body.delivery !== undefined) config.delivery = body.delivery;
      }),
  }),
  defineOperation({
    tool: 'reviews_add_reviewer',
    ifMatch: true,
    method: 'POST',
    path: '/api/v1/reviews/{review_id}/reviewers',
    summary: 'Add a reviewer to the review configuration; requires If-Match.',
    scope: 'project',
    params: reviewParams,
    body: reviewerObject,
    response: review,
    status: 201,
    handler: async ({ params, body }, ctx) =>
      editConfig(ctx, params.review_id, async (config) => {
        const current = config.reviewers ?? [];
        const entries = parseLineup([...current.map(toItem), body]);
        await validateLineup(deps(ctx), scope(ctx), entries.slice(-1));
        config.reviewers = entries;
      }),
  }),
  defineOperation({
    tool: 'reviews_update_reviewer',
    ifMatch: true,
    method: 'PATCH',
    path: '/api/v1/reviews/{review_id}/reviewers/{reviewer_key}',
    summary: 'Update a reviewer in the review configuration; requires If-Match.',
    scope: 'project',
    params: reviewerParams,
    body: reviewerUpdateBody,
    response: review,
    handler: async ({ params, body }, ctx) =>
      editConfig(ctx, params.review_id, async (config) => {
        const entry = config.reviewers?.find((e) => e.key === params.reviewer_key);
        if (!config.reviewers || !entry) throw notFound('reviewer entry', params.reviewer_key);
        const changed = {
          ...entry,
          ...(body.model !== undefined ? { model: body.model } : {}),
          ...(body.skill_revision_id !== undefined ? { skillRevisionId: body.skill_revision_id } : {}),
        };
        await validateLineup(deps(ctx), scope(ctx), [changed]);
        config.reviewers = config.reviewers.map((e) => (e.key === entry.key ? changed : e));
      }),
  }),
  defineOperation({
    tool: 'reviews_delete_reviewer',
    ifMatch: true,
    method: 'DELETE',
    path: '/api/v1/reviews/{review_id}/reviewers/{reviewer_key}',
    summary: 'Remove a reviewer from the review configuration; requires If-Match.',
    scope: 'project',
    params: reviewerParams,
    response: review,
    handler: async ({ params }, ctx) =>
      editConfig(ctx, params.review_id, async (config) => {
        if (!config.reviewers?.some((e) => e.key === params.reviewer_key))
          throw notFound('reviewer entry', params.reviewer_key);
        const rest = config.reviewers.filter((e) => e.key !== params.reviewer_key);
        // An empty lineup would review nothing: back to the planner's choice instead.
        config.reviewers = rest.length > 0 ? rest : null;
      }),
  }),
];
