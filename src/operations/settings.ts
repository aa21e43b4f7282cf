/** Project and workspace settings: read the effective values, change some of them. */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import {
  PROJECT_SETTINGS,
  projectSettingsPatch,
  resolveProjectSettings,
  resolveWorkspaceSettings,
  WORKSPACE_SETTINGS,
  workspaceSettingsPatch,
} from '../core/settings';
import { projects, workspaces } from '../storage/schema';
import { recordChange } from './change-events';
import { defineOperation } from './registry';

const settingsRecord = z.object({
  object: z.literal('settings'),
  scope: z.enum(['project', 'workspace']),
  owner_id: z.string(),
  values: z.record(z.string(), z.unknown()).describe('Effective values: stored ones over the defaults.'),
  defaults: z.record(z.string(), z.unknown()),
  docs: z.record(z.string(), z.string()).describe('What each setting does.'),
});

const defaultsOf = (registry: Record<string, { default: unknown; doc: string }>) => ({
  defaults: Object.fromEntries(Object.entries(registry).map(([k, v]) => [k, v.default])),
  docs: Object.fromEntries(Object.entries(registry).map(([k, v]) => [k, v.doc])),
});

/** The sent keys' stored values before (null: not set, the default applied) and after. */
function settingsChange(stored: Record<string, unknown>, sent: Record<string, unknown>) {
  const keys = Object.keys(sent);
  return {
    before: Object.fromEntries(keys.map((k) => [k, stored[k] ?? null])),
    after: Object.fromEntries(keys.map((k) => [k, sent[k] ?? null])),
  };
}

const projectParams = z.strictObject({ project_id: z.string().min(1).max(200) });

const projectRecord = (row: {
  id: string;
  settings: Record<string, unknown>;
}): z.infer<typeof settingsRecord> => ({
  object: 'settings',
  scope: 'project',
  owner_id: row.id,
  values: resolveProjectSettings(row.settings),
  ...defaultsOf(PROJECT_SETTINGS),
});

const workspaceRecord = (
  workspaceId: string,
  stored: Record<string, unknown>,
): z.infer<typeof settingsRecord> => ({
  object: 'settings',
  scope: 'workspace',
  owner_id: workspaceId,
  values: resolveWorkspaceSettings(stored),
  ...defaultsOf(WORKSPACE_SETTINGS),
});

const projectGet = defineOperation({
  tool: 'projects_settings_get',
  method: 'GET',
  path: '/api/v1/projects/{project_id}/settings',
  summary: "Read the project's settings (svc.review.*, svc.brakes.*).",
  scope: 'project',
  params: projectParams,
  response: settingsRecord,
  handler: async (_input, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(projects)
      .where(eq(projects.id, ctx.projectId ?? ''))
      .limit(1);
    if (!row) throw new ApiError('not_found', `project ${ctx.projectId} was not found`);
    return projectRecord(row);
  },
});

const projectUpdate = defineOperation({
  tool: 'projects_settings_update',
  method: 'PATCH',
  path: '/api/v1/projects/{project_id}/settings',
  summary: 'Change some project settings; keys not sent keep their values. Unknown keys are rejected.',
  scope: 'project',
  params: projectParams,
  body: projectSettingsPatch,
  response: settingsRecord,
  handler: async ({ body }, ctx) => {
    const row = await ctx.services.db.orm.transaction(async (tx) => {
      const where = and(eq(projects.id, ctx.projectId ?? ''), eq(projects.workspaceId, ctx.workspaceId));
      const [before] = await tx
        .select({ settings: projects.settings })
        .from(projects)
        .where(where)
        .for('update');
      if (!before) throw new ApiError('not_found', `project ${ctx.projectId} was not found`);
      const [updated] = await tx
        .update(projects)
        // jsonb || merges the sent keys over the stored ones, so concurrent edits of different
        // keys do not overwrite each other.
        .set({ settings: sql`${projects.settings} || ${JSON.stringify(body)}::jsonb`, updatedAt: new Date() })
        .where(where)
        .returning();
      if (!updated) throw new ApiError('not_found', `project ${ctx.projectId} was not found`);
      await recordChange(tx, ctx, {
        objectType: 'project_settings',
        objectId: updated.id,
        projectId: updated.id,
        kind: 'updated',
        ...settingsChange(before.settings, body),
      });
      return updated;
    });
    return projectRecord(row);
  },
});

const workspaceGet = defineOperation({
  tool: 'workspace_settings_get',
  method: 'GET',
  path: '/api/v1/settings',
  summary: "Read the workspace's settings (svc.checks.p0_conclusion, p1_conclusion, p2_conclusion).",
  scope: 'workspace',
  response: settingsRecord,
  handler: async (_input, ctx) => {
    const [row] = await ctx.services.db.orm
      .select()
      .from(workspaces)
      .where(eq(workspaces.id, ctx.workspaceId))
      .limit(1);
    return workspaceRecord(ctx.workspaceId, row?.settings ?? {});
  },
});

const workspaceUpdate = defineOperation({
  tool: 'workspace_settings_update',
  method: 'PATCH',
  path: '/api/v1/settings',
  summary: 'Change some workspace settings; needs a workspace key or personal token.',
  scope: 'workspace',
  body: workspaceSettingsPatch,
  response: settingsRecord,
  handler: async ({ body }, ctx) => {
    if (ctx.principal.pinnedProjectId) {
      throw new ApiError('forbidden', 'a project-pinned key cannot change workspace settings');
    }
    const row = await ctx.services.db.orm.transaction(async (tx) => {
      const where = eq(workspaces.id, ctx.workspaceId);
      const [before] = await tx
        .select({ settings: workspaces.settings })
        .from(workspaces)
        .where(where)
        .for('update');
      const [updated] = await tx
        .update(workspaces)
        .set({
          settings: sql`${workspaces.settings} || ${JSON.stringify(body)}::jsonb`,
          updatedAt: new Date(),
        })
        .where(where)
        .returning();
      await recordChange(tx, ctx, {
        objectType: 'workspace_settings',
        objectId: ctx.workspaceId,
        projectId: null,
        kind: 'updated',
        ...settingsChange(before?.settings ?? {}, body),
      });
      return updated;
    });
    return workspaceRecord(ctx.workspaceId, row?.settings ?? {});
  },
});

export const operations = [projectGet, projectUpdate, workspaceGet, workspaceUpdate];
