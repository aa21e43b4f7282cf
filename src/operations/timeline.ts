/**
 * Timeline events: the spec's append-only record of what happened to each object, read across
 * objects. Every event svc or a caller appends to an object's log (src/storage/object-events.ts:
 * reviewers, learnings, findings, plans, scorecards, pull requests; projects, keys and settings
 * through ./change-events.ts) is a timeline event; nothing edits or deletes one. A project's
 * timeline holds its own objects' events and those of workspace-wide objects (`visibleTo`);
 * another project's are not there.
 *
 * Also the pull-request event pair: a note from an agent or a person on a pull request, beside
 * the events svc writes about it.
 */
import { and, desc, eq, gte, inArray, isNull, lte, or, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { notFound } from '../core/errors';
import { type EventRow, toEventRecord } from '../storage/object-events';
import { events, pullRequests } from '../storage/schema';
import { collectionRecords, type EventSubject, eventOperations } from './collections';
import { callerNotifyKinds, notifiedBy } from './preferences';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { idParam, listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page, pastCursor } from './schemas/cursor';

const timelineEvent = collectionRecords['timeline-events'];

function toTimelineRecord(row: EventRow) {
  const { id, subject_type, subject_id, kind, payload, occurred_at, actor, created_at } = toEventRecord(row);
  return {
    object: 'timeline_event' as const,
    id,
    subject_type,
    subject_id,
    kind,
    actor,
    payload,
    occurred_at,
    created_at,
    // Append-only: a timeline event is never updated.
    updated_at: created_at,
  };
}

/** Workspace-wide objects whose events a project-pinned key sees: they shape its reviews. */
const SHARED_WITH_PROJECTS = ['reviewer'];

/**
 * The events the caller may see: the project's own, and those of workspace-wide objects (keys,
 * workspace settings, reviewers); a project-pinned key sees only reviewers' of the latter, as it
 * cannot read keys or workspace settings either.
 */
const visibleTo = (ctx: OperationContext): SQL | undefined =>
  and(
    eq(events.workspaceId, ctx.workspaceId),
    or(
      ctx.projectId ? eq(events.projectId, ctx.projectId) : undefined,
      and(
        isNull(events.projectId),
        ctx.principal.pinnedProjectId ? inArray(events.objectType, SHARED_WITH_PROJECTS) : undefined,
      ),
    ),
  );

const timelineQuery = listQuery.extend({
  subject_type: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Only events of this kind of object, e.g. `finding`, `plan`, `pull_request`.'),
  subject_id: z.string().min(1).max(200).optional().describe('Only events of this object.'),
  kind: z.string().min(1).max(100).optional().describe('Only events of this kind, e.g. `dismissed`.'),
  since: timestamp.optional().describe('Only events appended at or after this time.'),
  until: timestamp.optional().describe('Only events appended at or before this time.'),
  only: z
    .enum(['notifications'])
    .optional()
    .describe(
      "`notifications`: only the events the caller is notified of (their preferences' `notify`: new P0s on pull requests, failed runs, plans awaiting approval, quick action results).",
    ),
});

const timelineOperations: Operation[] = [
  defineOperation({
    tool: 'timeline_events_list',
    method: 'GET',
    path: '/api/v1/timeline-events',
    summary: "List the project's timeline events, newest first, by object, kind and time.",
    scope: 'project',
    query: timelineQuery,
    response: listOf(timelineEvent),
    handler: async ({ query }, ctx) => {
      const after = decodeCursor(query.cursor);
      const notified = query.only === 'notifications' ? notifiedBy(await callerNotifyKinds(ctx)) : undefined;
      const rows = await ctx.services.db.orm
        .select()
        .from(events)
        .where(
          and(
            visibleTo(ctx),
            notified,
            query.subject_type ? eq(events.objectType, query.subject_type) : undefined,
            query.subject_id ? eq(events.objectId, query.subject_id) : undefined,
            query.kind ? eq(events.kind, query.kind) : undefined,
            query.since ? gte(events.createdAt, new Date(query.since)) : undefined,
            query.until ? lte(events.createdAt, new Date(query.until)) : undefined,
            pastCursor(events, after, 'newest_first'),
          ),
        )
        .orderBy(desc(events.createdAt), desc(events.id))
        .limit(query.limit + 1);
      const { data, nextCursor } = page(rows, query.limit);
      return { object: 'list' as const, data: data.map(toTimelineRecord), next_cursor: nextCursor };
    },
  }),
  defineOperation({
    tool: 'timeline_events_get',
    method: 'GET',
    path: '/api/v1/timeline-events/{id}',
    summary: 'Read one timeline event.',
    scope: 'project',
    params: idParam('id', 'Id of the timeline event.'),
    response: timelineEvent,
    handler: async ({ params }, ctx) => {
      const id = params.id ?? '';
      const [row] = await ctx.services.db.orm
        .select()
        .from(events)
        .where(and(visibleTo(ctx), eq(events.id, id)))
        .limit(1);
      if (!row) throw notFound('timeline event', id);
      return toTimelineRecord(row);
    },
  }),
];

/** A pull request of the caller's project. */
const pullRequestSubject: EventSubject = {
  objectType: 'pull_request',
  async exists(ctx, id) {
    if (!ctx.projectId) return false;
    const [row] = await ctx.services.db.orm
      .select({ id: pullRequests.id })
      .from(pullRequests)
      .where(
        and(
          eq(pullRequests.id, id),
          eq(pullRequests.workspaceId, ctx.workspaceId),
          eq(pullRequests.projectId, ctx.projectId),
        ),
      )
      .limit(1);
    return row !== undefined;
  },
};

export const operations: Operation[] = [
  ...timelineOperations,
  ...eventOperations('pull-requests', 'pull_requests', 'id', pullRequestSubject),
];
