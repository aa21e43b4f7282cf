/** Code-host installations: where a project's `repository.installation_id` comes from. */
import { z } from 'zod';
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
  handler: async (_input, ctx) => ({
    object: 'list' as const,
    data: ctx.services.codeHosts.list().map((i) => ({ object: 'installation' as const, ...i })),
    next_cursor: null,
  }),
});

export const operations = [list];
