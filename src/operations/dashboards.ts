/**
 * Dashboards: boards of panels over the project's review history. A board stores its panels;
 * reading one computes each panel's series from the history (src/metrics), so the numbers are
 * never older than the request. Every project has a default board.
 */
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { notFound } from '../core/errors';
import { type DashboardRow, ensureDefaultDashboard } from '../metrics/boards';
import { GROUPINGS, METRIC_NAMES, METRICS } from '../metrics/catalogue';
import { writeSvcRecords } from '../metrics/records';
import { computePanels, type Panel } from '../metrics/series';
import { newId } from '../storage/ids';
import { dashboards } from '../storage/schema';
import { recordChange } from './change-events';
import { defineOperation, type OperationContext } from './registry';
import { listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page, pastCursor } from './schemas/cursor';
import { metricKey, ownerName } from './schemas/metrics';

const metricDescriptions = Object.entries(METRICS)
  .map(([name, m]) => `\`${name}\` (${m.unit}; by ${m.groupings.join(', ')}): ${m.measures}`)
  .join('. ');

export const panelInput = z
  .strictObject({
    title: z.string().trim().min(1).max(200),
    metric: z.enum([...METRIC_NAMES, 'custom']).describe(`What it plots. ${metricDescriptions}.`),
    group_by: z.enum(GROUPINGS).default('none').describe('One series per group (`none`: one series).'),
    range_days: z.int().min(1).max(365).default(30).describe('Days shown, ending today (UTC).'),
    chart: z.enum(['line', 'bar', 'number', 'table']).default('line'),
    owner: ownerName.optional().describe('Custom panels: the owner of the metric records.'),
    key: metricKey.optional().describe('Custom panels: the records `<key>/<YYYY-MM-DD>` are plotted.'),
  })
  .superRefine((panel, issues) => {
    const allowed = METRICS[panel.metric].groupings;
    if (!allowed.includes(panel.group_by)) {
      issues.addIssue({
        code: 'custom',
        path: ['group_by'],
        message: `${panel.metric} can be grouped by ${allowed.join(', ')}, not ${panel.group_by}`,
      });
    }
    const custom = panel.metric === 'custom';
    if (custom && (panel.owner === undefined || panel.key === undefined)) {
      issues.addIssue({
        code: 'custom',
        path: ['metric'],
        message: 'a custom panel names the owner and key of the metric records it plots',
      });
    }
    if (!custom && (panel.owner !== undefined || panel.key !== undefined)) {
      issues.addIssue({
        code: 'custom',
        path: ['owner'],
        message: `owner and key are for custom panels; ${panel.metric} is computed from the review history`,
      });
    }
  });

const panels = z.array(panelInput).max(50);

export const dashboardCreateBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  panels: panels.default([]),
});

export const dashboardUpdateBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).nullable().optional(),
    panels: panels.optional().describe('Replaces every panel.'),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

const storedPanel = z.object({
  title: z.string(),
  metric: z.string(),
  group_by: z.string(),
  range_days: z.int(),
  chart: z.string(),
  owner: z.string().optional(),
  key: z.string().optional(),
});

const computedPanel = storedPanel.extend({
  unit: z.enum(['count', 'ratio', 'ms', 'usd', 'value']),
  summary: z
    .number()
    .nullable()
    .describe('Over the whole range: a total for counts and spend, the rate or median otherwise.'),
  series: z.array(
    z.object({
      name: z.string(),
      points: z.array(
        z.object({
          day: z.string().describe('UTC day, `YYYY-MM-DD`.'),
          value: z.number().nullable().describe('null: nothing to measure that day.'),
        }),
      ),
    }),
  ),
});

const dashboardFields = {
  object: z.literal('dashboard'),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  is_default: z.boolean().describe("The project's default board (one per project)."),
  created_at: timestamp,
  updated_at: timestamp,
};

export const dashboardRecord = z.object({ ...dashboardFields, panels: z.array(storedPanel) });
export const computedDashboardRecord = z.object({
  ...dashboardFields,
  panels: z.array(computedPanel),
  computed_at: timestamp,
});

