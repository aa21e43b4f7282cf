/** Projects and their setup. */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { LocalCodeHost } from '../codehost/local/local-host';
import { CodeHostError } from '../codehost/types';
import { ApiError } from '../core/errors';
import { ensureDefaultDashboard } from '../metrics/boards';
import { newId } from '../storage/ids';
import { projects, tasks } from '../storage/schema';
import { recordChange } from './change-events';
import { defineOperation, type OperationContext } from './registry';
import { listOf, listQuery } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';
import { projectRecord, repositoryInput, setupHandle, taskLinks, toProjectRecord } from './schemas/project';
import type { Services } from './services';

const projectParams = z.strictObject({ project_id: z.string().min(1).max(200).describe('Project id.') });

async function startSetup(services: Services, workspaceId: string, projectId: string, name: string) {
  const { task, run } = await services.engine.createTask({
    workspaceId,
    projectId,
    kind: 'setup',
    title: `Set up ${name}`,
    input: {},
  });
  return { task: taskLinks(task.id, run.id) };
}

async function loadProject(ctx: OperationContext) {
  const [row] = await ctx.services.db.orm
    .select()
    .from(projects)
    .where(and(eq(projects.id, ctx.projectId ?? ''), eq(projects.workspaceId, ctx.workspaceId)))
    .limit(1);
  if (!row) throw new ApiError('not_found', `project ${ctx.projectId} was not found`);
  return row;
}

const create = defineOperation({
  tool: 'projects_create',
  method: 'POST',
  path: '/api/v1/projects',
  summary: 'Register a repository as a project; with `setup: true` its setup task starts in the same call.',
  scope: 'workspace',
  status: 201,
  body: z.strictObject({
    name: z.string().trim().min(1).max(200).describe('Project name.'),
    repository: repositoryInput,
    setup: z.boolean().optional().describe('When true, repository setup runs in the same call.'),
  }),
  response: z.object({ project: projectRecord, setup: setupHandle.optional() }),
  handler: async ({ body }, ctx) => {
    if (ctx.principal.pinnedProjectId) {
      throw new ApiError('forbidden', 'a project-pinned key cannot create projects; use a workspace key');
    }
    const { db, codeHosts } = ctx.services;
    const host = codeHosts.forInstallation(body.repository.installation_id);
    if (!host) {
      throw new ApiError(
        'not_found',
        `installation ${body.repository.installation_id} was not found; GET /api/v1/installations lists the installed code hosts`,
      );
    }
    const exists = await host.repositoryExists(body.repository.full_name).catch((error: unknown) => {
      // There, but the service may not read it: the operator's to fix, and the message says how.
      if (error instanceof CodeHostError && error.reason === 'unreadable')
        throw new ApiError('repository_unreadable', error.message);
      throw error;
    });
    if (!exists) {
      // Where svc looked: the local host's folder, or the installation's view on GitHub.
      const where =
        host instanceof LocalCodeHost
          ? host.whereLooked(body.repository.full_name)
          : `installation ${body.repository.installation_id} (${host.kind}) cannot see it: is the app installed on that repository?`;
      throw new ApiError(
        'not_found',
        `repository ${body.repository.full_name} was not found on installation ${body.repository.installation_id}: ${where}`,
      );
    }
    const [duplicate] = await db.orm
      .select({ id: projects.id })
      .from(projects)
      .where(
        and(eq(projects.workspaceId, ctx.workspaceId), eq(projects.repoFullName, body.repository.full_name)),
      )
      .limit(1);
    if (duplicate) {
      throw new ApiError(
        'conflict',
        `repository ${body.repository.full_name} is already project ${duplicate.id}`,
        {
          project_id: duplicate.id,
        },
      );
    }
    const row = await db.orm.transaction(async (tx) => {
      const [inserted] = await tx
        .insert(projects)
        .values({
          id: newId('project'),
          workspaceId: ctx.workspaceId,
          name: body.name,
          repoFullName: body.repository.full_name,
          installationId: body.repository.installation_id,
        })
        .returning();
      if (!inserted) throw new Error('project insert returned no row');
      await recordChange(tx, ctx, {
        objectType: 'project',
        objectId: inserted.id,
        projectId: inserted.id,
        kind: 'created',
        before: null,
        after: { name: inserted.name, repository: body.repository },
      });
      await ensureDefaultDashboard(tx, ctx.workspaceId, inserted.id);
      return inserted;
    });
    const project = toProjectRecord(row);
    if (!body.setup) return { project };
    return { project, setup: await startSetup(ctx.services, ctx.workspaceId, row.id, row.name) };
  },
});

