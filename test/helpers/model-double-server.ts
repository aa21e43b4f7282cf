/**
 * What the model-provider doubles (./openai-double.ts, ./anthropic-double.ts) share: a real HTTP
 * server on 127.0.0.1 (ephemeral port) whose sockets are destroyed on close, JSON answers, and an
 * answer streamed in pieces that can be made to break (the socket destroyed after N characters)
 * or to stall (silence for a while after N characters). Each double keeps its own protocol: the
 * request schema, the error shape and the wire format of its stream.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How a streamed answer misbehaves after some characters of its text. */
export interface StreamMisbehaviour {
  /** The connection is destroyed after this many characters (no closing event). */
  cutAfter?: number;
  /** Nothing more is sent for `ms` once `chars` characters have gone out. */
  stallAfter?: { chars: number; ms: number };
}

/** Text cut into a few pieces, as a model streams it (an empty text is one empty piece). */
export function pieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 4));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/**
 * Sends `parts` through `emit` (which writes one protocol event per piece), misbehaving as asked.
 * Resolves true when every part went out, false when the stream was cut or the client left during
 * a stall; the caller then sends nothing more.
 */
export async function streamPieces(
  res: ServerResponse,
  parts: string[],
  misbehaviour: StreamMisbehaviour,
  emit: (piece: string) => void,
): Promise<boolean> {
  const { cutAfter, stallAfter } = misbehaviour;
  let sent = 0;
  let stalled = false;
  for (const piece of parts) {
    if (cutAfter !== undefined && sent + piece.length > cutAfter) {
      if (cutAfter > sent) emit(piece.slice(0, cutAfter - sent));
      // The connection drops mid-answer once what was sent has reached the client.
      await new Promise((resolve) => res.write('', resolve));
      await sleep(50);
      res.socket?.destroy();
      return false;
    }
    if (stallAfter && !stalled && sent >= stallAfter.chars) {
      stalled = true;
      await sleep(stallAfter.ms);
      if (res.destroyed) return false;
    }
    emit(piece);
    sent += piece.length;
  }
  return true;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** An answer sent byte for byte (a proxy's page, an empty body): what no provider should send. */
export interface RawAnswer {
  kind: 'raw';
  status: number;
  body: string;
  contentType?: string;
}

export function sendRaw(res: ServerResponse, answer: RawAnswer): void {
  if (res.destroyed) return;
  res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' });
  res.end(answer.body);
}

/** A request as it arrived: its path without the query, its raw body and that body parsed. */
export interface ArrivedRequest {
  path: string;
  raw: string;
  /** The parsed JSON body (undefined when it did not parse or was empty). */
  json: unknown;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/**
 * Starts the server. `handle` answers each request; should it throw, `crashBody(message)` is
 * answered as a 500 (in the double's error shape), so a bug in a double fails loudly.
 */
export async function startLoopbackServer(
  handle: (req: IncomingMessage, res: ServerResponse, arrived: ArrivedRequest) => Promise<void>,
  crashBody: (message: string) => unknown,
): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = raw ? JSON.parse(raw) : undefined;
      } catch {
        json = undefined;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      await handle(req, res, { path, raw, json });
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, crashBody(`double crashed: ${String(error)}`));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
