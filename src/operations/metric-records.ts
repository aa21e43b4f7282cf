/**
 * Metric records: stored values, one per (project, owner, key), the newest write winning. svc's
 * own daily figures (owner `svc`) are recomputed from the review history as they are read;
 * callers write theirs with `metric_records_write` (a documented extension).
 */
import { and, desc, eq, like, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import { METRIC_NAMES, SVC_OWNER } from '../metrics/catalogue';
import { type DaySpan, daysOf, lastDays } from '../metrics/compute';
import { refreshSvcRecords } from '../metrics/records';
import { newId } from '../storage/ids';
import { metricRecords } from '../storage/schema';
import { recordChange } from './change-events';
import { defineOperation, type OperationContext } from './registry';
import { listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page, pastCursor } from './schemas/cursor';
import { metricKey, ownerName } from './schemas/metrics';

type MetricRow = typeof metricRecords.$inferSelect;

/** A caller's value is any JSON up to this size; a metric is a figure, not a document store. */
const MAX_VALUE_BYTES = 16_384;
/** The longest span a list may recompute svc's figures for. */
const MAX_SPAN_DAYS = 366;

export const metricRecord = z.object({
  object: z.literal('metric_record'),
  id: z.string(),
  owner: z.string().describe(`\`${SVC_OWNER}\`: svc's own figure, recomputed from the review history.`),
  key: z.string(),
  value: z.unknown(),
  written_by: z.string().nullable().describe('The API key that wrote it; null for svc.'),
  created_at: timestamp,
  updated_at: timestamp.describe('When the value last changed.'),
});

function toMetricRecord(row: MetricRow) {
  return {
    object: 'metric_record' as const,
    id: row.id,
    owner: row.owner,
    key: row.key,
    value: row.value,
    written_by: row.writtenBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const day = z.iso.date().describe('UTC day, `YYYY-MM-DD`.');
const DAILY_SUFFIX = /\/(\d{4}-\d{2}-\d{2})$/;

const listQueryWithFilters = listQuery.extend({
  owner: ownerName.optional(),
  key_prefix: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Only keys starting with this, e.g. `findings/`.'),
  since: day
    .optional()
    .describe(
      'Only daily records (`…/<YYYY-MM-DD>`) from this day on. svc recomputes its figures for since…until (default: the last 30 days).',
    ),
  until: day.optional().describe('Only daily records up to this day (default today).'),
});

const projectRef = (ctx: OperationContext) => ({
  workspaceId: ctx.workspaceId,
  projectId: ctx.projectId ?? '',
});

function spanOf(query: { since?: string | undefined; until?: string | undefined }): DaySpan {
  const until = query.until ?? lastDays(1).to;
  const span = query.since ? { from: query.since, to: until } : lastDays(30, until);
  if (span.from > span.to) {
    throw new ApiError('validation_failed', `since ${span.from} is after until ${span.to}`);
  }
  if (daysOf(span).length > MAX_SPAN_DAYS) {
    throw new ApiError(
      'validation_failed',
      `since…until spans more than ${MAX_SPAN_DAYS} days; ask for less`,
    );
  }
  return span;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function dailyWithin(span: DaySpan): SQL {
  return sql`${metricRecords.key} ~ '/[0-9]{4}-[0-9]{2}-[0-9]{2}$' AND right(${metricRecords.key}, 10) BETWEEN ${span.from} AND ${span.to}`;
}

async function findRecord(ctx: OperationContext, id: string): Promise<MetricRow | null> {
  const [row] = await ctx.services.db.orm
    .select()
    .from(metricRecords)
    .where(
      and(
        eq(metricRecords.id, id),
        eq(metricRecords.workspaceId, ctx.workspaceId),
        eq(metricRecords.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  return row ?? null;
}

export const metricWriteBody = z.strictObject({
  owner: ownerName.refine((o) => o !== SVC_OWNER, {
    message: `owner ${SVC_OWNER} is svc's own figures; write yours under another owner`,
  }),
  key: metricKey,
  // Any JSON: the body is parsed JSON already. Null is refused: the column holds a value, and
  // a record is replaced, never blanked.
  value: z
    .unknown()
    // `abort`: without it the size check below still runs on a missing value, and throws.
    .refine((v) => v !== undefined && v !== null, {
      message: 'value is required and cannot be null',
      abort: true,
    })
    .refine((v) => JSON.stringify(v).length <= MAX_VALUE_BYTES, {
      message: `value is over ${MAX_VALUE_BYTES} bytes of JSON`,
    })
    .describe(
      'Any JSON value; a number (or an object with a numeric `value`) can be plotted by a custom panel.',
    ),
});

export const operations = [
  defineOperation({
    tool: 'metric_records_get',
    method: 'GET',
    path: '/api/v1/metric-records/{id}',
    summary: 'Read one metric record (svc figures are recomputed first).',
    scope: 'project',
    params: z.strictObject({ id: z.string().min(1).max(200).describe('Metric record id.') }),
    response: metricRecord,
    handler: async ({ params }, ctx) => {
      const row = await findRecord(ctx, params.id);
      if (!row) throw notFound('metric_record', params.id);
      const daily = row.owner === SVC_OWNER ? DAILY_SUFFIX.exec(row.key)?.[1] : undefined;
      if (!daily) return toMetricRecord(row);
      await refreshSvcRecords(ctx.services.db, projectRef(ctx), { from: daily, to: daily });
      return toMetricRecord((await findRecord(ctx, params.id)) ?? row);
    },
  }),
  defineOperation({
    tool: 'metric_records_list',
    method: 'GET',
    path: '/api/v1/metric-records',
    summary: "List the project's metric records, newest first.",
    description: `svc writes, per UTC day with activity, ${METRIC_NAMES.map((m) => `\`${m}/<day>\``).join(', ')} under owner \`${SVC_OWNER}\`, recomputed for the listed days as they are read.`,
    scope: 'project',
    query: listQueryWithFilters,
    response: listOf(metricRecord),
    handler: async ({ query }, ctx) => {
      const span = spanOf(query);
      const daysAsked = query.since !== undefined || query.until !== undefined;
      if (query.owner === undefined || query.owner === SVC_OWNER) {
        await refreshSvcRecords(ctx.services.db, projectRef(ctx), span);
      }
      const rows = await ctx.services.db.orm
        .select()
        .from(metricRecords)
        .where(
          and(
            eq(metricRecords.workspaceId, ctx.workspaceId),
            eq(metricRecords.projectId, ctx.projectId ?? ''),
            query.owner !== undefined ? eq(metricRecords.owner, query.owner) : undefined,
            query.key_prefix !== undefined
              ? like(metricRecords.key, `${escapeLike(query.key_prefix)}%`)
              : undefined,
            daysAsked ? dailyWithin(span) : undefined,
            pastCursor(metricRecords, decodeCursor(query.cursor), 'newest_first'),
          ),
        )
        .orderBy(desc(metricRecords.createdAt), desc(metricRecords.id))
        .limit(query.limit + 1);
      const { data, nextCursor } = page(rows, query.limit);
      return { object: 'list' as const, data: data.map(toMetricRecord), next_cursor: nextCursor };
    },
  }),
  defineOperation({
    tool: 'metric_records_write',
    method: 'POST',
    path: '/api/v1/metric-records',
    summary: 'Write a metric record: one per (owner, key) in the project; the newest write wins.',
    description:
      'Documented extension (the spec lists get and list). Answers 201 when the record is new, 200 when its value was replaced; either appends a `written` event with the value before and after.',
    scope: 'project',
    body: metricWriteBody,
    response: metricRecord,
    status: 201,
    alternateStatus: 200,
    handler: async ({ body }, ctx) => {
      const { projectId, workspaceId } = projectRef(ctx);
      const now = new Date();
      const result = await ctx.services.db.orm.transaction(async (tx) => {
        const [inserted] = await tx
          .insert(metricRecords)
          .values({
            id: newId('metricRecord'),
            workspaceId,
            projectId,
            owner: body.owner,
            key: body.key,
            value: body.value,
            writtenBy: ctx.principal.keyId,
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoNothing()
          .returning();
        // Taken: lock the stored row, so two writers replace it one after the other.
        const [current] = inserted
          ? [null]
          : await tx
              .select()
              .from(metricRecords)
              .where(
                and(
                  eq(metricRecords.projectId, projectId),
                  eq(metricRecords.owner, body.owner),
                  eq(metricRecords.key, body.key),
                ),
              )
              .for('update');
        const row =
          inserted ??
          (
            await tx
              .update(metricRecords)
              .set({ value: body.value, writtenBy: ctx.principal.keyId, updatedAt: now })
              .where(eq(metricRecords.id, current?.id ?? ''))
              .returning()
          )[0];
        if (!row) throw new Error('metric record write returned no row');
        await recordChange(tx, ctx, {
          objectType: 'metric_record',
          objectId: row.id,
          projectId,
          kind: 'written',
          before: current ? { value: current.value } : null,
          after: { value: row.value },
        });
        return { row, created: inserted !== undefined };
      });
      if (!result.created) ctx.setStatus(200);
      return toMetricRecord(result.row);
    },
  }),
];
