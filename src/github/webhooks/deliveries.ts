/**
 * Storing what the webhook receiver accepted or refused. The acknowledgement does exactly this
 * and nothing more: one insert of the delivery (deduplicated by `X-GitHub-Delivery`) and one
 * `webhook` task whose run processes it later, in a worker.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Engine } from '../../engine/engine';
import type { Database } from '../../storage/database';
import { webhookDeliveries, webhookRejections } from '../../storage/schema';
import { deliveryFacts, type Json } from './payload';

/** Why a request was refused: the `reason` of its `webhook_rejections` row and metric label. */
export type RejectionReason =
  | 'not_configured'
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'delivery_id_missing'
  | 'event_missing'
  | 'body_unreadable';

export async function recordRejection(
  db: Database,
  rejection: { reason: RejectionReason; deliveryId?: string | undefined; event?: string | undefined },
): Promise<void> {
  await db.orm.insert(webhookRejections).values({
    reason: rejection.reason,
    // Headers of a refused request are untrusted: keep them short.
    deliveryId: rejection.deliveryId?.slice(0, 200) ?? null,
    event: rejection.event?.slice(0, 200) ?? null,
  });
}

/** Rejections so far, by reason (for `svc_webhook_rejections_total`). */
export async function rejectionCounts(db: Database): Promise<{ reason: string; n: number }[]> {
  const rows = await db.rows<{ reason: string; n: number }>(
    sql`SELECT reason, count(*)::int AS n FROM webhook_rejections GROUP BY reason`,
  );
  return rows.map((r) => ({ reason: r.reason, n: Number(r.n) }));
}

export interface Accepted {
  deliveryId: string;
  /** The `webhook` task processing it; null only for a duplicate whose first receipt is still in flight. */
  taskId: string | null;
  duplicate: boolean;
}

/**
 * A delivery stored this long ago that still has no task (the process died between the insert
 * and the task) gets its task from GitHub's redelivery instead of being answered "duplicate"
 * forever.
 */
const ORPHAN_AFTER_MS = 60_000;

export async function acceptDelivery(
  db: Database,
  engine: Engine,
  delivery: { id: string; event: string; workspaceId: string; payload: Json },
): Promise<Accepted> {
  const facts = deliveryFacts(delivery.payload);
  const inserted = await db.orm
    .insert(webhookDeliveries)
    .values({
      id: delivery.id,
      workspaceId: delivery.workspaceId,
      event: delivery.event,
      action: facts.action,
      installationId: facts.installationId,
      repository: facts.repository,
      payload: delivery.payload,
      status: 'received',
    })
    .onConflictDoNothing({ target: webhookDeliveries.id })
    .returning({ id: webhookDeliveries.id });

  if (inserted.length === 0) {
    const [existing] = await db.orm
      .select({ taskId: webhookDeliveries.taskId, receivedAt: webhookDeliveries.receivedAt })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, delivery.id))
      .limit(1);
    if (
      existing &&
      existing.taskId === null &&
      existing.receivedAt.getTime() < Date.now() - ORPHAN_AFTER_MS
    ) {
      const taskId = await attachTask(db, engine, delivery, true);
      return { deliveryId: delivery.id, taskId, duplicate: true };
    }
    return { deliveryId: delivery.id, taskId: existing?.taskId ?? null, duplicate: true };
  }
  const taskId = await attachTask(db, engine, delivery, false);
  return { deliveryId: delivery.id, taskId, duplicate: false };
}

/**
 * Creates the delivery's `webhook` task and links it. For an orphan, only one concurrent
 * redelivery wins the link; a loser cancels the task it made, so at most one run processes.
 */
async function attachTask(
  db: Database,
  engine: Engine,
  delivery: { id: string; event: string; workspaceId: string; payload: Json },
  orphan: boolean,
): Promise<string | null> {
  const action = deliveryFacts(delivery.payload).action;
  const { task } = await engine.createTask({
    workspaceId: delivery.workspaceId,
    projectId: null,
    kind: 'webhook',
    title: `GitHub ${delivery.event}${action ? `.${action}` : ''} (${delivery.id})`,
    input: { delivery_id: delivery.id },
  });
  const linked = await db.orm
    .update(webhookDeliveries)
    .set({ taskId: task.id })
    .where(and(eq(webhookDeliveries.id, delivery.id), isNull(webhookDeliveries.taskId)))
    .returning({ id: webhookDeliveries.id });
  if (linked.length === 0 && orphan) {
    await engine.cancel(task.id, 'another redelivery already started processing this delivery');
    const [row] = await db.orm
      .select({ taskId: webhookDeliveries.taskId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, delivery.id));
    return row?.taskId ?? null;
  }
  return task.id;
}
