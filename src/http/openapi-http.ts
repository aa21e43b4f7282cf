/**
 * What the OpenAPI document says of each operation besides its zod schemas: the `Authorization`
 * it needs (the `bearer` scheme), the request headers svc reads (`Project-ID`,
 * `Idempotency-Key`, `If-Match`, `Last-Event-ID`), the `text/event-stream` answer of an
 * operation with a stream, every error status it can answer with the envelope narrowed to
 * that status's codes, the response headers (`X-Request-Id`, `X-Content-Type-Options`, `ETag`,
 * `Idempotent-Replayed`, `Retry-After`, `Cache-Control` on an answer carrying a secret), the other success status a create may answer, and
 * `x-svc-status: not_implemented` (with its 501) for an operation not built yet. Also the routes
 * that are not operations but a client meets without a key (health, metrics, discovery).
 * Added to the document only: requests are still checked by the handlers, whose answers these
 * describe (test/helpers/response-contract.ts holds every answer the tests see to them).
 */
import { API_ERROR_STATUS, type ApiErrorCode } from '../core/errors';
import { jsonSchemaOf } from '../operations/contract';
import { isWrite, type Operation } from '../operations/registry';
import { EVENT_STREAM_TYPE } from './event-stream';

type Json = Record<string, unknown>;

/** The parts of an OpenAPI 3.1 document this module reads and writes. */
export interface OpenApiDocument {
  security?: Record<string, string[]>[];
  components?: {
    schemas?: Record<string, Json>;
    responses?: Record<string, Json>;
    headers?: Record<string, Json>;
    parameters?: Record<string, Json>;
    securitySchemes?: Record<string, Json>;
  };
  paths: Record<string, Record<string, OpenApiOperation>>;
  [key: string]: unknown;
}

export interface OpenApiOperation {
  operationId?: string;
  parameters?: Json[];
  responses: Record<string, Json>;
  security?: Record<string, string[]>[];
  [key: string]: unknown;
}

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

/** When each status is answered, for its component's description. */
const STATUS_MEANING: Record<number, string> = {
  400: 'The request is malformed or invalid: wrong types, unknown fields, bad JSON, a missing `Project-ID`.',
  401: 'No key, or a key that is malformed, unknown or revoked.',
  403: 'The key may not do this, e.g. a project-pinned key changing what the whole workspace sees.',
  404: 'The record, or the project, does not exist for this key.',
  408: 'The request did not arrive in full within the server timeout.',
  409: 'A conflict with the current state; an `Idempotency-Key` reused with other arguments, or still in flight.',
  412: '`If-Match` names a revision that is not the current one.',
  413: 'The body is larger than the limit.',
  415: 'The body is not `application/json`.',
  428: '`If-Match` is missing.',
  431: 'The request headers are larger than the server accepts.',
  500: 'An unexpected failure; the request id names it in the logs.',
  501: 'Not implemented yet.',
  503: 'A dependency is unavailable (the database, the code host); retry later (`Retry-After` when known).',
};

const codesOf = (status: number) =>
  (Object.entries(API_ERROR_STATUS) as [ApiErrorCode, number][])
    .filter(([, s]) => s === status)
    .map(([c]) => c);

function envelopeSchema(codes: readonly string[], description: string): Json {
  return {
    type: 'object',
    description,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'request_id'],
        properties: {
          code: { type: 'string', enum: codes, description: 'Stable error code.' },
          message: { type: 'string', description: 'What went wrong and what to do, for a person.' },
          request_id: { type: 'string', description: 'Names the request in the service logs.' },
          details: { description: 'Structured detail where the code has some (e.g. validation issues).' },
        },
      },
    },
  };
}

