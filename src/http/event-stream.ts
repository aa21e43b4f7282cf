/**
 * Server-Sent Events for the operations that declare an `eventStream` (a task's run events):
 * what a request accepting `text/event-stream` gets instead of the JSON answer. The operation
 * gives the events; this module writes them in the SSE format, keeps the connection open with
 * comment lines while nothing happens (proxies and svc's own idle timeout close a silent one),
 * waits for a slow reader instead of buffering for it, and stops the events when the client
 * leaves or the server closes.
 */
import type { Writable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { StreamedEvent } from '../operations/registry';
import { NOSNIFF } from './security-headers';

export const EVENT_STREAM_TYPE = 'text/event-stream';

/** Silence longer than this gets a comment line; well under common proxy timeouts of 30-60 s. */
const HEARTBEAT_MS = 15_000;

/** True when `accept` asks for an event stream (any `text/event-stream` entry not weighted q=0). */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((entry) => {
    const [type, ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (type !== EVENT_STREAM_TYPE) return false;
    const q = parameters.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** One event in the SSE wire format; `data` is one line of JSON (JSON.stringify never breaks lines). */
export const formatEvent = (event: StreamedEvent) =>
  `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`;

/** The event streams an app has open, so closing the app ends them rather than waiting for them. */
export class EventStreams {
  private readonly open = new Set<AbortController>();
  private readonly heartbeatMs: number;

  constructor(app: FastifyInstance, idleTimeoutMs: number) {
    // Under the idle timeout too, or svc would close its own quiet streams.
    this.heartbeatMs = Math.max(1_000, Math.min(HEARTBEAT_MS, Math.floor(idleTimeoutMs / 2)));
    // preClose: before the server stops accepting and waits for open connections to end.
    app.addHook('preClose', async () => {
      for (const controller of this.open) controller.abort();
    });
  }

  /** How many streams are open now (the `svc_event_streams_open` gauge). */
  get openCount(): number {
    return this.open.size;
  }

  /** Answers `reply` with the events `source` yields, until it ends, the client leaves or the app closes. */
  send(reply: FastifyReply, source: (signal: AbortSignal) => AsyncIterable<StreamedEvent>): FastifyReply {
    const controller = new AbortController();
    this.open.add(controller);
    const raw = reply.raw;
    let left = false;
    const stop = () => {
      left = true;
      controller.abort();
    };
    // The response's close: the whole answer was sent, or the client went away first (for an
    // in-process request, MCP's inject, its caller aborted it).
    raw.once('close', stop);
    // Written here rather than handed to Fastify, which would answer a stream cut by the client
    // with an error it can no longer send; so the headers every answer carries are set here too.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) raw.setHeader(name, value);
    reply.hijack();
    raw.writeHead(200, {
      'content-type': `${EVENT_STREAM_TYPE}; charset=utf-8`,
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      [NOSNIFF.name]: NOSNIFF.value,
      // A connection that carried a stream is not reused: a closing server would otherwise wait
      // on it, idle after its stream ended, until the client's keep-alive gave it up.
      connection: 'close',
    });
    const write = async (text: string) => {
      if (!raw.write(text)) await drained(raw, controller.signal);
    };
    const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), this.heartbeatMs);
    const pump = async () => {
      try {
        // A first line at once: the client sees the answer start before the first event.
        await write(': events follow\n\n');
        for await (const event of source(controller.signal)) {
          if (controller.signal.aborted) break;
          await write(formatEvent(event));
        }
      } catch (error) {
        // The status line has gone: the stream can only end. The client resumes with Last-Event-ID.
        reply.log.error({ err: error }, 'event stream failed');
      } finally {
        clearInterval(heartbeat);
        raw.off('close', stop);
        this.open.delete(controller);
        // A client that left gets nothing more: its connection is torn down, not left half-open.
        if (left) raw.destroy();
        else raw.end();
      }
    };
    void pump();
    return reply;
  }
}

/** Resolves once `stream` wants more, or `signal` aborted. */
function drained(stream: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
