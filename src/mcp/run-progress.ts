/**
 * Tool calls that wait on a run: `tasks_events` with `wait: true` (any operation with an event
 * stream). Such a call follows the task's event stream (the same `text/event-stream` answer a
 * REST client gets) until the latest run has ended, turning each event into an MCP progress
 * notification when the client asked for them with a `progressToken`; its result is then the
 * operation's JSON page. Kept apart from server.ts so the transports (in-process inject, fetch)
 * share one reading of the stream.
 */
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';
import type { Operation } from '../operations/registry';
import { isRecord } from './error-terms';

/** Sends one progress notification: `progress` grows by one per event; `message` says what happened. */
export type ProgressSink = (progress: number, message: string) => Promise<void>;

/** Called with each event's JSON (`{id, event, data}`) as it arrives. */
export type EventListener = (event: Record<string, unknown>) => Promise<void> | void;

/** True when the call is one that waits on a run rather than reading once. */
export const waitsOnRun = (op: Operation, args: Record<string, unknown>) =>
  op.eventStream !== undefined && (args.wait === true || args.wait === 'true');

/** Feeds the events of an SSE body to `onEvent`, in order, as the chunks arrive. */
export async function readEventStream(
  chunks: AsyncIterable<Uint8Array | string>,
  onEvent: EventListener,
): Promise<void> {
  const parsed: Record<string, unknown>[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const data: unknown = JSON.parse(message.data);
      if (isRecord(data)) parsed.push(data);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    // Awaited one by one: notifications leave in the order the events came.
    for (const event of parsed.splice(0)) await onEvent(event);
  }
}

/** One line for a person watching the progress: which run, and what just happened to it. */
export function describeEvent(event: Record<string, unknown>): string {
  const data = isRecord(event.data) ? event.data : {};
  const run = typeof data.run_id === 'string' ? data.run_id : 'run';
  switch (event.event) {
    case 'status': {
      const error = isRecord(data.error) ? `: ${String(data.error.code)}` : '';
      return `${run} ${String(data.status)}${error}`;
    }
    case 'progress': {
      const text = [data.phase, data.status_text, data.current_step].filter((p) => typeof p === 'string');
      const pct = typeof data.progress_pct === 'number' ? ` (${data.progress_pct}%)` : '';
      return `${run} ${text.join(', ') || 'working'}${pct}`;
    }
    case 'message': {
      const content = typeof data.content === 'string' ? data.content : '';
      const line = content.length > 200 ? `${content.slice(0, 199)}…` : content;
      return `${run} ${String(data.role)}: ${line}`;
    }
    default:
      return `${run} ${String(event.event)}`;
  }
}

/**
 * The sink for a tool call's progress: notifications for the call's `progressToken`, or none
 * when the client sent no token (it did not ask to hear progress).
 */
export function progressSinkFor(
  token: ProgressToken | undefined,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressSink | undefined {
  if (token === undefined) return undefined;
  return (progress, message) =>
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } });
}

/**
 * What the JSON-RPC message(s) of one MCP request ask for: a tool call that waits (`wait: true`)
 * and one that wants progress (a `progressToken`). Read before the transport is made, since
 * progress can only travel on an SSE answer, and a wait may outlast the idle timeout.
 */
export function callsInRequest(body: unknown): { waits: boolean; wantsProgress: boolean } {
  const calls = (Array.isArray(body) ? body : [body]).filter(
    (m): m is Record<string, unknown> => isRecord(m) && m.method === 'tools/call' && isRecord(m.params),
  );
  const params = calls.map((c) => c.params as Record<string, unknown>);
  return {
    waits: params.some(
      (p) => isRecord(p.arguments) && (p.arguments.wait === true || p.arguments.wait === 'true'),
    ),
    wantsProgress: params.some((p) => isRecord(p._meta) && p._meta.progressToken !== undefined),
  };
}
