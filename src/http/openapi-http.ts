/**
 * What the OpenAPI document says of each operation besides its zod schemas: the request
 * headers svc reads (`Project-ID`, `Idempotency-Key`, `If-Match`), the error statuses it can
 * answer with their envelope, the response headers (`ETag`, `Idempotent-Replayed`), and
 * `x-svc-status: not_implemented` (with its 501) for an operation not built yet. Added to the
 * document only: requests are still checked by the handlers, whose error codes these describe.
 */
import { API_ERROR_STATUS } from '../core/errors';
import { isWrite, type Operation } from '../operations/registry';

const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: { type: 'string', enum: Object.keys(API_ERROR_STATUS), description: 'Stable error code.' },
        message: { type: 'string', description: 'What went wrong and what to do, for a person.' },
        request_id: { type: 'string' },
        details: { description: 'Structured detail where the code has some (e.g. validation issues).' },
      },
    },
  },
} as const;

/** The error statuses an operation can answer, by what it does. */
function errorStatuses(op: Operation): Record<number, string> {
  const statuses: Record<number, string> = {
    400: 'The request is malformed or invalid (`validation_failed`, `invalid_json`, `project_required`).',
    500: 'An unexpected failure (`internal`); the request id names it in the logs.',
    503: 'A dependency is unavailable (database, code host); retry later.',
  };
  if (op.scope !== 'public') {
    statuses[401] = 'No key, or a key that is unknown or revoked (`unauthenticated`).';
    statuses[403] = 'The key may not do this (`forbidden`), e.g. a project-pinned key on a workspace change.';
    statuses[429] = 'Too many requests (`rate_limited`).';
  }
  if (op.params || op.scope === 'project')
    statuses[404] = 'The record or project does not exist for this key (`not_found`).';
  if (isWrite(op)) {
    statuses[409] = 'A conflict with the current state, or an Idempotency-Key reused with other arguments.';
    statuses[413] = 'The body is larger than the limit (`payload_too_large`).';
    statuses[415] = 'The body is not JSON (`unsupported_media_type`).';
  }
  if (op.ifMatch) {
    statuses[412] = 'If-Match names a revision that is not the current one (`precondition_failed`).';
    statuses[428] = 'If-Match is missing (`precondition_required`).';
  }
  if (op.notImplemented) statuses[501] = 'Not implemented yet (`not_implemented`).';
  return statuses;
}

/** Request headers, as a JSON Schema object fastify-swagger turns into header parameters. */
function requestHeaders(op: Operation) {
  const properties: Record<string, { type: 'string'; description: string }> = {};
  const required: string[] = [];
  if (op.scope === 'project')
    properties['project-id'] = {
      type: 'string',
      description: 'The project (`prj_…`); required with a workspace key, implied by a project-pinned key.',
    };
  if (isWrite(op) && op.scope !== 'public')
    properties['idempotency-key'] = {
      type: 'string',
      description:
        'Makes the request safe to retry: the same key with the same arguments replays the first answer (`Idempotent-Replayed: true`); with other arguments it is 409 `idempotency_conflict`.',
    };
  if (op.ifMatch) {
    properties['if-match'] = {
      type: 'string',
      description: 'The revision being changed, quoted as the ETag of the read gave it (e.g. "3").',
    };
    required.push('if-match');
  }
  return Object.keys(properties).length > 0 ? { type: 'object', properties, required } : undefined;
}

const successHeaders = (op: Operation) => ({
  ...(op.ifMatch || op.method === 'GET'
    ? {
        etag: {
          type: 'string',
          description: 'The revision of a revisioned configuration, where it has one.',
        },
      }
    : {}),
  ...(isWrite(op) && op.scope !== 'public'
    ? {
        'idempotent-replayed': {
          type: 'string',
          enum: ['true'],
          description:
            'Present when the answer is the replay of an earlier request with the same Idempotency-Key.',
        },
      }
    : {}),
});

/**
 * The route schema as fastify-swagger should document it: `schema` (already JSON Schema, from
 * the zod transform) with the headers, error responses and status marker of `op`.
 */
export function withHttpContract(op: Operation, schema: Record<string, unknown>): Record<string, unknown> {
  const response = { ...((schema.response as Record<string, Record<string, unknown>> | undefined) ?? {}) };
  const success = String(op.status ?? 200);
  const headers = successHeaders(op);
  if (response[success] && Object.keys(headers).length > 0)
    response[success] = { ...response[success], headers };
  for (const [status, description] of Object.entries(errorStatuses(op)))
    response[status] = { description, ...errorEnvelope };
  const header = requestHeaders(op);
  return {
    ...schema,
    ...(header ? { headers: header } : {}),
    response,
    ...(op.notImplemented ? { 'x-svc-status': 'not_implemented' } : {}),
  };
}
