/**
 * The review ledger's collections: pull requests (with their review state), findings (the
 * durable ledger) and review results (one per review pass). Read-only here; reviews write them,
 * and a person dismisses or reopens a finding through its events (./finding-events.ts).
 */
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { CHECK_NAME, REVIEW_STATUSES, type ReviewStatus } from '../core/checks';
import { ApiError } from '../core/errors';
import { findingRecord } from '../review/service';
import { checkRuns, findings, pullRequests, reviewResults } from '../storage/schema';
import { defineOperation, type OperationContext } from './registry';
import { decimalParam, iso, listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';

const idParams = z.strictObject({ id: z.string().min(1).max(200).describe('Record id.') });

/** Newest first, continuing after the cursor's (created_at, id). */
function after(cursor: string | undefined, createdAt: PgColumn, id: PgColumn): SQL | undefined {
  const position = decodeCursor(cursor);
  if (!position) return undefined;
  return or(lt(createdAt, position.createdAt), and(eq(createdAt, position.createdAt), lt(id, position.id)));
}

const scoped = (ctx: OperationContext, workspaceColumn: PgColumn, projectColumn: PgColumn) =>
  and(eq(workspaceColumn, ctx.workspaceId), eq(projectColumn, ctx.projectId ?? ''));

// Pull requests ---------------------------------------------------------------------------------

const pullRequestRecord = z.object({
  object: z.literal('pull_request'),
  id: z.string(),
  number: z.int(),
  title: z.string(),
  author: z.string().nullable(),
  draft: z.boolean(),
  state: z.string(),
  base_ref: z.string().nullable(),
  head_ref: z.string().nullable(),
  base_sha: z.string().nullable(),
  head_sha: z.string().nullable(),
  review_status: z.enum(REVIEW_STATUSES).nullable(),
  last_reviewed_at: timestamp.nullable(),
  last_review_run_id: z.string().nullable(),
  auto_review: z.boolean().describe('False after `@service review off` on this pull request.'),
  created_at: timestamp,
  updated_at: timestamp,
});

type PullRequestRow = typeof pullRequests.$inferSelect;
const toPullRequest = (row: PullRequestRow): z.infer<typeof pullRequestRecord> => ({
  object: 'pull_request',
  id: row.id,
  number: row.number,
  title: row.title,
  author: row.author,
  draft: row.draft,
  state: row.state,
  base_ref: row.baseRef,
  head_ref: row.headRef,
  base_sha: row.baseSha,
  head_sha: row.headSha,
  review_status: (row.reviewStatus as ReviewStatus | null) ?? null,
  last_reviewed_at: iso(row.lastReviewedAt),
  last_review_run_id: row.lastReviewRunId,
  auto_review: row.autoReview,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

const pullRequestsGet = defineOperation({
  tool: 'pull_requests_get',
  method: 'GET',
  path: '/api/v1/pull-requests/{id}',
  summary:
    'Read one pull request with its review state (`review_status`, `last_reviewed_at`, `last_review_run_id`).',
  scope: 'project',
  params: idParams,
  response: pullRequestRecord,
  handler: async ({ params }, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(pullRequests)
      .where(
        and(eq(pullRequests.id, params.id), scoped(ctx, pullRequests.workspaceId, pullRequests.projectId)),
      )
      .limit(1);
    if (!row) throw new ApiError('not_found', `pull request ${params.id} was not found`);
    return toPullRequest(row);
  },
});

const pullRequestsList = defineOperation({
  tool: 'pull_requests_list',
  method: 'GET',
  path: '/api/v1/pull-requests',
  summary:
    "List the project's pull requests, most recently created first; filter by `number` or `review_status`.",
  scope: 'project',
  query: listQuery.extend({
    number: decimalParam(z.int().min(1).optional()),
    review_status: z.enum(REVIEW_STATUSES).optional(),
  }),
  response: listOf(pullRequestRecord),
  handler: async ({ query }, ctx) => {
    const rows = await ctx.services.db.orm
      .select()
      .from(pullRequests)
      .where(
        and(
          scoped(ctx, pullRequests.workspaceId, pullRequests.projectId),
          query.number !== undefined ? eq(pullRequests.number, query.number) : undefined,
          query.review_status ? eq(pullRequests.reviewStatus, query.review_status) : undefined,
          after(query.cursor, pullRequests.createdAt, pullRequests.id),
        ),
      )
      .orderBy(desc(pullRequests.createdAt), desc(pullRequests.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toPullRequest), next_cursor: nextCursor };
  },
});

const pullRequestCheckRecord = z.object({
  object: z.literal('pull_request_check'),
  pull_request_id: z.string(),
  name: z.string().describe(`Always \`${CHECK_NAME}\`.`),
  head_sha: z.string(),
  status: z.enum(['queued', 'in_progress', 'completed']),
  conclusion: z.string().nullable(),
  title: z.string(),
  summary: z.string().nullable(),
  fix_prompt: z
    .string()
    .nullable()
    .describe("The check's text once a review concluded it: the structured fix prompt for coding agents."),
  autofix: z
    .object({
      round: z
        .int()
        .nullable()
        .describe('The round the fix prompt asks for now; null once the limit is reached.'),
      done: z.int().describe('Rounds done: the more of `[autofix]` commits and the highest round comment.'),
      limit: z.int(),
      limit_reached: z.boolean().describe('True: the agent must stop and ask a person.'),
      commits: z.array(z.string()).describe('The `[autofix]` commits of the pull request, oldest first.'),
      round_comments: z.array(z.int()).describe('The rounds the "autofix round N" comments name, as posted.'),
    })
    .nullable()
    .describe(
      'The autofix rounds counted when the verdict was posted; null before one, or when the code host could not say.',
    ),
  deadline_at: timestamp.nullable(),
  updated_at: timestamp,
});

const pullRequestsCheck = defineOperation({
  tool: 'pull_requests_check',
  method: 'GET',
  path: '/api/v1/pull-requests/{id}/check',
  summary:
    "Read the pull request's `Service / Review` check at its current head, as the code host shows it: status, conclusion, title, summary, the fix prompt and the autofix round.",
  description:
    'Documented extension. The check of the newest head svc has seen; when that head has none yet, the latest check of the pull request.',
  scope: 'project',
  params: idParams,
  response: pullRequestCheckRecord,
  handler: async ({ params }, ctx) => {
    const [pr] = await ctx.services.db.orm
      .select({ id: pullRequests.id, headSha: pullRequests.headSha })
      .from(pullRequests)
      .where(
        and(eq(pullRequests.id, params.id), scoped(ctx, pullRequests.workspaceId, pullRequests.projectId)),
      )
      .limit(1);
    if (!pr) throw new ApiError('not_found', `pull request ${params.id} was not found`);
    const checks = await ctx.services.db.orm
      .select()
      .from(checkRuns)
      .where(eq(checkRuns.pullRequestId, pr.id))
      .orderBy(desc(checkRuns.updatedAt), desc(checkRuns.id));
    const check = checks.find((c) => c.headSha === pr.headSha) ?? checks[0];
    if (!check) throw new ApiError('not_found', `pull request ${params.id} has no ${CHECK_NAME} check yet`);
    return {
      object: 'pull_request_check' as const,
      pull_request_id: pr.id,
      name: CHECK_NAME,
      head_sha: check.headSha,
      status: check.status,
      conclusion: check.conclusion,
      title: check.title,
      summary: check.summary,
      fix_prompt: check.conclusion ? check.outputText : null,
      autofix: check.autofix
        ? {
            round: check.autofix.next,
            done: check.autofix.done,
            limit: check.autofix.limit,
            limit_reached: check.autofix.limitReached,
            commits: check.autofix.commits,
            round_comments: check.autofix.comments,
          }
        : null,
      deadline_at: iso(check.deadlineAt),
      updated_at: check.updatedAt.toISOString(),
    };
  },
});

// Findings --------------------------------------------------------------------------------------

export const findingSchema = z.object({
  object: z.literal('finding'),
  id: z.string(),
  status: z.enum(['open', 'fixed', 'dismissed']),
  severity: z.enum(['P0', 'P1', 'P2']),
  path: z.string(),
  line: z.int(),
  end_line: z.int(),
  title: z.string(),
  body: z.string(),
  rule: z.string(),
  category: z.string(),
  reviewers: z.array(z.string()).describe('Every reviewer that reported it (merged).'),
  suggestion: z.string().nullable(),
  fingerprint: z.string().describe('Identity across runs: path, rule and the code it points at.'),
  task_id: z.string().describe('The review task that produced it.'),
  pull_request_id: z.string().nullable(),
  commit_sha: z.string().nullable(),
  first_run_id: z.string(),
  last_run_id: z.string(),
  dismissed_reason: z.string().nullable(),
  dismissed_at: timestamp.nullable(),
  fixed_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const findingsGet = defineOperation({
  tool: 'findings_get',
  method: 'GET',
  path: '/api/v1/findings/{id}',
  summary: 'Read one finding of the ledger.',
  scope: 'project',
  params: idParams,
  response: findingSchema,
  handler: async ({ params }, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(findings)
      .where(and(eq(findings.id, params.id), scoped(ctx, findings.workspaceId, findings.projectId)))
      .limit(1);
    if (!row) throw new ApiError('not_found', `finding ${params.id} was not found`);
    return findingRecord(row);
  },
});

const findingsList = defineOperation({
  tool: 'findings_list',
  method: 'GET',
  path: '/api/v1/findings',
  summary:
    "List the project's findings ledger, newest first; filter by status, severity, pull request or review.",
  scope: 'project',
  query: listQuery.extend({
    status: z
      .enum(['open', 'fixed', 'dismissed', 'all'])
      .optional()
      .describe('One status, or `all` (the same as omitting it), as `svc findings list --status` takes.'),
    severity: z.enum(['P0', 'P1', 'P2']).optional(),
    pull_request_id: z.string().max(200).optional(),
    task_id: z.string().max(200).optional().describe('Findings a review produced (its id).'),
    path: z.string().max(1000).optional(),
  }),
  response: listOf(findingSchema),
  handler: async ({ query }, ctx) => {
    const rows = await ctx.services.db.orm
      .select()
      .from(findings)
      .where(
        and(
          scoped(ctx, findings.workspaceId, findings.projectId),
          query.status && query.status !== 'all' ? eq(findings.status, query.status) : undefined,
          query.severity ? eq(findings.severity, query.severity) : undefined,
          query.pull_request_id ? eq(findings.pullRequestId, query.pull_request_id) : undefined,
          query.task_id ? eq(findings.taskId, query.task_id) : undefined,
          query.path ? eq(findings.path, query.path) : undefined,
          after(query.cursor, findings.createdAt, findings.id),
        ),
      )
      .orderBy(desc(findings.createdAt), desc(findings.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(findingRecord), next_cursor: nextCursor };
  },
});

// Review results --------------------------------------------------------------------------------

const reviewResultRecord = z.object({
  object: z.literal('review_result'),
  id: z.string(),
  task_id: z.string(),
  run_id: z.string(),
  pull_request_id: z.string().nullable(),
  base_sha: z.string(),
  head_sha: z.string(),
  lineup: z.array(z.record(z.string(), z.unknown())),
  plan: z.record(z.string(), z.unknown()).describe('Who chose the lineup and why.'),
  counts: z.record(z.string(), z.number()),
  created_at: timestamp,
  updated_at: timestamp,
});

type ReviewResultRow = typeof reviewResults.$inferSelect;
const toReviewResult = (row: ReviewResultRow): z.infer<typeof reviewResultRecord> => ({
  object: 'review_result',
  id: row.id,
  task_id: row.taskId,
  run_id: row.runId,
  pull_request_id: row.pullRequestId,
  base_sha: row.baseSha,
  head_sha: row.headSha,
  lineup: row.lineup,
  plan: row.plan,
  counts: row.counts,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

const reviewResultsGet = defineOperation({
  tool: 'review_results_get',
  method: 'GET',
  path: '/api/v1/review-results/{id}',
  summary: 'Read one review pass: its lineup, plan and counts.',
  scope: 'project',
  params: idParams,
  response: reviewResultRecord,
  handler: async ({ params }, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(reviewResults)
      .where(
        and(eq(reviewResults.id, params.id), scoped(ctx, reviewResults.workspaceId, reviewResults.projectId)),
      )
      .limit(1);
    if (!row) throw new ApiError('not_found', `review result ${params.id} was not found`);
    return toReviewResult(row);
  },
});

const reviewResultsList = defineOperation({
  tool: 'review_results_list',
  method: 'GET',
  path: '/api/v1/review-results',
  summary: "List the project's review passes, newest first; filter by review (`task_id`) or pull request.",
  scope: 'project',
  query: listQuery.extend({
    task_id: z.string().max(200).optional(),
    pull_request_id: z.string().max(200).optional(),
  }),
  response: listOf(reviewResultRecord),
  handler: async ({ query }, ctx) => {
    const rows = await ctx.services.db.orm
      .select()
      .from(reviewResults)
      .where(
        and(
          scoped(ctx, reviewResults.workspaceId, reviewResults.projectId),
          query.task_id ? eq(reviewResults.taskId, query.task_id) : undefined,
          query.pull_request_id ? eq(reviewResults.pullRequestId, query.pull_request_id) : undefined,
          after(query.cursor, reviewResults.createdAt, reviewResults.id),
        ),
      )
      .orderBy(desc(reviewResults.createdAt), desc(reviewResults.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toReviewResult), next_cursor: nextCursor };
  },
});

export const operations = [
  pullRequestsGet,
  pullRequestsList,
  pullRequestsCheck,
  findingsGet,
  findingsList,
  reviewResultsGet,
  reviewResultsList,
];
