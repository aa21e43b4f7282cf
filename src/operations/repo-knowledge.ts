/**
 * `repo-knowledge`: the project's repository knowledge (`svc.json`), one record per project,
 * written by setup and refreshed by later passes. The list holds at most that one record.
 */
import { z } from 'zod';
import { notFound } from '../core/errors';
import { type KnowledgeRow, knowledgeOf } from '../knowledge/store';
import { collectionRecords } from './collections';
import { defineOperation, type Operation } from './registry';
import { listOf, listQuery } from './schemas/common';

const knowledgeRecord = collectionRecords['repo-knowledge'];

function toKnowledgeRecord(row: KnowledgeRow) {
  return {
    object: 'repo_knowledge' as const,
    id: row.id,
    content: row.content,
    commit_sha: row.commitSha,
    refreshed_at: row.refreshedAt.toISOString(),
    refreshed_by: row.refreshedBy,
    gaps: row.gaps,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const operations: Operation[] = [
  defineOperation({
    tool: 'repo_knowledge_get',
    method: 'GET',
    path: '/api/v1/repo-knowledge/{id}',
    summary: "Read the project's repository knowledge (`svc.json`) by id.",
    scope: 'project',
    params: z.strictObject({ id: z.string().min(1).max(200).describe('Id of the repo-knowledge record.') }),
    response: knowledgeRecord,
    handler: async ({ params }, ctx) => {
      const row = await knowledgeOf(ctx.services.db.orm, ctx.workspaceId, ctx.projectId ?? '');
      if (!row || row.id !== params.id) throw notFound('repo_knowledge', params.id);
      return toKnowledgeRecord(row);
    },
  }),
  defineOperation({
    tool: 'repo_knowledge_list',
    method: 'GET',
    path: '/api/v1/repo-knowledge',
    summary:
      "List the project's repository knowledge: one record once setup has run, none before (run setup to create it).",
    scope: 'project',
    query: listQuery,
    response: listOf(knowledgeRecord),
    handler: async (_input, ctx) => {
      const row = await knowledgeOf(ctx.services.db.orm, ctx.workspaceId, ctx.projectId ?? '');
      return { object: 'list' as const, data: row ? [toKnowledgeRecord(row)] : [], next_cursor: null };
    },
  }),
];
