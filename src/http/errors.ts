/**
 * The one place where errors become responses: every non-2xx body is the envelope
 * `{"error":{"code","message","request_id","details"?}}`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { API_ERROR_STATUS, ApiError, type ApiErrorCode } from '../core/errors';

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
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new ApiError('invalid_json', `request body is not valid JSON: ${error.message}`);
  }
  return null;
}

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
  return new ApiError('internal', 'internal error; the request id identifies it in the service logs');
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: unknown) {
  const apiError = toApiError(error);
  if (apiError.code === 'internal') request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: apiError.code }, apiError.message);
  return reply
    .code(API_ERROR_STATUS[apiError.code])
    .type('application/json')
    .send(envelope(apiError.code, apiError.message, request.id, apiError.details));
}
