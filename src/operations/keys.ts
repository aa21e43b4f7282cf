/** The key-management area: mint, list and revoke API keys. */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { type ApiKeyRow, createApiKey, revokeApiKey } from '../storage/keys';
import { apiKeys, projects } from '../storage/schema';
import { defineOperation, type OperationContext } from './registry';
import { iso, listOf, listQuery, timestamp } from './schemas/common';
import { decodeCursor, page } from './schemas/cursor';

const keyRecord = z.object({
  object: z.literal('api_key'),
  id: z.string(),
  name: z.string(),
  kind: z.enum(['workspace', 'project', 'personal']),
  project_id: z.string().nullable(),
  hint: z.string().describe('The first characters of the secret, to tell keys apart.'),
  created_at: timestamp,
  updated_at: timestamp,
  last_used_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
});

/** A key as the API shows it (never its secret); `svc keys list` prints the same. */
export const toKeyRecord = (row: ApiKeyRow): z.infer<typeof keyRecord> => ({
  object: 'api_key',
  id: row.id,
  name: row.name,
  kind: row.kind,
  project_id: row.projectId,
  hint: row.hint,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
  last_used_at: iso(row.lastUsedAt),
  revoked_at: iso(row.revokedAt),
});

function requireUnpinned(ctx: OperationContext) {
  if (ctx.principal.pinnedProjectId) {
    throw new ApiError('forbidden', 'a project-pinned key cannot manage keys; use a workspace key');
  }
}

const create = defineOperation({
  tool: 'keys_create',
  method: 'POST',
  path: '/api/v1/keys',
  summary: 'Mint a key. The secret is in this response only; svc stores its digest.',
  scope: 'workspace',
  status: 201,
  body: z.strictObject({
    name: z.string().trim().min(1).max(200),
    kind: z.enum(['workspace', 'project', 'personal']).default('workspace'),
    project_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Required for kind `project`: the project the key is pinned to.'),
  }),
  response: keyRecord.extend({ secret: z.string().describe('Shown once.') }),
  answersSecret: true,
  handler: async ({ body }, ctx) => {
    requireUnpinned(ctx);
    if ((body.kind === 'project') !== Boolean(body.project_id)) {
      throw new ApiError(
        'validation_failed',
        'project_id is required for kind "project" and only allowed there',
      );
    }
    if (body.project_id) {
      const [project] = await ctx.services.db.orm
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, body.project_id), eq(projects.workspaceId, ctx.workspaceId)))
        .limit(1);
      if (!project) throw new ApiError('not_found', `project ${body.project_id} was not found`);
    }
    const { row, secret } = await createApiKey(
      ctx.services.db,
      {
        workspaceId: ctx.workspaceId,
        kind: body.kind,
        projectId: body.project_id ?? null,
        name: body.name,
      },
      { actor: ctx.principal.keyId },
    );
    return { ...toKeyRecord(row), secret };
  },
});

const list = defineOperation({
  tool: 'keys_list',
  method: 'GET',
  path: '/api/v1/keys',
  summary: "List the workspace's keys (never their secrets), newest first.",
  scope: 'workspace',
  query: listQuery,
  response: listOf(keyRecord),
  handler: async ({ query }, ctx) => {
    requireUnpinned(ctx);
    const after = decodeCursor(query.cursor);
    const rows = await ctx.services.db.orm
      .select()
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.workspaceId, ctx.workspaceId),
          after
            ? or(
                lt(apiKeys.createdAt, after.createdAt),
                and(eq(apiKeys.createdAt, after.createdAt), lt(apiKeys.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
      .limit(query.limit + 1);
    const { data, nextCursor } = page(rows, query.limit);
    return { object: 'list' as const, data: data.map(toKeyRecord), next_cursor: nextCursor };
  },
});

const remove = defineOperation({
  tool: 'keys_delete',
  method: 'DELETE',
  path: '/api/v1/keys/{key_id}',
  summary: 'Revoke a key; requests with it get 401 from then on.',
  scope: 'workspace',
  params: z.strictObject({ key_id: z.string().min(1).max(200) }),
  response: keyRecord,
  handler: async ({ params }, ctx) => {
    requireUnpinned(ctx);
    const row = await revokeApiKey(ctx.services.db, ctx.workspaceId, params.key_id, {
      actor: ctx.principal.keyId,
    });
    if (!row) throw new ApiError('not_found', `key ${params.key_id} was not found or is already revoked`);
    return toKeyRecord(row);
  },
});

export const operations = [create, list, remove];
