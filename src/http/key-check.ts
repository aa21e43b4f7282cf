/**
 * API keys are checked from the headers, in an onRequest hook, before a byte of the body is
 * read: a request without a valid key is answered 401 without buffering its body (up to
 * SVC_BODY_LIMIT each), and its connection is closed after a short linger rather than drained.
 * The principal found is kept for the route's handler, which does not look the key up again.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import type { Principal } from '../core/keys';
import type { Services } from '../operations/services';
import { authenticate } from './auth';
import { LOOKUP_RETRY_AFTER_S, LookupGate } from './lookup-gate';
import { describeBadQueryEncoding, describeUnsafeInput } from './unsafe-strings';

const principals = new WeakMap<FastifyRequest, Principal>();
const gates = new WeakMap<Services, LookupGate>();

/** The lookup cap shared by every route of these services (REST operations and MCP). */
export function keyLookupGate(services: Services): LookupGate {
  let gate = gates.get(services);
  if (!gate) {
    gate = new LookupGate(services.config.keyLookupConcurrency);
    gates.set(services, gate);
  }
  return gate;
}

/** An onRequest hook for the routes that need a key; the handler reads it with principalOf. */
export function requireKey(services: Services) {
  const gate = keyLookupGate(services);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // What the app's preValidation refuses 400 from anyone (an unsafe header, the Authorization
    // header included) is refused first here too: checking the key earlier must not change what
    // a malformed request is told. Only the body is judged after the key.
    const problem =
      describeBadQueryEncoding(request.url) ??
      describeUnsafeInput(request.params, 'path') ??
      describeUnsafeInput(request.query, 'query') ??
      describeUnsafeInput(request.headers, 'header');
    if (problem) throw new ApiError('validation_failed', problem);
    try {
      principals.set(
        request,
        await authenticate(services.db, request.headers.authorization, services.config.keyCacheMs, gate),
      );
    } catch (error) {
      if (isBusy(error)) {
        reply.header('retry-after', String(LOOKUP_RETRY_AFTER_S));
      }
      throw error;
    }
  };
}

/** The principal requireKey verified for this request. */
export function principalOf(request: FastifyRequest): Principal {
  const principal = principals.get(request);
  // A route that reads a principal without the hook is a wiring bug, not a client's fault.
  if (!principal)
    throw new Error(
      `no verified key for ${request.method} ${request.url}: requireKey is not a hook of this route`,
    );
  return principal;
}

const isBusy = (error: unknown) => (error as { code?: string }).code === 'authentication_busy';
