/**
 * The spec's "Collections": the record schema of each collection, the event append/read pair
 * every collection with events builds from, and the learnings collection itself. The other
 * collections' operations live in their own modules (the ledger's, scorecards, timeline,
 * swarms…). Record fields the spec does not show are open (`looseObject`): each record carries
 * `object`, `id`, `created_at`, `updated_at` and the fields the spec names.
 */
import { and, asc, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { REVIEW_STATUSES } from '../core/checks';
import { ApiError, notFound } from '../core/errors';
import { LEARNING_ACTIONS } from '../core/learning-scope';
import { APPROVAL_STATUSES, PLAN_STATUSES, REPO_WRITE_STATUSES } from '../core/plans';
import { isForgotten, type LearningRow, notForgottenAt } from '../review/learnings';
import { SWARM_STATUSES } from '../review/swarm';
import { SWARM_GOALS } from '../review/swarm-goals';
import { CHECK_CATEGORIES, CHECK_IDS, CHECK_RESULTS } from '../scorecards/definitions';
import { SCORECARD_TRIGGERS } from '../scorecards/store';
import { QUICK_ACTION_KINDS, QUICK_ACTION_STATUSES } from '../scorecards/types';
import { newId } from '../storage/ids';
import { appendObjectEvent, type EventRow, type Tx, toEventRecord } from '../storage/object-events';
import { events, learnings } from '../storage/schema';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { idParam, listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page, pastCursor } from './schemas/cursor';

const record = <O extends string, S extends z.ZodRawShape>(object: O, shape: S) =>
  z.looseObject({
    object: z.literal(object),
    id: z.string(),
    ...shape,
    created_at: timestamp,
    updated_at: timestamp,
  });

const severity = z.enum(['P0', 'P1', 'P2']);

/** A learning's machine-readable scope (src/core/learning-scope.ts). */
export const learningScope = z
  .strictObject({
    rule: z.string().min(1).max(200).optional().describe('Full rule id, e.g. `security/weak-hash`.'),
    path: z.string().min(1).max(500).optional().describe('Path glob, e.g. `legacy/**`.'),
    action: z
      .enum(LEARNING_ACTIONS)
      .describe('`suppress`: record covered findings as dismissed; `downgrade`: one severity lower.'),
  })
  .refine((s) => s.rule !== undefined || s.path !== undefined, {
    message: 'a scope names a rule, a path glob or both',
  });

/** Records of each collection, by collection name (hyphenated as in the path). */
export const collectionRecords = {
  checks: record('check', {
    check: z.enum(CHECK_IDS).describe('The check, by its catalogue id (e.g. `lockfile_committed`).'),
    title: z.string(),
    category: z.enum(CHECK_CATEGORIES),
    weight: z.int().describe('How much it counts in the score.'),
    result: z
      .enum(CHECK_RESULTS)
      .describe(
        '`unknown`: a fact could not be read, or too few findings to judge; the evidence says which.',
      ),
    evidence: z
      .looseObject({
        paths: z.array(z.string()).optional().describe('Files the result was judged from.'),
        numbers: z.record(z.string(), z.number()).optional().describe('The counts it was judged from.'),
        note: z.string().describe('What was found, in a sentence.'),
      })
      .describe('What the result was judged from.'),
    remedy: z.string().describe('What to do when it does not pass.'),
    scorecard_id: z.string(),
  }),
  findings: record('finding', {
    severity,
    path: z.string(),
    line: z.int().nullable(),
    task_id: z.string().describe('The review task that produced the finding.'),
    status: z.enum(['open', 'fixed', 'dismissed']),
  }),
  learnings: record('learning', {
    learning: z.string().describe('One-sentence fact.'),
    why: z.string().nullable(),
    learned_at: timestamp,
    forgets_at: timestamp.nullable().describe('The learning stops being used after this date.'),
    forgotten: z.boolean().describe('True once `forgets_at` has passed: reviews no longer use it.'),
    scope: learningScope
      .nullable()
      .describe('What rule reviewers do with it; null: a sentence for model reviewers only.'),
  }),
  plans: record('plan', {
    status: z.enum(PLAN_STATUSES),
    approval_status: z.enum(APPROVAL_STATUSES),
    requires_approval: z
      .boolean()
      .describe('False when the document waives approval (`requires_approval: false` front matter).'),
    repo_write_mode: z.literal('draft_pr'),
    repo_write_status: z.enum(REPO_WRITE_STATUSES),
    source_kind: z.enum(['repo', 'svc', 'task']),
    repo_artifact_path: z.string().nullable(),
    target_outcome: z.string().nullable(),
    summary: z.string().nullable(),
  }),
  'pull-requests': record('pull_request', {
    number: z.int(),
    review_status: z.enum(REVIEW_STATUSES).nullable(),
    last_reviewed_at: timestamp.nullable(),
    last_review_run_id: z.string().nullable(),
  }),
  'quick-actions': record('quick_action', {
    kind: z.enum(QUICK_ACTION_KINDS).describe('What kind of step it is (stable across scorecards).'),
    check: z.enum(CHECK_IDS).describe('The check it would make pass.'),
    title: z.string(),
    does: z.string().describe('What it will do, in one sentence.'),
    operation: z
      .object({ tool: z.string(), method: z.string(), path: z.string() })
      .nullable()
      .describe('The operation that does it as a task (`quick_actions_run`); null when svc cannot do it.'),
    why_no_operation: z.string().nullable().describe('Why svc cannot do it (when `operation` is null).'),
    change: z
      .looseObject({
        files: z.array(z.object({ path: z.string(), content: z.string() })),
        pull_request: z.object({ title: z.string(), body: z.string() }),
        commit_message: z.string(),
      })
      .nullable()
      .describe('The draft pull request it opens, files in full; null when it opens none.'),
    status: z.enum(QUICK_ACTION_STATUSES),
    task_id: z.string().nullable().describe('The `quick_action` task that ran it.'),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'What running it did: `pull_request` {number, url}, `branch`, `commit`; or `error` {reason, message}.',
      ),
    scorecard_id: z.string(),
  }),
  'repo-knowledge': record('repo_knowledge', {
    content: z
      .record(z.string(), z.unknown())
      .describe(
        "The repository-knowledge file `svc.json`: languages, runtimes, package managers, tooling, CI and conventions, each fact with its evidence; the repository's own `svc.json` overrides, marked `declared`.",
      ),
    commit_sha: z.string().describe('The commit it was read from.'),
    refreshed_at: timestamp.describe('When it was last refreshed.'),
    refreshed_by: z
      .string()
      .describe(
        'What refreshed it: `setup`; `review` (a review found none stored); `push` (a file it is derived from changed on the default branch); `scorecard` (a scorecard read a newer commit).',
      ),
    gaps: z
      .array(z.object({ code: z.string(), message: z.string() }))
      .describe('What could not be read, by name; such facts are absent, never guessed.'),
  }),
  'review-results': record('review_result', { task_id: z.string(), pr: z.int().nullable() }),
  // The ladder ships with the build, the same for every project: it has no creation time.
  'scorecard-levels': z.looseObject({
    object: z.literal('scorecard_level'),
    id: z.string().describe('Stable: `lvl_1` … `lvl_5`.'),
    level: z.int(),
    name: z.string(),
    description: z.string(),
    requires: z
      .array(z.enum(CHECK_IDS))
      .describe('Checks this level adds; every lower level’s are needed too.'),
    reached: z
      .boolean()
      .nullable()
      .describe("Whether the project's latest scorecard reached it; null before its first scorecard."),
    scorecard_id: z.string().nullable().describe('The scorecard `reached` comes from.'),
  }),
  scorecards: record('scorecard', {
    score: z
      .int()
      .min(0)
      .max(100)
      .nullable()
      .describe(
        'Weighted share of decided checks that pass; unknown checks are left out. Null: none decided.',
      ),
    level: z.object({ level: z.int(), name: z.string() }).describe('The level reached (0: none).'),
    next_level: z
      .object({ level: z.int(), name: z.string(), needs: z.array(z.enum(CHECK_IDS)) })
      .nullable()
      .describe('The next level and the checks it still needs (failing or unknown); null at the top.'),
    counts: z.object({ pass: z.int(), fail: z.int(), unknown: z.int() }),
    commit_sha: z.string().nullable().describe('The default-branch commit the facts were read at.'),
    knowledge_id: z.string().nullable().describe('The repo-knowledge record the checks read.'),
    trigger: z.enum(SCORECARD_TRIGGERS).describe('What recomputed it: `setup`, `study` or `request`.'),
    task_id: z.string().nullable().describe('The `scorecard` task that computed it.'),
    previous_scorecard_id: z.string().nullable(),
    gaps: z
      .array(z.object({ code: z.string(), message: z.string() }))
      .describe('Facts that could not be read, by name; the checks needing them are `unknown`.'),
    computed_at: timestamp,
  }),
  swarms: record('swarm', {
    goal: z.enum(SWARM_GOALS).describe('What the swarm works toward.'),
    params: z.record(z.string(), z.unknown()).describe("The goal's parameters, defaults filled in."),
    status: z
      .enum(SWARM_STATUSES)
      .describe(
        '`queued` until it fans out; `running` while a child is active; `completed` once every child ended and one succeeded (or there was nothing to do); `failed` when every child failed or the swarm could not run; `canceled`.',
      ),
    task_id: z.string().describe("The swarm's own task (its id is the swarm id)."),
    children: z
      .object({
        pending: z.int(),
        running: z.int(),
        completed: z.int(),
        failed: z.int(),
        canceled: z.int(),
        total: z.int(),
      })
      .describe("Child tasks by their latest run's status."),
    child_task_ids: z.array(z.string()).describe('Every child task, oldest first.'),
    spend_usd: z
      .number()
      .nullable()
      .describe("Known spend of the children; null when no child's cost is known (never 0 for unknown)."),
    cost_unknown_children: z
      .int()
      .describe('Children that ran and whose cost is unknown (not in `spend_usd`).'),
    result: z
      .record(z.string(), z.unknown())
      .describe("The goal's result so far (final once the swarm has ended)."),
    skipped: z
      .array(z.record(z.string(), z.unknown()))
      .describe('What the goal left out, each with its `reason` (e.g. `never_reviewed`).'),
    error: z
      .looseObject({ code: z.string(), message: z.string() })
      .nullable()
      .describe('Why the swarm itself failed, by name.'),
  }),
  'timeline-events': record('timeline_event', {
    subject_type: z.string().describe('The kind of object it happened to, e.g. `finding`, `plan`.'),
    subject_id: z.string(),
    kind: z.string().describe('What happened, e.g. `dismissed`, `approved`, `computed`.'),
    actor: z
      .string()
      .nullable()
      .describe('Id of the API key that caused it; null when svc did it on its own.'),
    payload: z.record(z.string(), z.unknown()).describe('What changed (before and after, where known).'),
    occurred_at: timestamp.describe('When it happened (may precede `created_at`, when it was appended).'),
  }),
} as const;

