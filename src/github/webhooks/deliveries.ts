/**
 * Storing what the webhook receiver accepted. The acknowledgement does exactly this
 * and nothing more: one transaction inserting the delivery (deduplicated by `X-GitHub-Delivery`)
 * and one `webhook` task whose run processes it later, in a worker.
 */
import { eq } from 'drizzle-orm';
import type { Engine } from '../../engine/engine';
import type { Database } from '../../storage/database';
import { webhookDeliveries } from '../../storage/schema';
import { type DeliveryFacts, deliveryFacts, type Json } from './payload';

export interface Accepted {
  deliveryId: string;
  /** The `webhook` task processing it (for a duplicate: the first receipt's task). */
  taskId: string | null;
  duplicate: boolean;
}

/**
 * Stores the delivery and its `webhook` task and run in one transaction: one commit (one disk
 * flush) per acknowledgement, and no delivery can be stored without the task that processes it.
 * A redelivery of a stored id changes nothing and names the first receipt's task.
 */
export async function acceptDelivery(
  db: Database,
  engine: Engine,
  delivery: { id: string; event: string; workspaceId: string; payload: Json },
): Promise<Accepted> {
  const facts = deliveryFacts(delivery.payload);
  // GitHub waits on this answer (10 s at most): the worker's statements wait for it (priority.ts).
  return db.priority.foreground(() => store(db, engine, delivery, facts));
}

function store(
  db: Database,
  engine: Engine,
  delivery: { id: string; event: string; workspaceId: string; payload: Json },
  facts: DeliveryFacts,
): Promise<Accepted> {
  return db.orm.transaction(async (tx) => {
    const inserted = await tx
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
      const [existing] = await tx
        .select({ taskId: webhookDeliveries.taskId })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.id, delivery.id))
        .limit(1);
      return { deliveryId: delivery.id, taskId: existing?.taskId ?? null, duplicate: true };
    }
    const { task } = await engine.createTaskIn(tx, {
      workspaceId: delivery.workspaceId,
      projectId: null,
      kind: 'webhook',
      title: `GitHub ${delivery.event}${facts.action ? `.${facts.action}` : ''} (${delivery.id})`,
      input: { delivery_id: delivery.id },
    });
    await tx.update(webhookDeliveries).set({ taskId: task.id }).where(eq(webhookDeliveries.id, delivery.id));
    return { deliveryId: delivery.id, taskId: task.id, duplicate: false };
  });
}
