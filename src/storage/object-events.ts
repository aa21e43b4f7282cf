/**
 * The append-only event log of objects (learnings, reviewers, findings, plans, scorecards): one
 * row per event, written in the transaction of the change it records. Lives in storage so every
 * layer that changes an object (operations, automation, scorecards) logs it the same way.
 */
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
