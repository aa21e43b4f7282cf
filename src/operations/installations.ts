/**
 * Code-host installations: where a project's `repository.installation_id` comes from. The local
 * host (installation 1) plus every GitHub App installation recorded from `installation`
 * webhooks that has not been deleted.
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { installations } from '../storage/schema';
import { defineOperation } from './registry';
import { listOf } from './schemas/common';

const installationRecord = z.object({
  object: z.literal('installation'),
  id: z.number().int().describe('The value for `repository.installation_id`.'),
  kind: z.enum(['local', 'github']),
  account: z.string().describe('Who or what the installation serves (for the local host: its directory).'),
});

const list = defineOperation({
  tool: 'installations_list',
  method: 'GET',
  path: '/api/v1/installations',
  summary: 'List the code-host installations projects can be created on.',
  scope: 'workspace',
  response: listOf(installationRecord),
  handler: async (_input, ctx) => {
    const hosts = ctx.services.codeHosts.list();
    const github = await ctx.services.db.orm
      .select({ id: installations.id, account: installations.accountLogin })
      .from(installations)
      .where(and(eq(installations.workspaceId, ctx.workspaceId), isNull(installations.deletedAt)))
      .orderBy(asc(installations.id));
    // A code host that already serves an installation id (the local host's 1) keeps it.
    const listed = new Set(hosts.map((h) => h.id));
    return {
      object: 'list' as const,
      data: [
        ...hosts.map((i) => ({ object: 'installation' as const, ...i })),
        ...github
          .filter((i) => !listed.has(i.id))
          .map((i) => ({
            object: 'installation' as const,
            id: i.id,
            kind: 'github' as const,
            account: i.account,
          })),
      ],
      next_cursor: null,
    };
  },
});

export const operations = [list];