function toDashboardRecord(row: DashboardRow) {
  return {
    object: 'dashboard' as const,
    id: row.id,
    name: row.name,
    description: row.description,
    is_default: row.isDefault,
    panels: row.panels as unknown as Panel[],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const dashboardId = z.strictObject({ id: z.string().min(1).max(200).describe('Dashboard id.') });

const projectOf = (ctx: OperationContext) => ctx.projectId ?? '';

async function findDashboard(ctx: OperationContext, id: string): Promise<DashboardRow> {
  const [row] = await ctx.services.db.orm
    .select()
    .from(dashboards)
    .where(
      and(
        eq(dashboards.id, id),
        eq(dashboards.workspaceId, ctx.workspaceId),
        eq(dashboards.projectId, projectOf(ctx)),
      ),
    )
    .limit(1);
  if (!row) throw notFound('dashboard', id);
  return row;
}

export const operations = [
  defineOperation({
    tool: 'dashboards_get',
    method: 'GET',
    path: '/api/v1/dashboards/{id}',
    summary: 'Read a dashboard with every panel computed from the review history.',
    description:
      "Each panel's series has one point per UTC day of its range. svc's daily figures are stored as metric records (owner `svc`) as they are computed.",
    scope: 'project',
    params: dashboardId,
    response: computedDashboardRecord,
    handler: async ({ params }, ctx) => {
      const row = await findDashboard(ctx, params.id);
      const db = ctx.services.db;
      const computed = await computePanels(db, projectOf(ctx), row.panels as unknown as Panel[]);
      await writeSvcRecords(db, { workspaceId: ctx.workspaceId, projectId: projectOf(ctx) }, computed.byDay);
      return { ...toDashboardRecord(row), panels: computed.panels, computed_at: new Date().toISOString() };
    },
  }),
  defineOperation({
    tool: 'dashboards_list',
    method: 'GET',
    path: '/api/v1/dashboards',
    summary: "List the project's dashboards, newest first (the default board is created on first use).",
    scope: 'project',
    query: listQuery,
    response: listOf(dashboardRecord),
    handler: async ({ query }, ctx) => {
      const db = ctx.services.db;
      await db.orm.transaction((tx) => ensureDefaultDashboard(tx, ctx.workspaceId, projectOf(ctx)));
      const rows = await db.orm
        .select()
        .from(dashboards)
        .where(
          and(
            eq(dashboards.workspaceId, ctx.workspaceId),
            eq(dashboards.projectId, projectOf(ctx)),
            pastCursor(dashboards, decodeCursor(query.cursor), 'newest_first'),
          ),
        )
        .orderBy(desc(dashboards.createdAt), desc(dashboards.id))
        .limit(query.limit + 1);
      const { data, nextCursor } = page(rows, query.limit);
      return { object: 'list' as const, data: data.map(toDashboardRecord), next_cursor: nextCursor };
    },
  }),
  defineOperation({
    tool: 'dashboards_create',
    method: 'POST',
    path: '/api/v1/dashboards',
    summary: "Create a board of panels over the project's review history.",
    description: `A panel plots one metric over its range, optionally split by a grouping. ${metricDescriptions}.`,
    scope: 'project',
    body: dashboardCreateBody,
    response: dashboardRecord,
    status: 201,
    handler: async ({ body }, ctx) => {
      const now = new Date();
      const row = await ctx.services.db.orm.transaction(async (tx) => {
        const [inserted] = await tx
          .insert(dashboards)
          .values({
            id: newId('dashboard'),
            workspaceId: ctx.workspaceId,
            projectId: projectOf(ctx),
            name: body.name,
            description: body.description ?? null,
            panels: body.panels as unknown as Record<string, unknown>[],
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        if (!inserted) throw new Error('dashboard insert returned no row');
        await recordChange(tx, ctx, {
          objectType: 'dashboard',
          objectId: inserted.id,
          projectId: inserted.projectId,
          kind: 'created',
          before: null,
          after: { name: inserted.name, description: inserted.description, panels: inserted.panels },
        });
        return inserted;
      });
      return toDashboardRecord(row);
    },
  }),
  defineOperation({
    tool: 'dashboards_update',
    method: 'PATCH',
    path: '/api/v1/dashboards/{id}',
    summary: 'Rename a dashboard, change its description, or replace its panels.',
    scope: 'project',
    params: dashboardId,
    body: dashboardUpdateBody,
    response: dashboardRecord,
    handler: async ({ params, body }, ctx) => {
      await findDashboard(ctx, params.id);
      const row = await ctx.services.db.orm.transaction(async (tx) => {
        const [current] = await tx
          .select()
          .from(dashboards)
          .where(eq(dashboards.id, params.id))
          .for('update');
        if (!current) throw notFound('dashboard', params.id);
        const change = {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.panels !== undefined
            ? { panels: body.panels as unknown as Record<string, unknown>[] }
            : {}),
        };
        const [updated] = await tx
          .update(dashboards)
          .set({ ...change, updatedAt: new Date() })
          .where(eq(dashboards.id, params.id))
          .returning();
        if (!updated) throw notFound('dashboard', params.id);
        const before = Object.fromEntries(
          Object.keys(change).map((field) => [field, current[field as keyof typeof change]]),
        );
        await recordChange(tx, ctx, {
          objectType: 'dashboard',
          objectId: updated.id,
          projectId: updated.projectId,
          kind: 'updated',
          before,
          after: change,
        });
        return updated;
      });
      return toDashboardRecord(row);
    },
  }),
];
