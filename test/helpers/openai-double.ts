/**
 * A local stand-in for an OpenAI-compatible server: a real HTTP server on 127.0.0.1 (ephemeral
 * port) serving `POST /v1/chat/completions`, for tests of the LLM reviewer engine.
 *
 * It checks every request the way the real API would and answers 400 (or 401/404/415) with an
 * OpenAI-style error body `{"error":{"message","type","param","code"}}` for a request the real API
 * would reject, so a malformed request fails the test that sent it; each rejection is also kept in
 * `rejections` for assertions.
 *
 * What it checks, and against what: no machine-readable OpenAI API description is published on
 * the npm registry (the official OpenAPI document lives only in the openai/openai-openapi
 * repository, which this machine cannot reach; the `openai` package's TypeScript types are not a
 * description), so the request schema below is encoded in zod by hand from the published API
 * reference for "Create chat completion" and the Structured Outputs guide:
 * - `Authorization: Bearer <key>` present (and equal to the configured key, when one is set);
 * - `Content-Type: application/json` and a body that parses as a JSON object;
 * - the body's fields: `model` and `messages` required; only documented request fields (an unknown
 *   field is "Unrecognized request argument supplied"); documented ranges (temperature 0..2,
 *   top_p 0..1, penalties -2..2, stop ≤ 4, …);
 * - each message's role (`developer`, `system`, `user`, `assistant`, `tool`, `function`) and the
 *   content shapes that role allows (string or typed parts: text, image_url, input_audio, file,
 *   refusal);
 * - `response_format`: `text` | `json_object` | `json_schema` with `json_schema.name` matching
 *   ^[a-zA-Z0-9_-]{1,64}$, and when `strict` is true the strict-mode subset of JSON Schema: the
 *   root is an object, every object has `additionalProperties: false` and lists every property
 *   in `required`, no unsupported keywords (allOf, not, if/then/else, dependentRequired,
 *   dependentSchemas, patternProperties, unevaluatedProperties, propertyNames, min/maxProperties),
 *   nesting ≤ 10 levels, ≤ 5000 properties;
 * - `model` is one the server serves (else 404 `model_not_found`, as the API answers).
 * The Responses API (`/v1/responses`) is not served: the engine uses Chat Completions for every
 * OpenAI-protocol provider, so a request there is a defect and gets 404.
 *
 * Streaming (`stream: true`) is served as the API does: `text/event-stream` of
 * `chat.completion.chunk` objects (the first delta carries the role, the content follows in
 * pieces, then a chunk with `finish_reason`, then, when `stream_options.include_usage` is set, a
 * chunk with empty `choices` and the usage), ended by `data: [DONE]`. A streamed answer can be made
 * to break (`cutAfter`: the socket is destroyed after that many characters of content) or to
 * stall (`stallAfter`: nothing more is sent for a while after that many characters).
 *
 * Answers are scripted: a queue (`enqueue`) of canned answers — findings JSON, raw text (e.g.
 * malformed JSON), HTTP errors (429 with retry-after, 401, 404 model_not_found, 500), a delay
 * before any of them — then `fallback` (by default a 500 saying the queue is empty). Every request
 * is recorded in `requests`. The server, the JSON answers and the broken or stalled stream are
 * ./model-double-server.ts, shared with the Anthropic double (./anthropic-double.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  pieces,
  type RawAnswer,
  type StreamMisbehaviour,
  sendJson,
  sendRaw,
  sleep,
  startLoopbackServer,
  streamPieces,
} from './model-double-server';

// ---------------------------------------------------------------------------------------------
// The request schema (Create chat completion), from the API reference.

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const refusalPart = z.strictObject({ type: z.literal('refusal'), refusal: z.string() });
const imagePart = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({ url: z.string(), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const audioPart = z.strictObject({
  type: z.literal('input_audio'),
  input_audio: z.strictObject({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
});
const filePart = z.strictObject({
  type: z.literal('file'),
  file: z.strictObject({
    file_data: z.string().optional(),
    file_id: z.string().optional(),
    filename: z.string().optional(),
  }),
});

const textContent = z.union([z.string(), z.array(textPart).min(1)]);

const toolCall = z.strictObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('developer'), content: textContent, name: z.string().optional() }),
  z.strictObject({ role: z.literal('system'), content: textContent, name: z.string().optional() }),
  z.strictObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.union([textPart, imagePart, audioPart, filePart])).min(1)]),
    name: z.string().optional(),
  }),
  z
    .strictObject({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(z.union([textPart, refusalPart])).min(1)]).nullish(),
      refusal: z.string().nullish(),
      name: z.string().optional(),
      audio: z.strictObject({ id: z.string() }).nullish(),
      tool_calls: z.array(toolCall).optional(),
      function_call: z.strictObject({ name: z.string(), arguments: z.string() }).nullish(),
    })
    .refine((m) => m.content != null || m.tool_calls !== undefined || m.function_call != null, {
      message: 'an assistant message needs content unless it has tool_calls or function_call',
    }),
  z.strictObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string() }),
  z.strictObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() }),
]);

const jsonSchemaFormat = z.strictObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$'),
  description: z.string().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});

const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({ type: z.literal('json_schema'), json_schema: jsonSchemaFormat }),
]);

const functionTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

export const chatCompletionRequestSchema = z.strictObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  audio: z.record(z.string(), z.unknown()).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  function_call: z.unknown().optional(),
  functions: z.array(z.unknown()).optional(),
  logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
  logprobs: z.boolean().nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  modalities: z.array(z.enum(['text', 'audio'])).nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  parallel_tool_calls: z.boolean().optional(),
  prediction: z.record(z.string(), z.unknown()).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  prompt_cache_key: z.string().optional(),
  prompt_cache_retention: z.enum(['in-memory', '24h']).nullish(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
  response_format: responseFormat.optional(),
  safety_identifier: z.string().optional(),
  seed: z.number().int().nullish(),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullish(),
  stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.record(z.string(), z.unknown()).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  tool_choice: z.unknown().optional(),
  tools: z.array(functionTool).optional(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  user: z.string().optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullish(),
  web_search_options: z.record(z.string(), z.unknown()).optional(),
});

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

// ---------------------------------------------------------------------------------------------
// Strict structured outputs: the JSON Schema subset the API accepts with `strict: true`.

const STRICT_UNSUPPORTED = [
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
];

/** Why `schema` is outside the strict subset, or [] when it is inside. */
export function strictSchemaProblems(schema: Record<string, unknown>): string[] {
  const problems: string[] = [];
  let properties = 0;
  if (schema.type !== 'object' || 'anyOf' in schema)
    problems.push('the root schema must be an object, not anyOf');
  const visit = (node: unknown, path: string, depth: number) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => {
        visit(n, `${path}/${i}`, depth);
      });
      return;
    }
    if (!node || typeof node !== 'object') return;
    const obj = node as Record<string, unknown>;
    for (const keyword of STRICT_UNSUPPORTED) {
      if (keyword in obj) problems.push(`${path}: '${keyword}' is not supported in strict mode`);
    }
    const types = Array.isArray(obj.type) ? obj.type : [obj.type];
    if (types.includes('object') && obj.properties && typeof obj.properties === 'object') {
      if (depth > 10) problems.push(`${path}: more than 10 levels of nesting`);
      const keys = Object.keys(obj.properties);
      properties += keys.length;
      if (obj.additionalProperties !== false) {
        problems.push(`${path}: 'additionalProperties' is required to be supplied and to be false`);
      }
      const required = Array.isArray(obj.required) ? obj.required : [];
      const missing = keys.filter((k) => !required.includes(k));
      if (missing.length > 0) {
        problems.push(`${path}: 'required' must list every property; missing ${missing.join(', ')}`);
      }
      for (const [key, value] of Object.entries(obj.properties))
        visit(value, `${path}/properties/${key}`, depth + 1);
    }
    for (const key of ['items', 'anyOf', '$defs', 'definitions'] as const) {
      if (key in obj) {
        const child = obj[key];
        if (key === '$defs' || key === 'definitions') {
          for (const [name, def] of Object.entries((child ?? {}) as Record<string, unknown>)) {
            visit(def, `${path}/${key}/${name}`, depth);
          }
        } else visit(child, `${path}/${key}`, depth + (key === 'items' ? 1 : 0));
      }
    }
    if (Array.isArray(obj.enum) && obj.enum.length > 1000)
      problems.push(`${path}: enum has more than 1000 values`);
  };
  visit(schema, '#', 1);
  if (properties > 5000) problems.push('more than 5000 object properties in total');
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Answers

