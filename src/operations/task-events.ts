/**
 * `GET /tasks/{task_id}/events`: a task's runs as they happen (status changes, transcript
 * messages, progress). Asked for `text/event-stream`, it is a Server-Sent Events stream that
 * ends once the task's latest run has ended and resumes after `Last-Event-ID`; otherwise it
 * answers the events after `after` as one JSON page, which a tool call (or a client that cannot
 * stream) reads. An extension: the spec says runs stream but shows no stream operation.
 */
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { RUN_STATUSES } from '../core/runs';
import { errorJson } from '../engine/projection';
import {
  decodePosition,
  EVENT_ID_PATTERN,
  type EventPosition,
  encodePosition,
  followRunEvents,
  latestRunStart,
  type RunEvent,
  readRunEvents,
} from '../engine/run-events';
import { defineOperation, type OperationContext } from './registry';
import { decimalParam, iso, nullableTimestamp } from './schemas/common';
import { runErrorJson, runMessage } from './schemas/task';
import { loadTask, messageRecord, taskParams } from './tasks';

const statusData = z
  .object({
    run_id: z.string(),
    status: z.enum(RUN_STATUSES),
    at: nullableTimestamp.describe('When the run was queued, claimed by a worker, or ended.'),
    retry_of: z.string().nullable().describe('The run this one replaces, if any.'),
    error: runErrorJson.nullable().describe('Set on a failed run.'),
    gaps: z.array(z.object({ code: z.string(), message: z.string() })),
  })
  .describe('A status change of one of the task runs: queued (`pending`), claimed (`running`), ended.');

const progressData = z
  .object({
    run_id: z.string(),
    phase: z.string().nullable(),
    status_text: z.string().nullable(),
    current_step: z.string().nullable(),
    progress_pct: z.number().int().nullable(),
  })
  .describe("The running run's progress, as `tasks_status` would show it now.");

export const runEvent = z.object({
  object: z.literal('run_event'),
  id: z
    .string()
    .describe('Increases through the task history; send it back as `Last-Event-ID` or `after` to resume.'),
  event: z.enum(['status', 'message', 'progress']),
  data: z.union([statusData, runMessage, progressData]),
});
export type RunEventRecord = z.infer<typeof runEvent>;

const eventsPage = z.object({
  object: z.literal('list'),
  task_id: z.string(),
  data: z.array(runEvent),
  last_event_id: z
    .string()
    .nullable()
    .describe('The id of the last event of this page (or `after` when the page is empty).'),
  final: z
    .boolean()
    .describe("True when this page ends with the end of the task's latest run: nothing follows."),
});

const eventIdParam = z.string().min(7).max(60).regex(EVENT_ID_PATTERN);

function record(event: RunEvent): RunEventRecord {
  const id = encodePosition(event.position);
  const row = event.run.row;
  if (event.kind === 'message')
    return { object: 'run_event', id, event: 'message', data: messageRecord(event.message) };
  if (event.kind === 'progress')
    return {
      object: 'run_event',
      id,
      event: 'progress',
      data: {
        run_id: row.id,
        phase: row.phase,
        status_text: row.statusText,
        current_step: row.currentStep,
        progress_pct: row.progressPct,
      },
    };
  const ended = event.status !== 'pending' && event.status !== 'running';
  return {
    object: 'run_event',
    id,
    event: 'status',
    data: {
      run_id: row.id,
      status: event.status,
      at: iso(event.at),
      retry_of: row.retryOf,
      error: ended ? errorJson(row) : null,
      gaps: ended ? row.gaps : [],
    },
  };
}

/**
 * Where to start: after the event the client names, or before the task's latest run. An id of a
 * run the task does not have is refused rather than waited on.
 */
async function startingPoint(ctx: OperationContext, taskId: string, after: string | undefined) {
  const latest = await latestRunStart(ctx.services.db, taskId);
  if (after === undefined) return latest;
  const position = decodePosition(after);
  if (!position || position.run > latest.run)
    throw new ApiError(
      'validation_failed',
      `event id ${JSON.stringify(after)} is not one this task's events have; send back an event's \`id\` unchanged`,
    );
  return position;
}

const query = z.strictObject({
  after: eventIdParam
    .optional()
    .describe(
      'Only events after this event id (a stream resumes with the `Last-Event-ID` header instead). Default: from the start of the latest run.',
    ),
  limit: decimalParam(z.int().min(1).max(500).default(100)).describe('Page size, 1-500 (default 100).'),
  wait: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      '`true`: hold the answer until there is an event after `after` or the run has ended, at most 25 s (a long poll). Over MCP the call follows the run to its end instead.',
    ),
});

export const tasksEvents = defineOperation({
  tool: 'tasks_events',
  method: 'GET',
  path: '/api/v1/tasks/{task_id}/events',
  summary: "The task's run events: status changes, transcript messages and progress, in order.",
  description:
    'With `Accept: text/event-stream` this is a Server-Sent Events stream: each event carries its `id`, ' +
    'its kind as the event name (`status`, `message`, `progress`) and the JSON `data` of a `run_event`; ' +
    'comments keep the connection open; the stream ends after the status event that ends the latest run. ' +
    'Reconnect with `Last-Event-ID` to get exactly the events missed. ' +
    'Otherwise the answer is one JSON page of the events after `after`. ' +
    'Over MCP, `wait: true` sends each event as a progress notification when the call has a `progressToken`.',
  scope: 'project',
  params: taskParams,
  query,
  response: eventsPage,
  eventStream: {
    event: runEvent,
    async open({ params, query }, ctx) {
      const task = await loadTask(ctx, params.task_id);
      const after = await startingPoint(ctx, task.id, ctx.headers['last-event-id'] ?? query.after);
      return async function* (signal: AbortSignal) {
        const pages = followRunEvents(ctx.services.db, task.id, after, {
          pollMs: ctx.services.engine.limits.pollMs,
          signal,
        });
        for await (const page of pages) for (const event of page) yield record(event);
      };
    },
  },
  handler: async ({ params, query }, ctx) => {
    const task = await loadTask(ctx, params.task_id);
    const after = await startingPoint(ctx, task.id, query.after);
    const page =
      query.wait === 'true'
        ? await waitForPage(ctx, task.id, after, query.limit)
        : await readRunEvents(ctx.services.db, task.id, after, query.limit);
    const last = page.events[page.events.length - 1];
    return {
      object: 'list' as const,
      task_id: task.id,
      data: page.events.map(record),
      last_event_id: last ? encodePosition(last.position) : (query.after ?? null),
      final: page.final,
    };
  },
});

/** How long a JSON read with `wait` holds its answer at most, so no request outlives its client by much. */
const LONG_POLL_MS = 25_000;

/** A long poll: answers once there is an event after `after` (or the run ended), or LONG_POLL_MS passed. */
async function waitForPage(ctx: OperationContext, taskId: string, after: EventPosition, limit: number) {
  const pages = followRunEvents(ctx.services.db, taskId, after, {
    pollMs: ctx.services.engine.limits.pollMs,
    signal: AbortSignal.timeout(LONG_POLL_MS),
    pageSize: limit,
  });
  // The first page of new events is enough: leaving the loop ends the follow.
  for await (const _page of pages) break;
  return readRunEvents(ctx.services.db, taskId, after, limit);
}
