/**
 * Errors sent to API clients: stable codes, each with exactly one HTTP status.
 * Internal failures never leak their text; they become `internal`.
 */
export const API_ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  project_required: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  operation_in_progress: 409,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  precondition_required: 428,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal: 500,
  not_implemented: 501,
  /** GITHUB_WEBHOOK_SECRET is unset: the receiver cannot verify deliveries, so it takes none. */
  webhooks_not_configured: 503,
  /** The webhook route's in-flight body budget (SVC_WEBHOOK_INFLIGHT_BYTES) is spent: retry later. */
  webhooks_busy: 503,
  /** The repository is on the code host, but the service may not read it (permissions, ownership). */
  repository_unreadable: 503,
  /** The code host could not be reached, or the service has no client for the project's installation. */
  code_host_unavailable: 503,
  /** Too many unverified API keys are being looked up at once (SVC_KEY_LOOKUP_CONCURRENCY): retry later. */
  authentication_busy: 503,
  /** The database dropped or refused the connection (a restart, a failover): retry after `Retry-After`. */
  database_unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = API_ERROR_STATUS[code];
  }
}

export const notFound = (what: string, id: string) =>
  new ApiError('not_found', `${what} ${id} was not found`);

/** An operation whose behaviour belongs to a later issue answers this, by name, instead of pretending. */
export const notImplemented = (tool: string) =>
  new ApiError('not_implemented', `${tool} is not implemented yet; see the README's "Not yet there" list`);
