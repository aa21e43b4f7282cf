/**
 * The append-only event log of objects (learnings, reviewers, findings, plans, scorecards): one
 * row per event, written in the transaction of the change it records. Lives in storage so every
 * layer that changes an object (operations, automation, scorecards) logs it the same way.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Orm } from './database';
import { newId } from './ids';
import { events } from './schema';

export type EventRow = typeof events.$inferSelect;
/** The database or an open transaction. */
export type Tx = Parameters<Parameters<Orm['transaction']>[0]>[0] | Orm;

/**
 * How an event is stored: the `events` row's `data` holds `{payload, occurred_at}`, since the
 * time it happened (the caller's, possibly earlier) and the time it was appended differ.
 */
interface StoredEvent {
  payload: Record<string, unknown>;
  occurred_at: string;
}

/**
 * `INSERT INTO events … SELECT … FROM <source>`: svc's own event about the row of `source` (a
 * CTE of the same statement with `id`, `workspace_id`, `project_id`, yielding at most one row,
 * since the event id is one), stored as `appendObjectEvent` stores one and stamped with the
 * statement's time. For writes that must stay one statement (the enqueue, the claim).
 */
export const insertEventFrom = (
  source: string,
  eventId: string,
  objectType: string,
  kind: string,
  payload: SQL,
) => sql`
  INSERT INTO events (id, workspace_id, project_id, object_type, object_id, kind, data, actor)
  SELECT ${eventId}, workspace_id, project_id, ${objectType}, id, ${kind},
    jsonb_build_object('payload', ${payload},
      'occurred_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
    NULL
  FROM ${sql.raw(source)}`;

export function toEventRecord(row: EventRow) {
  const data = row.data as Partial<StoredEvent>;
  return {
    object: 'event' as const,
    id: row.id,
    subject_type: row.objectType,
    subject_id: row.objectId,
    kind: row.kind,
    payload: data.payload ?? {},
    occurred_at: data.occurred_at ?? row.createdAt.toISOString(),
    actor: row.actor,
    created_at: row.createdAt.toISOString(),
  };
}

/** Appends one event to an object's log (append-only: events are never changed). */
export async function appendObjectEvent(
  tx: Tx,
  event: {
    workspaceId: string;
    projectId: string | null;
    objectType: string;
    objectId: string;
    kind: string;
    payload: Record<string, unknown>;
    occurredAt?: Date | undefined;
    actor: string | null;
  },
): Promise<EventRow> {
  const now = new Date();
  const data: StoredEvent = {
    payload: event.payload,
    occurred_at: (event.occurredAt ?? now).toISOString(),
  };
  const [row] = await tx
    .insert(events)
    .values({
      id: newId('event'),
      workspaceId: event.workspaceId,
      projectId: event.projectId,
      objectType: event.objectType,
      objectId: event.objectId,
      kind: event.kind,
      data: data as unknown as Record<string, unknown>,
      actor: event.actor,
      createdAt: now,
    })
    .returning();
  if (!row) throw new Error('event insert returned no row');
  return row;
}
