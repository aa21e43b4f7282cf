/**
 * Preferences: one caller's dashboard state in a project (the API key is the caller). Holds the
 * notification markers the console's bell reads (what happened since the caller last looked),
 * what the caller is notified of (`notify`, src/core/notifications.ts) and the board they last
 * opened. `me` names the caller's own record, created on first read.
 */
import { and, count, eq, gt, isNull, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { notFound } from '../core/errors';
import { NOTIFICATION_DOCS, NOTIFICATION_KINDS, type NotificationKind } from '../core/notifications';
import { newId } from '../storage/ids';
import { dashboards, events, preferences } from '../storage/schema';
import { defineOperation, type OperationContext } from './registry';
import { timestamp } from './schemas/common';

type PreferenceRow = typeof preferences.$inferSelect;

/** Unread counts stop here: the console shows "1000+", and counting further costs a scan. */
const UNREAD_CAP = 1000;

const payload = sql`(${events.data} -> 'payload')`;

/** The timeline events each notification kind picks (their payloads: src/core/notifications.ts). */
const NOTIFIED_EVENTS: Record<NotificationKind, SQL> = {
  new_p0: sql`(${events.objectType} = 'pull_request' AND ${events.kind} = 'review_status_changed' AND COALESCE((${payload} -> 'counts' ->> 'opened_p0')::int, 0) > 0)`,
  run_failed: sql`(${events.objectType} = 'run' AND ${events.kind} = 'failed')`,
  plan_awaiting_approval: sql`(${events.objectType} = 'plan' AND ${events.kind} = 'reviewed' AND ${payload} ->> 'requires_approval' = 'true')`,
  quick_action_result: sql`(${events.objectType} = 'run' AND ${events.kind} IN ('completed', 'failed', 'canceled') AND ${payload} ->> 'kind' = 'quick_action')`,
};

/** The events a caller who chose `kinds` is notified of (none when they chose none). */
export function notifiedBy(kinds: readonly NotificationKind[]): SQL {
  return kinds.length === 0 ? sql`false` : (or(...kinds.map((k) => NOTIFIED_EVENTS[k])) as SQL);
}

const notifyKinds = z
  .array(z.enum(NOTIFICATION_KINDS))
  .max(NOTIFICATION_KINDS.length)
  .describe(
    `What the caller is notified of, any of: ${NOTIFICATION_KINDS.map((k) => `\`${k}\` (${NOTIFICATION_DOCS[k]})`).join('; ')}.`,
  );

/** The kinds a stored preference picks: every kind until the caller chose. */
const chosenKinds = (row: Pick<PreferenceRow, 'notify'> | undefined): NotificationKind[] =>
  (row?.notify ?? [...NOTIFICATION_KINDS]).filter((k): k is NotificationKind =>
    (NOTIFICATION_KINDS as readonly string[]).includes(k),
  );

export const preferenceRecord = z.object({
  object: z.literal('preference'),
  id: z.string(),
  key_id: z.string().describe('The API key whose state it is.'),
  notifications_read_at: timestamp.nullable().describe('Timeline events up to here have been seen.'),
  notifications_cleared_at: timestamp
    .nullable()
    .describe('Timeline events up to here are no longer listed as notifications.'),
  dashboard_id: z.string().nullable().describe('The board last opened.'),
  notify: notifyKinds,
  unread_notifications: z
    .int()
    .describe(
      `Timeline events of the project after \`notifications_read_at\` that \`notify\` picks (at most ${UNREAD_CAP}).`,
    ),
  created_at: timestamp,
  updated_at: timestamp,
});

const preferenceId = z
  .string()
  .min(1)
  .max(200)
  .describe("Preferences id, or `me` for the caller's own (created on first read).");

const marker = z
  .union([timestamp, z.literal('now')])
  .nullable()
  .optional()
  .describe('A timestamp, `now`, or null to unset.');