/** Event append body and event record, shared by every `/events` pair (reviewers too). */
export const eventAppendBody = z.strictObject({
  kind: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z][a-z0-9_.]*$/, 'lower-case dotted or snake_case name')
    .describe('Event kind, e.g. `note.added`.'),
  payload: z.record(z.string(), z.unknown()).default({}).describe('Event payload (JSON object).'),
  occurred_at: timestamp.optional().describe('When it happened; default now.'),
});

export const eventRecord = z.object({
  object: z.literal('event'),
  id: z.string(),
  subject_type: z.string(),
  subject_id: z.string(),
  kind: z.string(),
  payload: z.record(z.string(), z.unknown()),
  occurred_at: timestamp,
  actor: z.string().nullable().describe('Id of the API key that appended it; null for the service itself.'),
  created_at: timestamp,
});

/** What the `/events` pair of a collection needs to know about the records it logs. */
export interface EventSubject {
  /** `events.object_type`, e.g. `reviewer`. */
  objectType: string;
  /** Whether the record exists for this caller (another workspace's or project's record: no). */
  exists(ctx: OperationContext, id: string): Promise<boolean>;
  /** Applies an appended event to its record, in the append's transaction (optional). */
  apply?(tx: Tx, ctx: OperationContext, id: string, event: EventRow): Promise<void>;
}

