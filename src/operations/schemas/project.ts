import { z } from 'zod';
import { repoFullNameSchema } from '../../core/git-grammar';
import { resolveProjectSettings } from '../../core/settings';
import type { projects } from '../../storage/schema';
import { taskAck, timestamp } from './common';

export const repositoryInput = z.strictObject({
  full_name: repoFullNameSchema,
  installation_id: z
    .number()
    .int()
    .positive()
    .describe('Id of the installed code-host app (1: the local git host).'),
});

export const projectRecord = z.object({
  object: z.literal('project'),
  id: z.string(),
  name: z.string(),
  repository: z.object({ full_name: z.string(), installation_id: z.number().int() }),
  settings: z
    .record(z.string(), z.unknown())
    .describe('Effective project settings (stored values over defaults).'),
  created_at: timestamp,
  updated_at: timestamp,
});

/** The setup task handle: the task to poll, its run and where to read its progress and transcript. */
export const setupHandle = z.object({
  task: taskAck.extend({ messages_url: z.string().describe('Transcript of the run (its durable stream).') }),
});

export type ProjectRow = typeof projects.$inferSelect;

export function toProjectRecord(row: ProjectRow): z.infer<typeof projectRecord> {
  return {
    object: 'project',
    id: row.id,
    name: row.name,
    repository: { full_name: row.repoFullName, installation_id: row.installationId },
    settings: resolveProjectSettings(row.settings),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const taskLinks = (taskId: string, runId: string) => ({
  id: taskId,
  run_id: runId,
  status_url: `/api/v1/tasks/${taskId}/status`,
  messages_url: `/api/v1/tasks/${taskId}/messages`,
});