export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export type Answer =
  | {
      kind: 'content';
      /** The assistant message's content (for structured output: the JSON text). */
      content: string | null;
      finishReason?: 'stop' | 'length' | 'content_filter';
      refusal?: string | null;
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
      /** Streamed requests only: how the stream misbehaves after some characters of content. */
      stream?: StreamMisbehaviour;
    }
  | { kind: 'error'; status: number; error: ErrorBody; headers?: Record<string, string> }
  | RawAnswer
  | { kind: 'delay'; ms: number; then: Answer };

export const answers = {
  /** A structured answer carrying these findings. */
  findings(findings: unknown[], usage?: { prompt_tokens: number; completion_tokens: number }): Answer {
    return { kind: 'content', content: JSON.stringify({ findings }), ...(usage ? { usage } : {}) };
  },
  /** Any JSON value (or raw text when a string) as the assistant's content. */
  content(content: string | null, extra: Partial<Extract<Answer, { kind: 'content' }>> = {}): Answer {
    return { kind: 'content', content, ...extra };
  },
  rateLimited(retryAfterSeconds?: number): Answer {
    return {
      kind: 'error',
      status: 429,
      error: {
        message: 'Rate limit reached for requests. Please try again later.',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
      ...(retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } }),
    };
  },
  unauthorized(): Answer {
    return {
      kind: 'error',
      status: 401,
      error: {
        message: 'Incorrect API key provided. You can find your API key in your account settings.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    };
  },
  modelNotFound(model: string): Answer {
    return {
      kind: 'error',
      status: 404,
      error: {
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    };
  },
  serverError(status = 500): Answer {
    return {
      kind: 'error',
      status,
      error: {
        message: 'The server had an error while processing your request.',
        type: 'server_error',
        param: null,
        code: null,
      },
    };
  },
  contextTooLong(): Answer {
    return {
      kind: 'error',
      status: 400,
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    };
  },
  delay(ms: number, then: Answer): Answer {
    return { kind: 'delay', ms, then };
  },
  /** A streamed answer whose connection is destroyed after `chars` characters of `content`. */
  brokenStream(content: string, chars: number): Answer {
    return { kind: 'content', content, stream: { cutAfter: chars } };
  },
  /** A streamed answer that goes silent for `ms` after `chars` characters of `content`. */
  stalledStream(content: string, chars: number, ms: number): Answer {
    return { kind: 'content', content, stream: { stallAfter: { chars, ms } } };
  },
};

// ---------------------------------------------------------------------------------------------
// The server

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined when it did not parse). */
  body: unknown;
  /** The request as validated, when it was valid. */
  chat: ChatCompletionRequest | null;
}