export const preferenceUpdateBody = z
  .strictObject({
    notifications_read_at: marker,
    notifications_cleared_at: marker,
    dashboard_id: z.string().min(1).max(200).nullable().optional(),
    notify: notifyKinds.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

async function unreadSince(ctx: OperationContext, pref: PreferenceRow): Promise<number> {
  const since = pref.notificationsReadAt;
  const visible = and(
    eq(events.workspaceId, ctx.workspaceId),
    or(eq(events.projectId, ctx.projectId ?? ''), isNull(events.projectId)),
    since ? gt(events.createdAt, since) : undefined,
    notifiedBy(chosenKinds(pref)),
  );
  const capped = ctx.services.db.orm
    .select({ one: sql`1` })
    .from(events)
    .where(visible)
    .limit(UNREAD_CAP)
    .as('capped');
  const [row] = await ctx.services.db.orm.select({ n: count() }).from(capped);
  return row?.n ?? 0;
}

async function toPreferenceRecord(ctx: OperationContext, row: PreferenceRow) {
  return {
    object: 'preference' as const,
    id: row.id,
    key_id: row.keyId,
    notifications_read_at: row.notificationsReadAt?.toISOString() ?? null,
    notifications_cleared_at: row.notificationsClearedAt?.toISOString() ?? null,
    dashboard_id: row.dashboardId,
    notify: chosenKinds(row),
    unread_notifications: await unreadSince(ctx, row),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** What the caller is notified of in this project (every kind while they have not chosen). */
export async function callerNotifyKinds(ctx: OperationContext): Promise<NotificationKind[]> {
  const [row] = await ctx.services.db.orm
    .select({ notify: preferences.notify })
    .from(preferences)
    .where(
      and(
        eq(preferences.workspaceId, ctx.workspaceId),
        eq(preferences.projectId, ctx.projectId ?? ''),
        eq(preferences.keyId, ctx.principal.keyId),
      ),
    )
    .limit(1);
  return chosenKinds(row);
}

/** The caller's record for `me` (created on first use), or their record by id; nobody else's. */
async function callerPreferences(ctx: OperationContext, id: string): Promise<PreferenceRow> {
  const owner = and(
    eq(preferences.workspaceId, ctx.workspaceId),
    eq(preferences.projectId, ctx.projectId ?? ''),
    eq(preferences.keyId, ctx.principal.keyId),
  );
  const db = ctx.services.db.orm;
  const find = async () =>
    (
      await db
        .select()
        .from(preferences)
        .where(and(owner, id === 'me' ? undefined : eq(preferences.id, id)))
        .limit(1)
    )[0];
  const found = await find();
  if (found) return found;
  if (id !== 'me') throw notFound('preference', id);
  await db
    .insert(preferences)
    .values({
      id: newId('preference'),
      workspaceId: ctx.workspaceId,
      projectId: ctx.projectId ?? '',
      keyId: ctx.principal.keyId,
    })
    .onConflictDoNothing();
  const created = await find();
  if (!created) throw new Error('preferences insert left no row');
  return created;
}

const at = (value: string | null | undefined, now: Date) =>
  value === undefined ? undefined : value === null ? null : value === 'now' ? now : new Date(value);

export const operations = [
  defineOperation({
    tool: 'preferences_get',
    method: 'GET',
    path: '/api/v1/preferences/{id}',
    summary: "Read the caller's dashboard state in the project (notification read and cleared markers).",
    scope: 'project',
    params: z.strictObject({ id: preferenceId }),
    response: preferenceRecord,
    handler: async ({ params }, ctx) => toPreferenceRecord(ctx, await callerPreferences(ctx, params.id)),
  }),
  defineOperation({
    tool: 'preferences_update',
    method: 'PATCH',
    path: '/api/v1/preferences/{id}',
    summary: "Set the caller's notification markers, what they are notified of, or last-opened board.",
    description:
      'Documented extension (the spec has get only). `now` stamps the server time. Preferences are per caller, not shared, so they append no timeline event.',
    scope: 'project',
    params: z.strictObject({ id: preferenceId }),
    body: preferenceUpdateBody,
    response: preferenceRecord,
    handler: async ({ params, body }, ctx) => {
      const row = await callerPreferences(ctx, params.id);
      const db = ctx.services.db.orm;
      if (body.dashboard_id) {
        const [board] = await db
          .select({ id: dashboards.id })
          .from(dashboards)
          .where(and(eq(dashboards.id, body.dashboard_id), eq(dashboards.projectId, ctx.projectId ?? '')))
          .limit(1);
        if (!board) throw notFound('dashboard', body.dashboard_id);
      }
      const now = new Date();
      const [updated] = await db
        .update(preferences)
        .set({
          notificationsReadAt: at(body.notifications_read_at, now),
          notificationsClearedAt: at(body.notifications_cleared_at, now),
          dashboardId: body.dashboard_id,
          notify: body.notify ? [...new Set(body.notify)] : undefined,
          updatedAt: now,
        })
        .where(eq(preferences.id, row.id))
        .returning();
      return toPreferenceRecord(ctx, updated ?? row);
    },
  }),
];