async function requireSubject(subject: EventSubject, ctx: OperationContext, id: string) {
  if (!(await subject.exists(ctx, id))) throw notFound(subject.objectType, id);
}

/**
 * The append-event and read-events operations on `/<collection>/{id}/events`. Without a
 * `subject` the pair is declared but answers 501 until its collection is implemented.
 */
export function eventOperations(
  collection: string,
  tool: string,
  paramName: string,
  subject: EventSubject,
): Operation[] {
  const params = idParam(paramName, `Id of the ${collection} record.`);
  const idOf = (p: Record<string, string>) => p[paramName] ?? '';
  return [
    defineOperation({
      tool: `${tool}_append_event`,
      method: 'POST',
      path: `/api/v1/${collection}/{${paramName}}/events`,
      summary: `Append an event to a ${collection} record.`,
      scope: 'project',
      params,
      body: eventAppendBody,
      response: eventRecord,
      status: 201,
      handler: async ({ params: p, body }, ctx) => {
        const id = idOf(p);
        await requireSubject(subject, ctx, id);
        const row = await ctx.services.db.orm.transaction(async (tx) => {
          const appended = await appendObjectEvent(tx, {
            workspaceId: ctx.workspaceId,
            projectId: ctx.projectId,
            objectType: subject.objectType,
            objectId: id,
            kind: body.kind,
            payload: body.payload,
            occurredAt: body.occurred_at ? new Date(body.occurred_at) : undefined,
            actor: ctx.principal.keyId,
          });
          await subject.apply?.(tx, ctx, id, appended);
          return appended;
        });
        return toEventRecord(row);
      },
    }),
    defineOperation({
      tool: `${tool}_events`,
      method: 'GET',
      path: `/api/v1/${collection}/{${paramName}}/events`,
      summary: `Read the events of a ${collection} record, oldest first.`,
      scope: 'project',
      params,
      query: listQuery,
      response: listOf(eventRecord),
      handler: async ({ params: p, query }, ctx) => {
        const id = idOf(p);
        await requireSubject(subject, ctx, id);
        const after = decodeCursor(query.cursor);
        const rows = await ctx.services.db.orm
          .select()
          .from(events)
          .where(
            and(
              eq(events.workspaceId, ctx.workspaceId),
              eq(events.objectType, subject.objectType),
              eq(events.objectId, id),
              pastCursor(events, after, 'oldest_first'),
            ),
          )
          .orderBy(asc(events.createdAt), asc(events.id))
          .limit(query.limit + 1);
        const { data, nextCursor } = page(rows, query.limit);
        return { object: 'list' as const, data: data.map(toEventRecord), next_cursor: nextCursor };
      },
    }),
  ];
}

