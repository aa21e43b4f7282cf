/**
 * Provider errors as the spec's named run failure classes.
 *
 * | what happened                                              | code                       |
 * |------------------------------------------------------------|----------------------------|
 * | HTTP 429                                                   | provider_rate_limited      |
 * | HTTP 401, 403                                              | provider_auth_failed       |
 * | HTTP 404; any status whose error says the model is unknown | model_not_available        |
 * | HTTP 408, 409, 5xx; connection refused/reset before answer | provider_transient         |
 * | an error event inside the streamed answer                  | provider_transient         |
 * | the model sent nothing for the call's time limit           | instruction_timeout        |
 * | the streamed answer's connection broke mid-answer          | stream_transport_failed    |
 * | any other 4xx (400 context too long, 413, 422, …)          | provider_terminal          |
 * | a 2xx whose body is not the provider's protocol             | provider_terminal          |
 * | an answer that is not JSON, or not the findings schema,    | payload_contract_violation |
 * | or empty / cut off / refused                               |                            |
 * | anything else                                              | unknown                    |
 */
import { APICallError, NoObjectGeneratedError, NoOutputGeneratedError } from 'ai';
import { RunFailure } from '../../core/failures';
import { credentialVariable, type ProviderKind } from './providers';

export interface ProviderContext {
  provider: string;
  kind: ProviderKind;
  model: string;
}

/** Seconds to wait, from `retry-after-ms` or `retry-after` (seconds or an HTTP date); null when absent. */
export function retryAfterSeconds(headers: Record<string, string> | undefined): number | null {
  if (!headers) return null;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number.parseFloat(lower['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const raw = lower['retry-after'];
  if (raw === undefined) return null;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

/** The provider's own error message and code from an OpenAI- or Anthropic-style error body. */
function providerError(error: APICallError): {
  message: string | null;
  code: string | null;
  type: string | null;
} {
  let body: unknown = error.data;
  if (body === undefined && error.responseBody) {
    try {
      body = JSON.parse(error.responseBody);
    } catch {
      body = undefined;
    }
  }
  const inner =
    body && typeof body === 'object' && 'error' in body ? (body as { error: unknown }).error : (body ?? null);
  if (typeof inner === 'string') return { message: inner, code: null, type: null };
  if (!inner || typeof inner !== 'object') {
    return { message: error.responseBody ? error.responseBody.slice(0, 500) : null, code: null, type: null };
  }
  const record = inner as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
  return { message: str(record.message), code: str(record.code), type: str(record.type) };
}

const MODEL_UNKNOWN =
  /model[\s\S]{0,200}(not found|does not exist|not exist|unknown|not available|not supported|no such)/i;

function isModelUnknown(info: { message: string | null; code: string | null; type: string | null }): boolean {
  if (info.code === 'model_not_found' || info.type === 'model_not_found') return true;
  // Anthropic answers an unknown model with not_found_error "model: <id>".
  if (info.type === 'not_found_error' && /^model: /.test(info.message ?? '')) return true;
  return info.message !== null && MODEL_UNKNOWN.test(info.message);
}

export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 409 || status >= 500;
}

/**
 * A marker for a call that ran out of its time (our own timeout, not the caller's abort): the
 * model sent nothing for `timeoutMs`, before its first token or between two streamed parts.
 */
export class CallTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    /** Characters of the answer that had arrived when it went silent. */
    readonly receivedChars: number,
  ) {
    super(
      receivedChars === 0
        ? `the model sent nothing within ${timeoutMs} ms`
        : `the model went silent for ${timeoutMs} ms after ${receivedChars} characters of its answer`,
    );
    this.name = 'CallTimeoutError';
  }
}

/** The streamed answer's connection broke after the answer had started (not a provider error). */
export class StreamBrokenError extends Error {
  constructor(
    readonly receivedChars: number,
    cause: unknown,
  ) {
    super(`the streamed answer broke off after ${receivedChars} characters: ${describe(cause)}`, { cause });
    this.name = 'StreamBrokenError';
  }
}

