/**
 * Answering a request before its body arrived (a refusal from the headers: no key, no
 * signature, no room, too slow) must not cost reading that body: the connection is closed after
 * the answer, with a short linger so the answer is not lost to a reset.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a connection answered before its body arrived still drains what the client sends. */
const LINGER_MS = 2_000;

/**
 * Replaces the plain close Node makes after a `Connection: close` answer with a lingering one
 * (as web servers do): the answer and a FIN go out, what the client is still sending is read and
 * dropped for at most LINGER_MS, then the socket is destroyed. Closing at once, with the
 * client's unread bytes in the kernel buffer, sends a reset that can destroy the answer before
 * the client reads it. Nothing is buffered while lingering.
 */
export function closeAfterLinger(raw: IncomingMessage): void {
  const socket = raw.socket;
  socket.destroySoon = () => {
    raw.unpipe();
    raw.resume();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

/**
 * An onSend hook: an answer sent before the whole body arrived closes the connection (after the
 * linger); otherwise Node would read and discard the rest of that body for as long as it takes.
 */
export async function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // `complete` is false while a socket's body is still arriving; an injected request (app.inject)
  // has no socket and leaves it undefined.
  if (request.raw.complete !== false) return;
  reply.header('connection', 'close');
  closeAfterLinger(request.raw);
}
