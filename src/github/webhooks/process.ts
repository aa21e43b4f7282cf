/**
 * The `webhook` task kind: processes one stored delivery. Loads it, finds the handler for
 * `event.action` (else `event`), resolves the installation and project the handler needs, calls
 * it, and records the outcome on the delivery row:
 *
 * - `processed`: the handler applied it; the run completes.
 * - `ignored` with the reason (no handler, unknown installation, repository not a project, …):
 *   the run completes with a `webhook_ignored` gap, so the shortfall is visible on the run too.
 * - `failed` with the error: the run fails by the handler's RunFailure code (else `unknown`).
 */
import { and, eq, sql } from 'drizzle-orm';
import { RunFailure } from '../../core/failures';
import type { RunContext, TaskHandler } from '../../engine/types';
import type { Database } from '../../storage/database';
import { installations, projects, webhookDeliveries } from '../../storage/schema';
import { registerInstallationHandlers } from './installations';
import { isObject, str } from './payload';
import {
  type DeliveryRow,
  findWebhookHandler,
  handlesEvent,
  type InstallationRow,
  type ProjectRow,
  type WebhookDeps,
  type WebhookOutcome,
  type WebhookRegistration,
} from './registry';

export const WEBHOOK_IGNORED_GAP = 'webhook_ignored';

export function webhookTaskHandler(deps: WebhookDeps): TaskHandler {
  registerInstallationHandlers();
  return async (run) => {
    const deliveryId = str(run.run.input.delivery_id) ?? str(run.task.input.delivery_id);
    if (!deliveryId) {
      run.gap({ code: WEBHOOK_IGNORED_GAP, message: 'the webhook task names no delivery_id' });
      return { status: 'ignored', reason: 'the webhook task names no delivery_id' };
    }
    const [delivery] = await run.db.orm
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId))
      .limit(1);
    if (!delivery) {
      const reason = `delivery ${deliveryId} does not exist`;
      run.gap({ code: WEBHOOK_IGNORED_GAP, message: reason });
      return { delivery_id: deliveryId, status: 'ignored', reason };
    }
    const label = delivery.action ? `${delivery.event}.${delivery.action}` : delivery.event;
    await run.progress({ phase: 'dispatching', statusText: `GitHub ${label}`, currentStep: delivery.id });

    let outcome: WebhookOutcome;
    try {
      outcome = await dispatch(delivery, run, deps);
    } catch (error) {
      const code = error instanceof RunFailure ? error.code : 'unknown';
      const message = error instanceof Error ? error.message : String(error);
      await record(run.db, delivery.id, 'failed', `${code}: ${message}`);
      await run.message('note', `delivery ${delivery.id} (${label}) failed: ${code}: ${message}`);
      throw error;
    }

    const base = { delivery_id: delivery.id, event: delivery.event, action: delivery.action };
    if (outcome.status === 'ignored') {
      await record(run.db, delivery.id, 'ignored', outcome.reason);
      run.gap({ code: WEBHOOK_IGNORED_GAP, message: `${label}: ${outcome.reason}` });
      await run.message('note', `delivery ${delivery.id} (${label}) ignored: ${outcome.reason}`);
      return { ...base, status: 'ignored', reason: outcome.reason };
    }
    await record(run.db, delivery.id, 'processed', null);
    await run.message(
      'note',
      `delivery ${delivery.id} (${label}) processed${outcome.summary ? `: ${outcome.summary}` : ''}`,
    );
    return {
      ...base,
      status: 'processed',
      ...(outcome.summary ? { summary: outcome.summary } : {}),
      ...(outcome.result ?? {}),
    };
  };
}

async function dispatch(delivery: DeliveryRow, run: RunContext, deps: WebhookDeps): Promise<WebhookOutcome> {
  const { event, action } = delivery;
  const registration = findWebhookHandler(event, action);
  if (!registration) {
    const label = action && handlesEvent(event) ? `${event}.${action}` : event;
    return { status: 'ignored', reason: `no handler for event ${label}` };
  }
  const payload = isObject(delivery.payload) ? delivery.payload : {};
  const resolved = await resolve(run.db, delivery, registration);
  if ('ignored' in resolved) return { status: 'ignored', reason: resolved.ignored };
  return registration.handler({
    delivery,
    payload,
    event,
    action,
    installation: resolved.installation,
    project: resolved.project,
    db: run.db,
    run,
    deps,
  });
}

type Resolved = { installation: InstallationRow | null; project: ProjectRow | null } | { ignored: string };

/** The installation and project a handler needs, or why the delivery cannot be applied. */
async function resolve(
  db: Database,
  delivery: DeliveryRow,
  registration: WebhookRegistration,
): Promise<Resolved> {
  if (registration.needs === 'nothing') return { installation: null, project: null };
  const id = delivery.installationId;
  if (id === null) return { ignored: `the ${delivery.event} delivery names no installation` };
  const [installation] = await db.orm.select().from(installations).where(eq(installations.id, id)).limit(1);
  if (!installation || installation.deletedAt) return { ignored: `unknown installation ${id}` };
  if (installation.suspendedAt) return { ignored: `installation ${id} is suspended` };
  if (registration.needs === 'installation') return { installation, project: null };

  const repo = delivery.repository;
  if (!repo) return { ignored: `the ${delivery.event} delivery names no repository` };
  // GitHub's owner/repo names are case-insensitive.
  const [project] = await db.orm
    .select()
    .from(projects)
    .where(
      and(
        eq(projects.installationId, id),
        eq(projects.workspaceId, installation.workspaceId),
        sql`lower(${projects.repoFullName}) = lower(${repo})`,
      ),
    )
    .orderBy(projects.createdAt)
    .limit(1);
  if (!project) return { ignored: `repository ${repo} is not a project` };
  return { installation, project };
}

async function record(
  db: Database,
  deliveryId: string,
  status: 'processed' | 'ignored' | 'failed',
  reason: string | null,
): Promise<void> {
  await db.orm
    .update(webhookDeliveries)
    .set({ status, reason: reason?.slice(0, 2000) ?? null, processedAt: sql`now()` })
    .where(eq(webhookDeliveries.id, deliveryId));
}
