/**
 * Headers for browsers and caches between svc and its clients. Every answer says
 * `X-Content-Type-Options: nosniff`: a browser never reads a JSON error, a finding's text or a
 * console file as something it would run. An answer that carries a secret (a new key) says
 * `Cache-Control: no-store`, so no cache on the way keeps it. The OpenAPI document declares both
 * (src/http/openapi-http.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Operation } from '../operations/registry';

export const NOSNIFF = { name: 'x-content-type-options', value: 'nosniff' } as const;

export function addSecurityHeaders(app: FastifyInstance, operations: readonly Operation[]): void {
  const answeringSecrets = new Set(operations.filter((op) => op.answersSecret).map((op) => op.tool));
  // onSend: every answer Fastify sends passes here, errors and the 404 handler's included. (The
  // MCP route writes its own answer and the HTTP parser's refusals never reach Fastify: both set
  // the header themselves.)
  app.addHook('onSend', async (request, reply) => {
    reply.header(NOSNIFF.name, NOSNIFF.value);
    if (reply.statusCode < 300 && answeringSecrets.has(operationOf(request) ?? '')) {
      reply.header('cache-control', 'no-store');
    }
  });
}

function operationOf(request: FastifyRequest): string | undefined {
  return (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
}