// Learnings: the project's own records (another project's learning is 404), created by the
// documented extension `learnings_create`, forgotten from `forgets_at` on.

const learningRecord = collectionRecords.learnings;

function toLearningRecord(row: LearningRow, now = new Date()) {
  return {
    object: 'learning' as const,
    id: row.id,
    learning: row.learning,
    why: row.why === '' ? null : row.why,
    learned_at: row.learnedAt.toISOString(),
    forgets_at: row.forgetsAt ? row.forgetsAt.toISOString() : null,
    forgotten: isForgotten(row, now),
    scope: row.scope ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function findLearning(ctx: OperationContext, id: string): Promise<LearningRow | null> {
  const [row] = await ctx.services.db.orm
    .select()
    .from(learnings)
    .where(
      and(
        eq(learnings.id, id),
        eq(learnings.workspaceId, ctx.workspaceId),
        eq(learnings.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  return row ?? null;
}

export const learningCreateBody = z.strictObject({
  learning: z.string().trim().min(1).max(1000).describe('The fact, in one sentence.'),
  why: z.string().trim().max(4000).optional().describe('Why it holds: where it was learned.'),
  forgets_at: timestamp
    .optional()
    .describe('When reviews stop using it (must be in the future); omitted: never.'),
  scope: learningScope
    .optional()
    .describe('Makes rule reviewers honour it: which findings (rule and/or path glob) and what to do.'),
});

const learningListQuery = listQuery.extend({
  include_forgotten: z
    .enum(['true', 'false'])
    .default('false')
    .describe('`true` also lists learnings past their `forgets_at` (default `false`).'),
});

/**
 * Event kinds a learning acts on: `forgotten` moves `forgets_at` to the event's `occurred_at`
 * (never later than it was), so a wrong learning can be retired without deleting its history.
 */
const learningSubject: EventSubject = {
  objectType: 'learning',
  exists: async (ctx, id) => (await findLearning(ctx, id)) !== null,
  apply: async (tx, ctx, id, event) => {
    if (event.kind !== 'forgotten') return;
    const at = new Date(toEventRecord(event).occurred_at);
    await tx
      .update(learnings)
      .set({ forgetsAt: at, updatedAt: new Date() })
      .where(and(eq(learnings.id, id), eq(learnings.workspaceId, ctx.workspaceId), notForgottenAt(at)));
  },
};

const learningOperations: Operation[] = [
  defineOperation({
    tool: 'learnings_get',
    method: 'GET',
    path: '/api/v1/learnings/{id}',
    summary: 'Read one learning of the project (forgotten ones too, flagged `forgotten`).',
    scope: 'project',
    params: z.strictObject({ id: z.string().min(1).max(200).describe('Learning id.') }),
    response: learningRecord,
    handler: async ({ params }, ctx) => {
      const row = await findLearning(ctx, params.id);
      if (!row) throw notFound('learning', params.id);
      return toLearningRecord(row);
    },
  }),
  defineOperation({
    tool: 'learnings_list',
    method: 'GET',
    path: '/api/v1/learnings',
    summary:
      "List the project's learnings, newest first; those past `forgets_at` only with `include_forgotten=true`.",
    scope: 'project',
    query: learningListQuery,
    response: listOf(learningRecord),
    handler: async ({ query }, ctx) => {
      const now = new Date();
      const after = decodeCursor(query.cursor);
      const rows = await ctx.services.db.orm
        .select()
        .from(learnings)
        .where(
          and(
            eq(learnings.workspaceId, ctx.workspaceId),
            eq(learnings.projectId, ctx.projectId ?? ''),
            query.include_forgotten === 'true' ? undefined : notForgottenAt(now),
            after
              ? or(
                  lt(learnings.createdAt, after.createdAt),
                  and(eq(learnings.createdAt, after.createdAt), lt(learnings.id, after.id)),
                )
              : undefined,
          ),
        )
        .orderBy(desc(learnings.createdAt), desc(learnings.id))
        .limit(query.limit + 1);
      const { data, nextCursor } = page(rows, query.limit);
      return {
        object: 'list' as const,
        data: data.map((row) => toLearningRecord(row, now)),
        next_cursor: nextCursor,
      };
    },
  }),
  defineOperation({
    tool: 'learnings_create',
    method: 'POST',
    path: '/api/v1/learnings',
    summary: 'Record a learning: a one-sentence fact later reviews of the project are told.',
    description:
      'Documented extension (the spec has no create for learnings). Appends a `created` event to the learning.',
    scope: 'project',
    body: learningCreateBody,
    response: learningRecord,
    status: 201,
    handler: async ({ body }, ctx) => {
      const now = new Date();
      const forgetsAt = body.forgets_at ? new Date(body.forgets_at) : null;
      if (forgetsAt && forgetsAt.getTime() <= now.getTime()) {
        throw new ApiError(
          'validation_failed',
          `forgets_at ${body.forgets_at} is not in the future: the learning would never be used; omit it to keep the learning until it is forgotten`,
        );
      }
      const projectId = ctx.projectId ?? '';
      const row = await ctx.services.db.orm.transaction(async (tx) => {
        const [inserted] = await tx
          .insert(learnings)
          .values({
            id: newId('learning'),
            workspaceId: ctx.workspaceId,
            projectId,
            learning: body.learning,
            why: body.why ?? '',
            learnedAt: now,
            forgetsAt,
            scope: body.scope ?? null,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        if (!inserted) throw new Error('learning insert returned no row');
        await appendObjectEvent(tx, {
          workspaceId: ctx.workspaceId,
          projectId,
          objectType: 'learning',
          objectId: inserted.id,
          kind: 'created',
          payload: {},
          occurredAt: now,
          actor: ctx.principal.keyId,
        });
        return inserted;
      });
      return toLearningRecord(row, now);
    },
  }),
];

export const operations: Operation[] = [
  ...learningOperations,
  ...eventOperations('learnings', 'learnings', 'id', learningSubject),
];