/** An error event the provider sent inside its stream (`{"error": {...}}`), not an Error. */
export class StreamErrorEvent extends Error {
  constructor(readonly event: unknown) {
    super(`the provider reported an error mid-stream: ${describe(event)}`);
    this.name = 'StreamErrorEvent';
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) {
    const cause = value.cause instanceof Error ? ` (${value.cause.message})` : '';
    return `${value.name}: ${value.message}${cause}`;
  }
  if (value && typeof value === 'object') {
    const message =
      (value as { message?: unknown; error?: { message?: unknown } }).message ??
      (value as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message;
    return JSON.stringify(value).slice(0, 300);
  }
  return String(value);
}

/** `error` from one model call as a RunFailure naming its class. */
export function toRunFailure(error: unknown, ctx: ProviderContext): RunFailure {
  if (error instanceof RunFailure) return error;
  const where = `${ctx.provider}/${ctx.model}`;
  const base = { provider: ctx.provider, model: ctx.model };

  if (NoObjectGeneratedError.isInstance(error)) {
    const cutOff = error.finishReason === 'length';
    const why = cutOff
      ? 'the answer was cut off at the output token limit'
      : error.text === undefined || error.text.trim() === ''
        ? 'the answer was empty'
        : error.message;
    return new RunFailure(
      'payload_contract_violation',
      `${where} did not answer with valid findings JSON: ${why}`,
      {
        ...base,
        finish_reason: error.finishReason ?? null,
        answer_excerpt: error.text?.slice(0, 500) ?? null,
        cause: error.cause instanceof Error ? error.cause.message.slice(0, 1000) : null,
      },
    );
  }
  if (NoOutputGeneratedError.isInstance(error)) {
    return new RunFailure(
      'payload_contract_violation',
      `${where} gave no answer (empty, refused, or cut off): ${error.message}`,
      base,
    );
  }
  if (error instanceof CallTimeoutError) {
    return new RunFailure('instruction_timeout', `${where}: ${error.message}`, {
      ...base,
      timeout_ms: error.timeoutMs,
      received_chars: error.receivedChars,
    });
  }
  if (error instanceof StreamBrokenError) {
    return new RunFailure('stream_transport_failed', `${where}: ${error.message}`, {
      ...base,
      received_chars: error.receivedChars,
    });
  }
  if (error instanceof StreamErrorEvent) {
    return new RunFailure('provider_transient', `${where}: ${error.message}`, base);
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const info = providerError(error);
    const said = info.message ? `: ${info.message}` : '';
    const details = { ...base, status: status ?? null, provider_code: info.code, url: error.url };
    if (status === undefined) {
      return new RunFailure(
        'provider_transient',
        `${where} could not be reached${said || `: ${error.message}`}`,
        details,
      );
    }
    if (status === 429) {
      const retryAfter = retryAfterSeconds(error.responseHeaders);
      return new RunFailure('provider_rate_limited', `${where} rate-limited the request (HTTP 429)${said}`, {
        ...details,
        retry_after_s: retryAfter,
      });
    }
    if (status === 401 || status === 403) {
      return new RunFailure(
        'provider_auth_failed',
        `${where} refused the credentials (HTTP ${status})${said}; check ${credentialVariable(ctx.kind)}`,
        { ...details, env_var: credentialVariable(ctx.kind) },
      );
    }
    if (status === 404 || (status >= 400 && status < 500 && isModelUnknown(info))) {
      // A 404 that does not name the model may be a wrong base URL (one without `/v1`).
      const hint = isModelUnknown(info) ? '' : `; check the model id and that ${error.url} is the API's URL`;
      return new RunFailure(
        'model_not_available',
        `model '${ctx.model}' is not available at provider '${ctx.provider}' (HTTP ${status})${said}${hint}`,
        details,
      );
    }
    if (isTransientStatus(status)) {
      return new RunFailure('provider_transient', `${where} failed (HTTP ${status})${said}`, details);
    }
    if (status >= 400 && status < 500) {
      return new RunFailure(
        'provider_terminal',
        `${where} rejected the request (HTTP ${status})${said}`,
        details,
      );
    }
    return new RunFailure(
      'provider_terminal',
      `${where} answered HTTP ${status} with a body outside its protocol: ${error.message}`,
      details,
    );
  }
  if (
    error instanceof Error &&
    /InvalidResponseData|EmptyResponseBody|TypeValidation|JSONParse/.test(error.name)
  ) {
    // The HTTP body itself (not the model's answer) was not the provider's protocol.
    return new RunFailure(
      'provider_terminal',
      `${where} answered outside its protocol: ${error.message}`,
      base,
    );
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new RunFailure('unknown', `${where} call failed: ${message}`, base);
}
