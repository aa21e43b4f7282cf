/**
 * The diff a review pass read, file by file with its hunks, so a reader (the web console, an
 * agent) can put each finding beside the lines it points at. Documented extension
 * `review_results_diff`: the spec names findings' anchors but no way to read the code they
 * anchor to. The diff is not stored; it is taken again from the code host at the pass's
 * recorded base and head, so it is exactly what the reviewers read as long as those commits
 * exist, and kept in memory for a while (codehost/diff-cache.ts) because readers ask for it one
 * file at a time.
 */
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { DiffCache } from '../codehost/diff-cache';
import { CodeHostError } from '../codehost/types';
import { ApiError } from '../core/errors';
import { repoPathSchema } from '../core/git-grammar';
import type { DiffFile } from '../core/review';
import { projects, pullRequests, reviewResults } from '../storage/schema';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { decimalParam, listOf } from './schemas/common';
import type { Services } from './services';

const diffLine = z.object({
  kind: z.enum(['add', 'del', 'context']),
  old_line: z.int().nullable().describe('Line number in the old file (del, context).'),
  new_line: z
    .int()
    .nullable()
    .describe('Line number in the new file (add, context); findings point at these.'),
  text: z.string(),
});

const diffFileRecord = z.object({
  object: z.literal('diff_file'),
  path: z.string().describe('Path in the new tree (for a deleted file: its old path).'),
  old_path: z.string().nullable().describe('Path in the old tree when it differs (renames, copies).'),
  change: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type_changed']),
  language: z.string().nullable(),
  additions: z.int(),
  deletions: z.int(),
  skipped: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .describe('Set when the file was not diffed in full (binary, too large): no hunks, and why.'),
  hunks: z.array(
    z.object({
      old_start: z.int(),
      old_lines: z.int(),
      new_start: z.int(),
      new_lines: z.int(),
      header: z.string(),
      lines: z.array(diffLine),
    }),
  ),
});

const diffQuery = z.strictObject({
  path: repoPathSchema
    .optional()
    .describe('Only this file (its new or old path); the console asks per file it shows.'),
  limit: decimalParam(z.int().min(1).max(100).default(20)).describe('Files per page, 1-100 (default 20).'),
  cursor: z.string().min(1).max(100).optional().describe('Opaque cursor from `next_cursor`.'),
});

// Files come in the diff's own order, so a position is an index; wrapped so clients treat it as opaque.
const encodeIndex = (index: number) => Buffer.from(`file:${index}`).toString('base64url');
function decodeIndex(cursor: string | undefined): number {
  if (!cursor) return 0;
  const match = /^file:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match)
    throw new ApiError(
      'validation_failed',
      'cursor is not one this service issued; pass next_cursor unchanged',
    );
  return Number(match[1]);
}

const toDiffFile = (f: DiffFile): z.infer<typeof diffFileRecord> => ({
  object: 'diff_file',
  path: f.path,
  old_path: f.oldPath,
  change: f.change,
  language: f.language,
  additions: f.additions,
  deletions: f.deletions,
  skipped: f.skipped ? { code: f.skipped.code, message: f.skipped.message } : null,
  hunks: f.hunks.map((h) => ({
    old_start: h.oldStart,
    old_lines: h.oldLines,
    new_start: h.newStart,
    new_lines: h.newLines,
    header: h.header,
    lines: h.lines.map((l) => ({ kind: l.kind, old_line: l.oldLine, new_line: l.newLine, text: l.text })),
  })),
});

/** The pass, its project's repository and (for a pull request) its number. */
async function passOf(ctx: OperationContext, id: string) {
  const [row] = await ctx.services.db.orm
    .select({
      baseSha: reviewResults.baseSha,
      headSha: reviewResults.headSha,
      repo: projects.repoFullName,
      installationId: projects.installationId,
      pr: pullRequests.number,
    })
    .from(reviewResults)
    .innerJoin(projects, eq(projects.id, reviewResults.projectId))
    .leftJoin(pullRequests, eq(pullRequests.id, reviewResults.pullRequestId))
    .where(
      and(
        eq(reviewResults.id, id),
        eq(reviewResults.workspaceId, ctx.workspaceId),
        eq(reviewResults.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  if (!row) throw new ApiError('not_found', `review result ${id} was not found`);
  return row;
}

/** One cache per running service (a test process builds many), dropped with it. */
const diffCaches = new WeakMap<Services, DiffCache>();
function diffCacheOf(services: Services): DiffCache {
  let cache = diffCaches.get(services);
  if (!cache) {
    cache = new DiffCache();
    diffCaches.set(services, cache);
  }
  return cache;
}

const reviewResultsDiff = defineOperation({
  tool: 'review_results_diff',
  method: 'GET',
  path: '/api/v1/review-results/{id}/diff',
  summary:
    'Read the diff a review pass read, file by file with its hunks, to show findings beside their lines.',
  description:
    'Documented extension. Taken again from the code host at the pass’s `base_sha` and `head_sha`. ' +
    'A commit the host no longer has is 404; a host that cannot be reached is 503 `code_host_unavailable`.',
  scope: 'project',
  params: z.strictObject({ id: z.string().min(1).max(200).describe('Id of the review result (`rvr_…`).') }),
  query: diffQuery,
  response: listOf(diffFileRecord),
  handler: async ({ params, query }, ctx) => {
    const pass = await passOf(ctx, params.id);
    const host = ctx.services.codeHosts.forInstallation(pass.installationId);
    if (!host)
      throw new ApiError(
        'code_host_unavailable',
        `installation ${pass.installationId} of ${pass.repo} is not configured on this service`,
      );
    const diff = await diffCacheOf(ctx.services)
      .read(host, pass.repo, pass.baseSha, pass.headSha, { pullRequest: pass.pr })
      .catch((error: unknown) => {
        if (!(error instanceof CodeHostError)) throw error;
        if (error.reason === 'not_found')
          throw new ApiError(
            'not_found',
            `the reviewed diff ${pass.baseSha.slice(0, 12)}..${pass.headSha.slice(0, 12)} of ${pass.repo} is gone: ${error.message}`,
          );
        if (error.reason === 'unreadable') throw new ApiError('repository_unreadable', error.message);
        throw new ApiError('code_host_unavailable', `reading the diff of ${pass.repo}: ${error.message}`);
      });
    const files = query.path
      ? diff.files.filter((f) => f.path === query.path || f.oldPath === query.path)
      : diff.files;
    const start = decodeIndex(query.cursor);
    const data = files.slice(start, start + query.limit);
    const end = start + data.length;
    return {
      object: 'list' as const,
      data: data.map(toDiffFile),
      next_cursor: end < files.length ? encodeIndex(end) : null,
    };
  },
});

export const operations: Operation[] = [reviewResultsDiff];