export interface Rejection {
  path: string;
  status: number;
  error: ErrorBody;
}

export interface OpenAIDoubleOptions {
  /** The key requests must carry as `Bearer <key>`; null accepts any bearer token but still requires one. */
  apiKey?: string | null;
  /** Whether a request without Authorization is refused (true; an Ollama-like server says false). */
  requireAuth?: boolean;
  /** Models served; a request for another gets 404 model_not_found. Undefined: any model. */
  models?: string[];
}

export interface OpenAIDouble {
  /** Base URL including `/v1`, for `baseURL` settings. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  readonly rejections: Rejection[];
  /** Answers for the next valid chat requests, in order. */
  enqueue(...next: Answer[]): void;
  /** The answer when the queue is empty (default: 500 'no answer queued'). */
  fallback: ((request: ChatCompletionRequest) => Answer) | null;
  /** Requests that reached the answer stage (valid chat completion requests). */
  chatRequests(): ChatCompletionRequest[];
  close(): Promise<void>;
}

function errorBody(message: string, code: string | null = null, param: string | null = null): ErrorBody {
  return { message, type: 'invalid_request_error', param, code };
}

/** A `content` answer as the API streams it (server-sent events of chat.completion.chunk). */
async function streamContent(
  res: ServerResponse,
  request: ChatCompletionRequest,
  answer: Extract<Answer, { kind: 'content' }>,
  id: string,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
  };
  const send = (chunk: unknown) =>
    res.write(
      `data: ${JSON.stringify({ ...base, system_fingerprint: 'fp_double', ...(chunk as object) })}\n\n`,
    );
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  send(choice({ role: 'assistant', content: '', refusal: null }));
  const content = answer.content ?? '';
  // A cut stream ends with no final chunk and no [DONE].
  const whole = await streamPieces(
    res,
    answer.content === null ? [] : pieces(content),
    answer.stream ?? {},
    (piece) => send(choice({ content: piece })),
  );
  if (!whole) return;
  if (answer.refusal) send(choice({ refusal: answer.refusal }));
  send(choice({}, answer.finishReason ?? 'stop'));
  const usage =
    answer.usage === null
      ? undefined
      : (answer.usage ?? {
          prompt_tokens: estimateTokens(request),
          completion_tokens: Math.ceil(content.length / 4),
        });
  if (usage && request.stream_options?.include_usage === true) {
    send({ choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  }
  res.end('data: [DONE]\n\n');
}

function estimateTokens(request: ChatCompletionRequest): number {
  return Math.ceil(JSON.stringify(request.messages).length / 4);
}

export async function startOpenAIDouble(options: OpenAIDoubleOptions = {}): Promise<OpenAIDouble> {
  const requests: RecordedRequest[] = [];
  const rejections: Rejection[] = [];
  const queue: Answer[] = [];
  let counter = 0;

  const double: OpenAIDouble = {
    baseURL: '',
    requests,
    rejections,
    enqueue: (...next) => {
      queue.push(...next);
    },
    fallback: null,
    chatRequests: () => requests.flatMap((r) => (r.chat ? [r.chat] : [])),
    close: () => server.close(),
  };

  const reject = (res: ServerResponse, path: string, status: number, error: ErrorBody) => {
    rejections.push({ path, status, error });
    sendJson(res, status, { error });
  };

  const respond = async (
    res: ServerResponse,
    request: ChatCompletionRequest,
    answer: Answer,
  ): Promise<void> => {
    switch (answer.kind) {
      case 'delay':
        await sleep(answer.ms);
        return respond(res, request, answer.then);
      case 'error':
        return sendJson(res, answer.status, { error: answer.error }, answer.headers);
      case 'raw':
        return sendRaw(res, answer);
      case 'content': {
        counter++;
        if (request.stream) return streamContent(res, request, answer, `chatcmpl-double${counter}`);
        const usage =
          answer.usage === null
            ? undefined
            : (answer.usage ?? {
                prompt_tokens: estimateTokens(request),
                completion_tokens: Math.ceil((answer.content ?? '').length / 4),
              });
        return sendJson(res, 200, {
          id: `chatcmpl-double${counter}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.model,
          system_fingerprint: 'fp_double',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: answer.content, refusal: answer.refusal ?? null },
              logprobs: null,
              finish_reason: answer.finishReason ?? 'stop',
            },
          ],
          ...(usage
            ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
            : {}),
        });
      }
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string, body: unknown) => {
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      chat: null,
    };
    requests.push(recorded);

    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return reject(res, path, 404, errorBody(`Invalid URL (${req.method} ${path})`));
    }
    const auth = req.headers.authorization;
    if (options.requireAuth !== false || auth !== undefined) {
      if (!auth?.startsWith('Bearer ') || auth.slice(7).trim() === '') {
        return reject(
          res,
          path,
          401,
          errorBody(
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          ),
        );
      }
      if (options.apiKey && auth.slice(7) !== options.apiKey) {
        return reject(res, path, 401, errorBody('Incorrect API key provided.', 'invalid_api_key'));
      }
    }
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.toLowerCase().startsWith('application/json')) {
      return reject(
        res,
        path,
        415,
        errorBody(`Unsupported content type: '${contentType}'. Send application/json.`),
      );
    }
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return reject(
        res,
        path,
        400,
        errorBody(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)",
        ),
      );
    }
    const parsed = chatCompletionRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = issue?.path.join('.') || null;
      const message =
        issue?.code === 'unrecognized_keys'
          ? `Unrecognized request argument supplied: ${issue.keys.join(', ')}`
          : `Invalid value for '${param ?? 'body'}': ${issue?.message ?? 'invalid request'}`;
      return reject(
        res,
        path,
        400,
        errorBody(message, issue?.code === 'unrecognized_keys' ? null : 'invalid_value', param),
      );
    }
    const request = parsed.data;
    const format = request.response_format;
    if (format?.type === 'json_schema' && format.json_schema.strict === true) {
      if (!format.json_schema.schema) {
        return reject(
          res,
          path,
          400,
          errorBody("Missing required parameter: 'response_format.json_schema.schema'."),
        );
      }
      const problems = strictSchemaProblems(format.json_schema.schema);
      if (problems.length > 0) {
        return reject(
          res,
          path,
          400,
          errorBody(
            `Invalid schema for response_format '${format.json_schema.name}': ${problems.join('; ')}`,
            'invalid_json_schema',
            'response_format',
          ),
        );
      }
    }
    if (request.stream_options && !request.stream) {
      return reject(
        res,
        path,
        400,
        errorBody(
          'The stream_options parameter is only allowed when stream is enabled.',
          null,
          'stream_options',
        ),
      );
    }
    if (options.models && !options.models.includes(request.model)) {
      return reject(
        res,
        path,
        404,
        errorBody(
          `The model \`${request.model}\` does not exist or you do not have access to it.`,
          'model_not_found',
        ),
      );
    }
    recorded.chat = request;
    const answer = queue.shift() ??
      double.fallback?.(request) ?? {
        kind: 'error' as const,
        status: 500,
        error: { message: 'openai double: no answer queued', type: 'server_error', param: null, code: null },
      };
    await respond(res, request, answer);
  };

  const server = await startLoopbackServer(
    (req, res, arrived) => handle(req, res, arrived.path, arrived.json),
    (message) => ({ error: errorBody(message) }),
  );
  (double as { baseURL: string }).baseURL = `${server.origin}/v1`;
  return double;
}