const get = defineOperation({
  tool: 'projects_get',
  method: 'GET',
  path: '/api/v1/projects/{project_id}',
  summary: 'Read one project with its effective settings.',
  scope: 'project',
  params: projectParams,
  response: projectRecord,
  handler: async (_input, ctx) => toProjectRecord(await loadProject(ctx)),
});

const list = defineOperation({
  tool: 'projects_list',
  method: 'GET',
  path: '/api/v1/projects',
  summary: "List the workspace's projects, newest first (a pinned key sees only its project).",
  scope: 'workspace',
  query: listQuery,
  response: listOf(projectRecord),
  handler: async ({ query }, ctx) => {
    const after = decodeCursor(query.cursor);
    const rows = await ctx.services.db.orm
      .select()
      .from(projects)
      .where(
        and(
          eq(projects.workspaceId, ctx.workspaceId),
          ctx.principal.pinnedProjectId ? eq(projects.id, ctx.principal.pinnedProjectId) : undefined,
          after
            ? or(
                lt(projects.createdAt, after.createdAt),
                and(eq(projects.createdAt, after.createdAt), lt(projects.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(projects.createdAt), desc(projects.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toProjectRecord), next_cursor: nextCursor };
  },
});

const setupStart = defineOperation({
  tool: 'projects_setup',
  method: 'POST',
  path: '/api/v1/projects/{project_id}/setup',
  summary: 'Set up the project: start a setup task that reads the repository and records what it found.',
  scope: 'project',
  status: 202,
  params: projectParams,
  response: setupHandle,
  handler: async (_input, ctx) => {
    const project = await loadProject(ctx);
    return startSetup(ctx.services, ctx.workspaceId, project.id, project.name);
  },
});

const setupStatus = defineOperation({
  tool: 'projects_setup_status',
  method: 'GET',
  path: '/api/v1/projects/{project_id}/setup',
  summary: "Read the latest setup's evidence and what is still missing.",
  scope: 'project',
  params: projectParams,
  response: z.object({
    object: z.literal('project_setup'),
    project_id: z.string(),
    status: z.enum(['not_started', 'pending', 'running', 'completed', 'failed', 'canceled']),
    task_id: z.string().nullable(),
    run_id: z.string().nullable(),
    evidence: z.record(z.string(), z.unknown()).nullable(),
    missing: z.array(z.object({ code: z.string(), message: z.string() })),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  }),
  handler: async (_input, ctx) => {
    const project = await loadProject(ctx);
    const [task] = await ctx.services.db.orm
      .select()
      .from(tasks)
      .where(and(eq(tasks.projectId, project.id), eq(tasks.kind, 'setup')))
      .orderBy(desc(tasks.createdAt))
      .limit(1);
    const run = task ? await ctx.services.engine.latestRun(task.id) : null;
    const missing = run?.gaps ?? [];
    if (!run)
      missing.push({
        code: 'setup_not_run',
        message: 'setup has not run; POST /projects/{id}/setup starts it',
      });
    return {
      object: 'project_setup' as const,
      project_id: project.id,
      status: run?.status ?? ('not_started' as const),
      task_id: task?.id ?? null,
      run_id: run?.id ?? null,
      evidence: (run?.result as { evidence?: Record<string, unknown> } | null)?.evidence ?? null,
      missing,
      error: run?.error ? { code: run.error.code, message: run.error.message } : null,
    };
  },
});

export const operations = [create, get, list, setupStart, setupStatus];
