/** Tasks: read a task with its latest run, its status block, its runs and transcript; cancel. */
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import type { MessageRow } from '../engine/engine';
import { cancelSwarm } from '../review/swarm';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { listOf, listQuery } from './schemas/common';
import { decodeCursor, encodeCursor } from './schemas/cursor';
import { runReceipt, runStatusBlock, taskRecord, transcript } from './schemas/task';

export const taskParams = z.strictObject({
  task_id: z.string().min(1).max(200).describe('Task id (a review id works too).'),
});

/** The task `taskId` as the caller's key and project see it (404 otherwise). */
export const loadTask = (ctx: OperationContext, taskId: string) =>
  ctx.services.engine.getTask(ctx.workspaceId, ctx.projectId, taskId);

const get = defineOperation({
  tool: 'tasks_get',
  method: 'GET',
  path: '/api/v1/tasks/{task_id}',
  summary: "Read a task with its latest run's receipt inlined as `run`.",
  scope: 'project',
  params: taskParams,
  response: taskRecord,
  handler: async ({ params }, ctx) => {
    const { engine } = ctx.services;
    const { task, run } = await engine.getTaskWithLatestRun(
      ctx.workspaceId,
      ctx.projectId ?? '',
      params.task_id,
    );
    return engine.taskRecord(task, run);
  },
});

const status = defineOperation({
  tool: 'tasks_status',
  method: 'GET',
  path: '/api/v1/tasks/{task_id}/status',
  summary: "The live status block of the task's latest run (or of `run_id`).",
  description: 'Poll the task, not a particular run. `include=cost` adds itemized `usage_line_items`.',
  scope: 'project',
  params: taskParams,
  query: z.strictObject({
    run_id: z.string().min(1).max(200).optional().describe('A run of this task; default the latest run.'),
    include: z.enum(['cost']).optional().describe('`cost` adds itemized usage_line_items.'),
  }),
  response: runStatusBlock,
  handler: async ({ params, query }, ctx) => {
    const { engine } = ctx.services;
    const task = await loadTask(ctx, params.task_id);
    const run = query.run_id ? await engine.getRun(query.run_id, task.id) : await engine.latestRun(task.id);
    if (!run)
      throw query.run_id
        ? notFound('run', query.run_id)
        : new ApiError('not_found', `task ${task.id} has no runs`);
    return engine.statusBlock(task, run, { includeCost: query.include === 'cost' });
  },
});

const runs = defineOperation({
  tool: 'tasks_runs',
  method: 'GET',
  path: '/api/v1/tasks/{task_id}/runs',
  summary: "List the task's run receipts, newest first.",
  scope: 'project',
  params: taskParams,
  query: listQuery,
  response: listOf(runReceipt),
  handler: async ({ params, query }, ctx) => {
    const { engine } = ctx.services;
    const task = await loadTask(ctx, params.task_id);
    const page = await engine.listRuns(task.id, { limit: query.limit, after: decodeCursor(query.cursor) });
    const last = page.data[page.data.length - 1];
    return {
      object: 'list' as const,
      data: page.data.map((r) => engine.receipt(r)),
      next_cursor: page.hasMore && last ? encodeCursor(last) : null,
    };
  },
});

const cancel = defineOperation({
  tool: 'tasks_cancel',
  method: 'POST',
  path: '/api/v1/tasks/{task_id}/cancel',
  summary: "Cancel the task's active run; answers the task with its latest run.",
  description:
    'A pending run ends canceled at once; a running run ends canceled and its worker stops the work. ' +
    'With no active run this changes nothing and answers the task as it is. ' +
    "A swarm's task is canceled as the swarm is (`swarms_cancel`): its children's runs end too.",
  scope: 'project',
  params: taskParams,
  response: taskRecord,
  handler: async ({ params }, ctx) => {
    const { engine } = ctx.services;
    const task = await loadTask(ctx, params.task_id);
    const reason = `canceled through the API (request ${ctx.requestId})`;
    if (task.kind !== 'swarm') return engine.taskRecord(task, await engine.cancel(task.id, reason));
    // Canceling only the coordinating run would strand the swarm 'running' with live children.
    await cancelSwarm(ctx.services.db, engine, task, ctx.principal.keyId, reason).catch((error) => {
      // An ended swarm has no active run: as for any task, nothing changes.
      if (!(error instanceof ApiError && error.code === 'conflict')) throw error;
    });
    return engine.taskRecord(task, await engine.latestRun(task.id));
  },
});

// Transcript cursors are sequence numbers, wrapped so clients treat them as opaque.
const encodeSeq = (seq: number) => Buffer.from(`seq:${seq}`).toString('base64url');
function decodeSeq(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const match = /^seq:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match)
    throw new ApiError(
      'validation_failed',
      'cursor is not one this service issued; pass next_cursor unchanged',
    );
  return Number(match[1]);
}

/** A transcript row as the API shows it (the transcript read and the events stream). */
export const messageRecord = (m: MessageRow) => ({
  object: 'message' as const,
  id: m.id,
  run_id: m.runId,
  task_id: m.taskId,
  role: m.role,
  content: m.content,
  data: m.data ?? null,
  created_at: m.createdAt.toISOString(),
  updated_at: m.createdAt.toISOString(),
});

const messages = defineOperation({
  tool: 'tasks_messages',
  method: 'GET',
  path: '/api/v1/tasks/{task_id}/messages',
  summary: "The task's transcript: notes, model messages and tool calls, oldest first.",
  description:
    "Each run's final part begins with a note: for a failed run it names the error code and its remedy. " +
    '`run_id` narrows the transcript to one run.',
  scope: 'project',
  params: taskParams,
  query: listQuery.extend({
    run_id: z.string().min(1).max(200).optional().describe('Only this run of the task.'),
  }),
  response: transcript,
  handler: async ({ params, query }, ctx) => {
    const { engine } = ctx.services;
    const task = await loadTask(ctx, params.task_id);
    if (query.run_id && !(await engine.getRun(query.run_id, task.id))) throw notFound('run', query.run_id);
    const page = await engine.messages(task.id, {
      runId: query.run_id,
      limit: query.limit,
      afterSeq: decodeSeq(query.cursor),
    });
    const last = page.data[page.data.length - 1];
    return {
      object: 'list' as const,
      task_id: task.id,
      run_id: query.run_id ?? null,
      data: page.data.map(messageRecord),
      next_cursor: page.hasMore && last ? encodeSeq(last.seq) : null,
    };
  },
});

export const operations: Operation[] = [get, status, runs, cancel, messages];
