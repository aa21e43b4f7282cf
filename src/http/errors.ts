/**
 * The one place where errors become responses: every non-2xx body is the envelope
 * `{"error":{"code","message","request_id","details"?}}`.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { API_ERROR_STATUS, ApiError, type ApiErrorCode } from '../core/errors';
import { isConnectionLost } from '../storage/database';
import { NOSNIFF } from './security-headers';

export interface ErrorEnvelope {
  error: { code: string; message: string; request_id: string; details?: unknown };
}

export function envelope(
  code: ApiErrorCode,
  message: string,
  requestId: string,
  details?: unknown,
): ErrorEnvelope {
  return { error: { code, message, request_id: requestId, ...(details === undefined ? {} : { details }) } };
}

/** Maps Fastify's own errors (body parsing, limits) onto our stable codes. */
function fromFastify(error: FastifyError): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', `request body is larger than the limit: ${error.message}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'unsupported_media_type',
        'request bodies must be sent as Content-Type: application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'Content-Type is application/json but the body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', `request body is not valid JSON: ${error.message}`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('validation_failed', 'Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
      return new ApiError('validation_failed', 'the URL is not valid percent-encoded UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('validation_failed', 'a path parameter is longer than any id svc issues');
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new ApiError('invalid_json', `request body is not valid JSON: ${error.message}`);
  }
  return null;
}

/** What a request refused for a lost database connection is told to wait: about a restart's length. */
const DATABASE_RETRY_AFTER_S = 2;

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = error.validation.map((v) => ({
      where: error.validationContext,
      path: v.instancePath || '/',
      message: v.message,
      ...(v.params && typeof v.params === 'object' ? { params: v.params } : {}),
    }));
    const first = issues[0];
    return new ApiError(
      'validation_failed',
      `invalid ${error.validationContext ?? 'request'}: ${first ? `${first.path} ${first.message}` : 'does not match the schema'}`,
      { issues },
    );
  }
  if (isResponseSerializationError(error)) {
    return new ApiError('internal', 'the service produced a response that breaks its own contract');
  }
  const fastifyError = error as FastifyError;
  if (typeof fastifyError?.code === 'string') {
    const mapped = fromFastify(fastifyError);
    if (mapped) return mapped;
    if (fastifyError.statusCode === 404) return new ApiError('not_found', fastifyError.message);
  }
  // A restart or failover of the database is the platform's fault and passes: say so, not 500.
  if (isConnectionLost(error)) {
    return new ApiError(
      'database_unavailable',
      `the database is unavailable (restarting or unreachable); retry in ${DATABASE_RETRY_AFTER_S} s`,
    );
  }
  return new ApiError('internal', 'internal error; the request id identifies it in the service logs');
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: unknown) {
  const apiError = toApiError(error);
  if (apiError.code === 'internal') request.log.error({ err: error }, 'request failed');
  else if (apiError.code === 'database_unavailable') request.log.warn({ err: error }, apiError.message);
  else request.log.info({ code: apiError.code }, apiError.message);
  if (apiError.code === 'database_unavailable') reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
  // Also here: an answer to a URL Fastify cannot route (frameworkErrors) passes no onSend hook.
  reply.header(NOSNIFF.name, NOSNIFF.value);
  return reply
    .code(API_ERROR_STATUS[apiError.code])
    .type('application/json')
    .send(envelope(apiError.code, apiError.message, request.id, apiError.details));
}

export const newRequestId = () => `req_${randomBytes(9).toString('base64url')}`;

const CLIENT_ERRORS: Record<string, { code: ApiErrorCode; status: number; reason: string; message: string }> =
  {
    HPE_HEADER_OVERFLOW: {
      code: 'request_header_fields_too_large',
      status: 431,
      reason: 'Request Header Fields Too Large',
      message: 'the request headers are larger than the server accepts',
    },
    ERR_HTTP_REQUEST_TIMEOUT: {
      code: 'request_timeout',
      status: 408,
      reason: 'Request Timeout',
      message: "the request did not arrive in full within the server's request timeout",
    },
  };

/**
 * Answers what Node's HTTP parser refused before Fastify saw a request (oversized headers,
 * broken framing, a request that timed out), in the error envelope, then closes the connection:
 * after a framing error the connection's next bytes cannot be trusted.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  const answer = known ?? {
    code: 'validation_failed' as const,
    status: 400,
    reason: 'Bad Request',
    message: `the request is not valid HTTP/1.1 (${error.code ?? 'unparsable'})`,
  };
  const body = JSON.stringify(envelope(answer.code, answer.message, newRequestId()));
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Type: application/json\r\n${NOSNIFF.name}: ${NOSNIFF.value}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
