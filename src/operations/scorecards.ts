/**
 * Scorecards (the repository's readiness score and how it was earned), their checks, the ladder
 * of scorecard levels and the quick actions a scorecard suggests. Scorecards are computed by the
 * `scorecard` task (after setup, after each study pass, and on request: `scorecards_compute`, a
 * documented extension); a quick action with an operation runs as a `quick_action` task
 * (`quick_actions_run`, a documented extension). Another project's records are 404.
 */
import { and, asc, desc, eq, gt, inArray, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import { enqueueScorecard } from '../engine/kinds/scorecard';
import { CHECK_RESULTS, LEVELS, levelName } from '../scorecards/definitions';
import {
  latestScorecard,
  type QuickActionRow,
  type ScorecardCheckRow,
  type ScorecardRow,
} from '../scorecards/store';
import { QUICK_ACTION_STATUSES } from '../scorecards/types';
import { projects, quickActions, scorecardChecks, scorecards } from '../storage/schema';
import { collectionRecords, type EventSubject, eventOperations } from './collections';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { listOf, listQuery, taskAck } from './schemas/common';
import { decodeCursor, encodeCursor, page } from './schemas/cursor';

type Record_<K extends keyof typeof collectionRecords> = z.infer<(typeof collectionRecords)[K]>;

const scoped = (ctx: OperationContext) => ({ workspaceId: ctx.workspaceId, projectId: ctx.projectId ?? '' });
const ack = (taskId: string, runId: string) => ({
  id: taskId,
  run_id: runId,
  status_url: `/api/v1/tasks/${taskId}/status`,
});

// Records ---------------------------------------------------------------------------------------

function toScorecard(row: ScorecardRow): Record_<'scorecards'> {
  return {
    object: 'scorecard',
    id: row.id,
    score: row.score,
    level: { level: row.level, name: levelName(row.level) },
    next_level: (row.nextLevel ?? null) as Record_<'scorecards'>['next_level'],
    counts: row.counts,
    commit_sha: row.commitSha,
    knowledge_id: row.knowledgeId,
    trigger: row.trigger as Record_<'scorecards'>['trigger'],
    task_id: row.taskId,
    previous_scorecard_id: row.previousScorecardId,
    gaps: row.gaps,
    computed_at: row.computedAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toCheck(row: ScorecardCheckRow): Record_<'checks'> {
  return {
    object: 'check',
    id: row.id,
    check: row.check as Record_<'checks'>['check'],
    title: row.title,
    category: row.category as Record_<'checks'>['category'],
    weight: row.weight,
    result: row.result,
    evidence: row.evidence as Record_<'checks'>['evidence'],
    remedy: row.remedy,
    scorecard_id: row.scorecardId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toQuickAction(row: QuickActionRow): Record_<'quick-actions'> {
  return {
    object: 'quick_action',
    id: row.id,
    kind: row.kind as Record_<'quick-actions'>['kind'],
    check: row.check as Record_<'quick-actions'>['check'],
    title: row.title,
    does: row.does,
    operation: row.operation ?? null,
    why_no_operation: row.whyNoOperation,
    change: (row.change ?? null) as Record_<'quick-actions'>['change'],
    status: row.status,
    task_id: row.taskId,
    result: row.result ?? null,
    scorecard_id: row.scorecardId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toLevel(level: (typeof LEVELS)[number], latest: ScorecardRow | null): Record_<'scorecard-levels'> {
  return {
    object: 'scorecard_level',
    id: level.id,
    level: level.level,
    name: level.name,
    description: level.description,
    requires: [...level.requires],
    reached: latest ? latest.level >= level.level : null,
    scorecard_id: latest?.id ?? null,
  };
}

// Lookups ---------------------------------------------------------------------------------------

async function findScorecard(ctx: OperationContext, id: string): Promise<ScorecardRow> {
  const [row] = await ctx.services.db.orm
    .select()
    .from(scorecards)
    .where(
      and(
        eq(scorecards.id, id),
        eq(scorecards.workspaceId, ctx.workspaceId),
        eq(scorecards.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  if (!row) throw notFound('scorecard', id);
  return row;
}

/** The scorecard a list reads: the one named, else the project's latest (null before the first). */
async function scorecardFor(ctx: OperationContext, id: string | undefined): Promise<ScorecardRow | null> {
  if (id !== undefined) return findScorecard(ctx, id);
  const { workspaceId, projectId } = scoped(ctx);
  return latestScorecard(ctx.services.db.orm, workspaceId, projectId);
}

async function findQuickAction(ctx: OperationContext, id: string): Promise<QuickActionRow> {
  const [row] = await ctx.services.db.orm
    .select()
    .from(quickActions)
    .where(
      and(
        eq(quickActions.id, id),
        eq(quickActions.workspaceId, ctx.workspaceId),
        eq(quickActions.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  if (!row) throw notFound('quick action', id);
  return row;
}

/**
 * One page of a scorecard's rows (its checks, its quick actions): the scorecard named, else the
 * project's latest (an empty list before the first). Rows come in insertion order: ids are
 * time-ordered, so a page starts after the cursor's id. `read` gets the scorecard, that id and
 * how many rows to read (one more than the page, to know whether another follows).
 */
async function pageOfScorecard<Row extends { id: string; createdAt: Date }, Out>(
  ctx: OperationContext,
  query: { scorecard_id?: string | undefined; cursor?: string | undefined; limit: number },
  toRecord: (row: Row) => Out,
  read: (scorecardId: string, after: string | undefined, limit: number) => Promise<Row[]>,
) {
  const scorecard = await scorecardFor(ctx, query.scorecard_id);
  if (!scorecard) return { object: 'list' as const, data: [], next_cursor: null };
  const rows = await read(scorecard.id, decodeCursor(query.cursor)?.id, query.limit + 1);
  const { data, nextCursor } = page(rows, query.limit);
  return { object: 'list' as const, data: data.map(toRecord), next_cursor: nextCursor };
}

const ids = (description: string) => z.strictObject({ id: z.string().min(1).max(200).describe(description) });

const scorecardIdQuery = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("Scorecard id; omitted: the project's latest scorecard.");

// Operations ------------------------------------------------------------------------------------

const scorecardsGet = defineOperation({
  tool: 'scorecards_get',
  method: 'GET',
  path: '/api/v1/scorecards/{id}',
  summary: 'Read one scorecard: score, level reached, what the next level needs, counts and gaps.',
  scope: 'project',
  params: ids('Scorecard id (`scd_…`).'),
  response: collectionRecords.scorecards,
  handler: async ({ params }, ctx) => toScorecard(await findScorecard(ctx, params.id)),
});

const scorecardsList = defineOperation({
  tool: 'scorecards_list',
  method: 'GET',
  path: '/api/v1/scorecards',
  summary: "List the project's scorecards, newest first (the first is the current one).",
  scope: 'project',
  query: listQuery,
  response: listOf(collectionRecords.scorecards),
  handler: async ({ query }, ctx) => {
    const after = decodeCursor(query.cursor);
    const rows = await ctx.services.db.orm
      .select()
      .from(scorecards)
      .where(
        and(
          eq(scorecards.workspaceId, ctx.workspaceId),
          eq(scorecards.projectId, ctx.projectId ?? ''),
          after
            ? or(
                lt(scorecards.createdAt, after.createdAt),
                and(eq(scorecards.createdAt, after.createdAt), lt(scorecards.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(scorecards.createdAt), desc(scorecards.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toScorecard), next_cursor: nextCursor };
  },
});

const scorecardsCompute = defineOperation({
  tool: 'scorecards_compute',
  method: 'POST',
  path: '/api/v1/scorecards',
  summary: "Recompute the project's scorecard: starts a `scorecard` task and answers the task to poll.",
  description:
    'Documented extension (the spec has no create for scorecards). The task reads the default branch, the repository knowledge (refreshed when it was read at another commit), branch protection and the findings ledger, and writes a new scorecard with its checks, quick actions and a `computed` event naming what changed.',
  scope: 'project',
  status: 202,
  response: taskAck,
  handler: async (_input, ctx) => {
    const { workspaceId, projectId } = scoped(ctx);
    const [project] = await ctx.services.db.orm
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.id, projectId), eq(projects.workspaceId, workspaceId)))
      .limit(1);
    if (!project) throw notFound('project', projectId);
    const { task, run } = await enqueueScorecard(ctx.services.engine, { workspaceId, projectId }, 'request');
    return ack(task.id, run.id);
  },
});

const checksGet = defineOperation({
  tool: 'checks_get',
  method: 'GET',
  path: '/api/v1/checks/{id}',
  summary: 'Read one check of a scorecard: its result, the evidence it was judged from and the remedy.',
  scope: 'project',
  params: ids('Check id (`chk_…`).'),
  response: collectionRecords.checks,
  handler: async ({ params }, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(scorecardChecks)
      .where(
        and(
          eq(scorecardChecks.id, params.id),
          eq(scorecardChecks.workspaceId, ctx.workspaceId),
          eq(scorecardChecks.projectId, ctx.projectId ?? ''),
        ),
      )
      .limit(1);
    if (!row) throw notFound('check', params.id);
    return toCheck(row);
  },
});

const checksList = defineOperation({
  tool: 'checks_list',
  method: 'GET',
  path: '/api/v1/checks',
  summary: "List a scorecard's checks in catalogue order (default: the project's latest scorecard).",
  scope: 'project',
  query: listQuery.extend({
    scorecard_id: scorecardIdQuery,
    result: z.enum(CHECK_RESULTS).optional().describe('Only checks with this result.'),
  }),
  response: listOf(collectionRecords.checks),
  handler: async ({ query }, ctx) =>
    pageOfScorecard(ctx, query, toCheck, (scorecardId, after, limit) =>
      ctx.services.db.orm
        .select()
        .from(scorecardChecks)
        .where(
          and(
            eq(scorecardChecks.scorecardId, scorecardId),
            query.result ? eq(scorecardChecks.result, query.result) : undefined,
            after ? gt(scorecardChecks.id, after) : undefined,
          ),
        )
        .orderBy(asc(scorecardChecks.id))
        .limit(limit),
    ),
});

const levelParams = z.strictObject({
  id: z.string().min(1).max(200).describe('Level id, `lvl_1` … `lvl_5`.'),
});

const levelsGet = defineOperation({
  tool: 'scorecard_levels_get',
  method: 'GET',
  path: '/api/v1/scorecard-levels/{id}',
  summary:
    "Read one level of the ladder: the checks it requires and whether the project's latest scorecard reached it.",
  scope: 'project',
  params: levelParams,
  response: collectionRecords['scorecard-levels'],
  handler: async ({ params }, ctx) => {
    const level = LEVELS.find((l) => l.id === params.id);
    if (!level) throw notFound('scorecard level', params.id);
    return toLevel(level, await scorecardFor(ctx, undefined));
  },
});

const levelsList = defineOperation({
  tool: 'scorecard_levels_list',
  method: 'GET',
  path: '/api/v1/scorecard-levels',
  summary:
    "List the ladder, lowest level first (the same for every project), each with whether the project's latest scorecard reached it.",
  scope: 'project',
  query: listQuery,
  response: listOf(collectionRecords['scorecard-levels']),
  handler: async ({ query }, ctx) => {
    const latest = await scorecardFor(ctx, undefined);
    const after = decodeCursor(query.cursor)?.id;
    const rest = after ? LEVELS.filter((l) => l.id > after) : [...LEVELS];
    const data = rest.slice(0, query.limit);
    const last = data[data.length - 1];
    const nextCursor =
      rest.length > query.limit && last ? encodeCursor({ createdAt: new Date(0), id: last.id }) : null;
    return { object: 'list' as const, data: data.map((l) => toLevel(l, latest)), next_cursor: nextCursor };
  },
});

const quickActionsGet = defineOperation({
  tool: 'quick_actions_get',
  method: 'GET',
  path: '/api/v1/quick-actions/{id}',
  summary:
    'Read one quick action: what it will do, the operation that does it (or why there is none), its status.',
  scope: 'project',
  params: ids('Quick action id (`qac_…`).'),
  response: collectionRecords['quick-actions'],
  handler: async ({ params }, ctx) => toQuickAction(await findQuickAction(ctx, params.id)),
});

const quickActionsList = defineOperation({
  tool: 'quick_actions_list',
  method: 'GET',
  path: '/api/v1/quick-actions',
  summary:
    "List the next steps a scorecard suggests, lowest level first (default: the project's latest scorecard).",
  scope: 'project',
  query: listQuery.extend({
    scorecard_id: scorecardIdQuery,
    status: z.enum(QUICK_ACTION_STATUSES).optional().describe('Only actions with this status.'),
  }),
  response: listOf(collectionRecords['quick-actions']),
  handler: async ({ query }, ctx) =>
    pageOfScorecard(ctx, query, toQuickAction, (scorecardId, after, limit) =>
      ctx.services.db.orm
        .select()
        .from(quickActions)
        .where(
          and(
            eq(quickActions.scorecardId, scorecardId),
            query.status ? eq(quickActions.status, query.status) : undefined,
            after ? gt(quickActions.id, after) : undefined,
          ),
        )
        .orderBy(asc(quickActions.id))
        .limit(limit),
    ),
});

const quickActionsRun = defineOperation({
  tool: 'quick_actions_run',
  method: 'POST',
  path: '/api/v1/quick-actions/{id}/runs',
  summary:
    'Do a quick action: starts a `quick_action` task (a draft pull request, or the review check made required).',
  description:
    "Documented extension. Only an action with an `operation`, of the project's latest scorecard, not already running or done; otherwise 409 `conflict` saying why. The action's `status` and `result` record what happened.",
  scope: 'project',
  status: 202,
  params: ids('Quick action id (`qac_…`).'),
  response: taskAck,
  handler: async ({ params }, ctx) => {
    const action = await findQuickAction(ctx, params.id);
    if (!action.operation) {
      throw new ApiError(
        'conflict',
        `quick action ${action.id} (${action.kind}) has no operation: ${action.whyNoOperation ?? 'svc cannot do it'}; ${action.does}`,
        { why_no_operation: action.whyNoOperation },
      );
    }
    const { workspaceId, projectId } = scoped(ctx);
    const latest = await latestScorecard(ctx.services.db.orm, workspaceId, projectId);
    if (latest && latest.id !== action.scorecardId) {
      const [current] = await ctx.services.db.orm
        .select({ id: quickActions.id })
        .from(quickActions)
        .where(and(eq(quickActions.scorecardId, latest.id), eq(quickActions.kind, action.kind)))
        .limit(1);
      throw new ApiError(
        'conflict',
        `quick action ${action.id} belongs to scorecard ${action.scorecardId}, which scorecard ${latest.id} replaced; ${current ? `run its ${action.kind} action ${current.id}` : `it no longer suggests ${action.kind}`}`,
        { latest_scorecard_id: latest.id, quick_action_id: current?.id ?? null },
      );
    }
    return ctx.services.db.orm.transaction(async (tx) => {
      // Claimed in the transaction that creates its task: two clicks never start two runs.
      const [claimed] = await tx
        .update(quickActions)
        .set({ status: 'running', result: null, updatedAt: new Date() })
        .where(and(eq(quickActions.id, action.id), inArray(quickActions.status, ['available', 'failed'])))
        .returning({ id: quickActions.id });
      if (!claimed) {
        throw new ApiError(
          'conflict',
          `quick action ${action.id} is already ${action.status === 'done' ? 'done' : action.status}${action.taskId ? ` (task ${action.taskId})` : ''}`,
          { status: action.status, task_id: action.taskId, result: action.result },
        );
      }
      const { task, run } = await ctx.services.engine.createTaskIn(tx, {
        workspaceId,
        projectId,
        kind: 'quick_action',
        title: action.title,
        input: { quick_action_id: action.id },
      });
      await tx.update(quickActions).set({ taskId: task.id }).where(eq(quickActions.id, action.id));
      return ack(task.id, run.id);
    });
  },
});

/** Scorecards log a `computed` event (what changed since the previous one); people may add their own. */
const scorecardSubject: EventSubject = {
  objectType: 'scorecard',
  exists: (ctx, id) =>
    findScorecard(ctx, id).then(
      () => true,
      (error: unknown) => {
        if (error instanceof ApiError && error.code === 'not_found') return false;
        throw error;
      },
    ),
};

export const operations: Operation[] = [
  ...eventOperations('scorecards', 'scorecards', 'id', scorecardSubject),
  scorecardsGet,
  scorecardsList,
  scorecardsCompute,
  checksGet,
  checksList,
  levelsGet,
  levelsList,
  quickActionsGet,
  quickActionsList,
  quickActionsRun,
];