const HEADERS: Record<string, Json> = {
  RequestId: {
    description: 'The request id (`req_…`), also in an error body and the service logs.',
    schema: { type: 'string' },
  },
  ContentTypeOptions: {
    description: 'Always `nosniff`: a browser reads the body only as its declared content type.',
    schema: { type: 'string', enum: ['nosniff'] },
  },
  CacheControlNoStore: {
    description: 'The answer carries a secret shown once: no cache may keep it.',
    schema: { type: 'string', enum: ['no-store'] },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying, when the service knows.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  ETag: {
    description: 'The revision of the configuration, quoted (e.g. `"3"`); send it back as `If-Match`.',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    description: 'Present when the answer replays an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** The headers every answer carries, success or error, operation or not. */
const EVERY_ANSWER_HEADERS = {
  'X-Request-Id': ref('headers', 'RequestId'),
  'X-Content-Type-Options': ref('headers', 'ContentTypeOptions'),
};

const PARAMETERS: Record<string, Json> = {
  ProjectId: {
    in: 'header',
    name: 'Project-ID',
    required: false,
    description: 'The project (`prj_…`): required with a workspace key, implied by a project-pinned key.',
    schema: { type: 'string', minLength: 1 },
  },
  IdempotencyKey: {
    in: 'header',
    name: 'Idempotency-Key',
    required: false,
    description:
      'Makes the request safe to retry (1-255 visible characters, kept 24 h): the same key with the same arguments replays the first answer (`Idempotent-Replayed: true`); with other arguments it is 409 `idempotency_conflict`.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  LastEventId: {
    in: 'header',
    name: 'Last-Event-ID',
    required: false,
    description:
      'Resumes an event stream after this event id (the `id` of the last event received): exactly the events after it follow.',
    schema: { type: 'string', minLength: 1, maxLength: 100 },
  },
  IfMatch: {
    in: 'header',
    name: 'If-Match',
    required: true,
    description: 'The revision being changed, quoted as the `ETag` of the read gave it (e.g. `"3"`).',
    schema: { type: 'string' },
  },
};

/** Statuses whose errors any request can meet, before or around its handler. */
const ALWAYS = [400, 408, 431, 500, 503];

/** The error statuses `op` can answer, from what it does. */
export function errorStatuses(op: Operation): number[] {
  const statuses = new Set(ALWAYS);
  if (op.scope !== 'public') {
    statuses.add(401);
    statuses.add(403);
  }
  // A record by id, a project by header, or a record the body names (an installation, a
  // reviewer, a project): only a workspace-wide list without parameters never answers 404.
  if (op.scope !== 'public' && !(op.method === 'GET' && op.scope === 'workspace' && !op.params))
    statuses.add(404);
  if (isWrite(op)) for (const s of [409, 413, 415]) statuses.add(s);
  if (op.ifMatch) for (const s of [412, 428]) statuses.add(s);
  if (op.notImplemented) statuses.add(501);
  return [...statuses].sort((a, b) => a - b);
}

/** Every error status the document names, for the components. */
const ALL_ERROR_STATUSES = [400, 401, 403, 404, 408, 409, 412, 413, 415, 428, 431, 500, 501, 503];

function components() {
  const schemas: Record<string, Json> = {
    Error: envelopeSchema(Object.keys(API_ERROR_STATUS), 'The error envelope every non-2xx answer carries.'),
  };
  const responses: Record<string, Json> = {};
  for (const status of ALL_ERROR_STATUSES) {
    const description = STATUS_MEANING[status] ?? '';
    schemas[`Error${status}`] = envelopeSchema(codesOf(status), `The error envelope of a ${status}.`);
    responses[`Error${status}`] = {
      description: `${description} Codes: ${codesOf(status)
        .map((c) => `\`${c}\``)
        .join(', ')}.`,
      headers: {
        ...EVERY_ANSWER_HEADERS,
        ...(status === 503 ? { 'Retry-After': ref('headers', 'RetryAfter') } : {}),
      },
      content: { 'application/json': { schema: ref('schemas', `Error${status}`) } },
    };
  }
  return { schemas, responses, headers: HEADERS, parameters: PARAMETERS };
}

/** The read of a revisioned configuration is the GET at the path its `If-Match` edits use. */
function carriesETag(op: Operation, operations: readonly Operation[]): boolean {
  return (
    op.ifMatch === true || (op.method === 'GET' && operations.some((o) => o.ifMatch && o.path === op.path))
  );
}

function successHeaders(op: Operation, operations: readonly Operation[]): Json {
  return {
    ...EVERY_ANSWER_HEADERS,
    ...(op.answersSecret ? { 'Cache-Control': ref('headers', 'CacheControlNoStore') } : {}),
    ...(carriesETag(op, operations) ? { ETag: ref('headers', 'ETag') } : {}),
    ...(isWrite(op) && op.scope !== 'public'
      ? { 'Idempotent-Replayed': ref('headers', 'IdempotentReplayed') }
      : {}),
  };
}

const SUCCESS_MEANING: Record<number, string> = {
  200: 'OK.',
  201: 'Created.',
  202: 'Accepted: the work is a task; poll it.',
  204: 'Done; no body.',
};

function requestParameters(op: Operation): Json[] {
  const parameters: Json[] = [];
  if (op.scope === 'project') parameters.push(ref('parameters', 'ProjectId'));
  if (isWrite(op) && op.scope !== 'public') parameters.push(ref('parameters', 'IdempotencyKey'));
  if (op.ifMatch) parameters.push(ref('parameters', 'IfMatch'));
  if (op.eventStream) parameters.push(ref('parameters', 'LastEventId'));
  return parameters;
}

/** One operation's entry, completed: header parameters, every status, response headers, marker. */
function documentOperation(entry: OpenApiOperation, op: Operation, operations: readonly Operation[]) {
  const parameters = (entry.parameters ?? []).filter((p) => p.in !== 'header');
  entry.parameters = [...parameters, ...requestParameters(op)];
  if (entry.parameters.length === 0) delete entry.parameters;

  const status = op.status ?? 200;
  const success = entry.responses[String(status)] ?? {};
  const documented: Json = {
    ...success,
    description:
      success.description && success.description !== 'Default Response'
        ? success.description
        : (SUCCESS_MEANING[status] ?? 'Success.'),
    headers: successHeaders(op, operations),
  };
  if (status === 204) delete documented.content;
  if (op.eventStream) documented.content = { ...(documented.content as Json), ...eventStreamContent(op) };
  const responses: Record<string, Json> = { [status]: documented };
  if (op.alternateStatus)
    responses[op.alternateStatus] = {
      ...documented,
      description: 'The record was already there; this is it, unchanged.',
    };
  for (const s of errorStatuses(op)) responses[s] = ref('responses', `Error${s}`);
  entry.responses = responses;

  entry.security = op.scope === 'public' ? [] : [{ bearer: [] }];
  if (op.notImplemented) entry['x-svc-status'] = 'not_implemented';
}

/**
 * The `text/event-stream` answer of an operation with a stream: OpenAPI 3.1 can only call the
 * body a string, so the schema of each event's `data` is given beside it (`x-svc-event-data`).
 */
function eventStreamContent(op: Operation): Json {
  return {
    [EVENT_STREAM_TYPE]: {
      schema: {
        type: 'string',
        description:
          'Server-Sent Events, sent when the request accepts `text/event-stream`: each event has an `id`, an `event` name and one line of JSON `data` (`x-svc-event-data`); comment lines keep the connection open.',
      },
      'x-svc-event-data': jsonSchemaOf(op.eventStream?.event, 'output'),
    },
  };
}

/**
 * Routes a client meets without a key that are not operations of the declaration (no tool):
 * mounted in src/http/ops-routes.ts and src/http/discovery.ts. Documented here so a generated
 * client has them and the response contract checks their answers too.
 */
export const PUBLIC_ROUTES: Record<string, Record<string, OpenApiOperation>> = {
  '/healthz': {
    get: {
      operationId: 'service_health',
      summary: 'Liveness: whether the process answers and its database does.',
      tags: ['service'],
      security: [],
      responses: {
        200: {
          description: 'The process and its database answer.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['status', 'database'],
                properties: { status: { type: 'string', enum: ['ok'] }, database: { type: 'string' } },
              },
            },
          },
        },
        503: {
          description: 'The database does not answer.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['status', 'database', 'error'],
                properties: {
                  status: { type: 'string', enum: ['unavailable'] },
                  database: { type: 'string' },
                  error: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'service_metrics',
      summary: 'Prometheus metrics, in the text exposition format.',
      tags: ['service'],
      security: [],
      responses: {
        200: { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
      },
    },
  },
  '/api/v1/openapi.json': {
    get: {
      operationId: 'service_openapi',
      summary: 'This document.',
      tags: ['service'],
      security: [],
      responses: {
        200: {
          description: 'The OpenAPI 3.1 document, with `info.x-contract-hash`.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['openapi', 'info', 'paths'],
                properties: {
                  openapi: { type: 'string' },
                  info: {
                    type: 'object',
                    required: ['x-contract-hash'],
                    properties: { 'x-contract-hash': { type: 'string' } },
                  },
                  paths: { type: 'object' },
                },
              },
            },
          },
        },
      },
    },
  },
  '/api/v1/tools': {
    get: {
      operationId: 'service_tools',
      summary: 'The tool catalog: every operation as a model tool, with its input schema.',
      tags: ['service'],
      security: [],
      responses: {
        200: {
          description: 'The catalog and the contract hash the OpenAPI document carries.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['tools', 'contract_hash'],
                properties: {
                  tools: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['name', 'description', 'method', 'path', 'input_schema'],
                      properties: {
                        name: { type: 'string' },
                        description: { type: 'string' },
                        method: { type: 'string', enum: ['GET', 'POST', 'PATCH', 'DELETE'] },
                        path: { type: 'string' },
                        input_schema: { type: 'object' },
                      },
                    },
                  },
                  contract_hash: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
  },
};

/**
 * The document as fastify-swagger made it from the zod schemas, completed with what the handlers
 * read and answer besides them. Mutates and returns `doc`.
 */
export function withHttpContract(doc: OpenApiDocument, operations: readonly Operation[]): OpenApiDocument {
  const byTool = new Map(operations.map((op) => [op.tool, op]));
  for (const item of Object.values(doc.paths)) {
    for (const entry of Object.values(item)) {
      const op = entry.operationId ? byTool.get(entry.operationId) : undefined;
      if (op) documentOperation(entry, op, operations);
    }
  }
  const added = components();
  const existing = doc.components ?? {};
  doc.components = {
    ...existing,
    schemas: { ...existing.schemas, ...added.schemas },
    responses: { ...existing.responses, ...added.responses },
    headers: { ...existing.headers, ...added.headers },
    parameters: { ...existing.parameters, ...added.parameters },
  };
  // Every operation needs the key unless it says otherwise (`security: []` on the public routes).
  doc.security = [{ bearer: [] }];
  for (const [path, item] of Object.entries(structuredClone(PUBLIC_ROUTES))) {
    for (const entry of Object.values(item)) {
      for (const response of Object.values(entry.responses)) response.headers = { ...EVERY_ANSWER_HEADERS };
      for (const s of [400, 408, 431, 500]) entry.responses[s] ??= ref('responses', `Error${s}`);
    }
    doc.paths[path] = { ...doc.paths[path], ...item };
  }
  return doc;
}
