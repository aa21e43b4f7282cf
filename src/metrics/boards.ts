/** Storing dashboards: the default board each project has, created once with its event. */
import { and, eq } from 'drizzle-orm';
import { newId } from '../storage/ids';
import { appendObjectEvent, type Tx } from '../storage/object-events';
import { dashboards } from '../storage/schema';
import { DEFAULT_DASHBOARD, defaultPanels } from './defaults';

export type DashboardRow = typeof dashboards.$inferSelect;

/**
 * Creates the project's default board unless it has one (the partial unique index on
 * `is_default` keeps two concurrent callers from both creating it). svc is the actor.
 */
export async function ensureDefaultDashboard(
  tx: Tx,
  workspaceId: string,
  projectId: string,
): Promise<DashboardRow | null> {
  const [existing] = await tx
    .select()
    .from(dashboards)
    .where(and(eq(dashboards.projectId, projectId), eq(dashboards.isDefault, true)))
    .limit(1);
  if (existing) return existing;
  const now = new Date();
  const [inserted] = await tx
    .insert(dashboards)
    .values({
      id: newId('dashboard'),
      workspaceId,
      projectId,
      ...DEFAULT_DASHBOARD,
      isDefault: true,
      panels: defaultPanels() as unknown as Record<string, unknown>[],
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (!inserted) return null;
  await appendObjectEvent(tx, {
    workspaceId,
    projectId,
    objectType: 'dashboard',
    objectId: inserted.id,
    kind: 'created',
    payload: { before: null, after: { name: inserted.name, panels: inserted.panels.length } },
    occurredAt: now,
    actor: null,
  });
  return inserted;
}
