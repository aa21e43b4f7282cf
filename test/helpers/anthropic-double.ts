/**
 * A local stand-in for Anthropic's Messages API: a real HTTP server on 127.0.0.1 (ephemeral port)
 * serving `POST /v1/messages`, for tests of the LLM reviewer engine through @ai-sdk/anthropic.
 *
 * It checks every request the way the real API would and answers a request the real API would
 * refuse with the API's error shape, `{"type":"error","error":{"type","message"},"request_id"}`,
 * and its status (400 `invalid_request_error`, 401 `authentication_error`, 404 `not_found_error`),
 * so a malformed request fails the test that sent it; each rejection is also kept in `rejections`.
 *
 * What it checks, and against what: no machine-readable description of the Messages API is
 * published on the npm registry (the `@anthropic-ai/sdk` package ships TypeScript generated from
 * Anthropic's OpenAPI document, but not the document itself; no other package carries one), so the
 * request schema below is encoded in zod by hand from the published API reference ("Create a
 * Message", whose parameter list the SDK's `MessageCreateParams` mirrors), the streaming guide
 * ("Streaming Messages") and the structured outputs guide. Error messages follow the API's own
 * wording where it is known ("max_tokens: Field required", "foo: Extra inputs are not permitted").
 * - `x-api-key` present (401 "x-api-key header is required") and equal to the configured key
 *   (401 "invalid x-api-key");
 * - `anthropic-version` present (400) and a published version (2023-06-01, 2023-01-01);
 * - `Content-Type: application/json` and a body that parses as a JSON object;
 * - only the documented request fields: model, max_tokens, messages, system, metadata,
 *   stop_sequences, stream, temperature, top_k, top_p, tools, tool_choice, thinking,
 *   service_tier, output_config, container, inference_geo, cache_control (anything else is
 *   "Extra inputs are not permitted"; beta-only fields such as mcp_servers are refused too);
 * - `model` required and one the server serves (else 404 not_found_error "model: <id>");
 *   `max_tokens` a required integer ≥ 1 (the newest reference also allows 0, to pre-warm the
 *   prompt cache; svc never asks for that); temperature 0..1, top_p 0..1, top_k ≥ 0;
 * - `messages`: at least one; roles `user` or `assistant`, the first `user`; consecutive turns of
 *   one role are accepted, as the reference says they are combined into one turn (the API does
 *   not demand strict alternation); content a non-empty string or non-empty list of typed blocks
 *   (text, image, document, tool_use, tool_result, thinking, redacted_thinking), only the final
 *   assistant message may be empty, text blocks non-empty; every `tool_result` answers a
 *   `tool_use` of the message before, and every `tool_use` is answered in the message after;
 * - `system`: a string or a list of text blocks;
 * - `tools`: a custom tool has a name matching ^[a-zA-Z0-9_-]{1,64}$, an `input_schema` of type
 *   object and only the documented tool fields (description, cache_control, strict,
 *   eager_input_streaming, defer_loading, input_examples, allowed_callers, type "custom"); server
 *   tools (a dated `type`) are accepted as they come; names unique;
 * - `tool_choice`: auto | any | tool (naming a provided tool) | none, only with `tools`; not one
 *   that forces tool use while extended thinking is enabled;
 * - `thinking`: budget_tokens ≥ 1024 and below max_tokens; temperature only 1 with thinking;
 * - `output_config.format` (type json_schema) and tools with `strict: true`: the JSON Schema
 *   subset structured outputs accept (see `structuredSchemaProblems`).
 * Not modelled: per-model limits (max output tokens, models that refuse sampling parameters),
 * beta headers, images' and documents' contents, the request size limit.
 *
 * Streaming (`stream: true`) is served as the API does: `text/event-stream` of `event:`/`data:`
 * pairs — message_start (the message with usage.input_tokens), content_block_start, ping,
 * content_block_delta (text_delta for a text block, input_json_delta for a tool_use block),
 * content_block_stop, message_delta (stop_reason, usage.output_tokens), message_stop. A streamed
 * answer can be made to break (`cutAfter`: the socket is destroyed after that many characters),
 * to stall (`stallAfter`), or to carry an `error` event mid-stream (`errorAfter`, as the API
 * sends `overloaded_error` in a stream that had begun). Unstreamed requests get the Message object.
 *
 * Answers are scripted as in ./openai-double.ts: a queue (`enqueue`) of canned answers — findings
 * JSON, raw text, HTTP errors (429 with retry-after, 529 overloaded_error, 401, 404, 500), a delay
 * before any of them — then `fallback` (by default a 500 saying the queue is empty). A `message`
 * answer is given the way the request asks for it: as a `tool_use` block of the forced tool when
 * `tool_choice` forces one (how @ai-sdk/anthropic asks older models for JSON: a `json` tool with
 * tool_choice `any`), else as a text block (the JSON text under `output_config.format`). Every
 * request is recorded in `requests`. The server, the JSON answers and the broken or stalled stream
 * are ./model-double-server.ts, shared with the OpenAI double.
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
// The request schema (Create a Message), from the API reference.

const cacheControl = z
  .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullish();

const textBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
  citations: z.array(z.record(z.string(), z.unknown())).nullish(),
});

const imageBlock = z.strictObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string(),
    }),
    z.strictObject({ type: z.literal('url'), url: z.string() }),
  ]),
  cache_control: cacheControl,
});

const documentBlock = z.strictObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.enum(['base64', 'text', 'content', 'url']) }),
  cache_control: cacheControl,
  citations: z.strictObject({ enabled: z.boolean().optional() }).nullish(),
  context: z.string().nullish(),
  title: z.string().nullish(),
});

const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

const toolUseBlock = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().regex(TOOL_USE_ID),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const toolResultBlock = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().regex(TOOL_USE_ID),
  content: z.union([z.string(), z.array(z.union([textBlock, imageBlock, documentBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  documentBlock,
  toolUseBlock,
  toolResultBlock,
  z.strictObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  z.strictObject({ type: z.literal('redacted_thinking'), data: z.string() }),
]);

const messageParam = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({
    type: z.literal('tool'),
    name: z.string(),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

const thinking = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('enabled'),
    budget_tokens: z.number().int().min(1024),
    display: z.enum(['summarized', 'omitted']).nullish(),
  }),
  z.strictObject({ type: z.literal('disabled') }),
  z.strictObject({ type: z.literal('adaptive'), display: z.enum(['summarized', 'omitted']).nullish() }),
]);

const outputConfig = z.strictObject({
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullish(),
  format: z
    .strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
    .nullish(),
});

export const messagesRequestSchema = z.strictObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z.array(messageParam).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  metadata: z.strictObject({ user_id: z.string().max(256).nullish() }).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  top_p: z.number().min(0).max(1).optional(),
  // Each tool is checked on its own below (a custom tool strictly, a server tool by its type).
  tools: z.array(z.record(z.string(), z.unknown())).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  output_config: outputConfig.optional(),
  container: z.string().nullish(),
  inference_geo: z.string().nullish(),
  cache_control: cacheControl,
});

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const customTool = z.strictObject({
  type: z.literal('custom').nullish(),
  name: z.string().regex(TOOL_NAME),
  description: z.string().optional(),
  input_schema: z.looseObject({
    type: z.literal('object'),
    properties: z.record(z.string(), z.unknown()).nullish(),
    required: z.array(z.string()).nullish(),
  }),
  cache_control: cacheControl,
  strict: z.boolean().optional(),
  eager_input_streaming: z.boolean().nullish(),
  defer_loading: z.boolean().optional(),
  input_examples: z.array(z.record(z.string(), z.unknown())).optional(),
  allowed_callers: z.array(z.string()).optional(),
});

/** A server tool (web_search_20250305, bash_20250124, …): its own fields are not modelled. */
const serverTool = z.looseObject({ type: z.string().regex(/^[a-z_]+_\d{8}$/), name: z.string().min(1) });

// ---------------------------------------------------------------------------------------------
// Structured outputs: the JSON Schema subset `output_config.format` and strict tools accept.

/** Keywords the structured outputs guide lists as unsupported (numeric and length constraints, …). */
const STRUCTURED_UNSUPPORTED = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'maxItems',
  'minProperties',
  'maxProperties',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentSchemas',
  'dependentRequired',
  'propertyNames',
  'unevaluatedProperties',
];

const STRING_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'uri',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** Why `schema` is outside the structured-outputs subset, or [] when it is inside. */
export function structuredSchemaProblems(schema: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const visit = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => {
        visit(n, `${path}/${i}`);
      });
      return;
    }
    if (!node || typeof node !== 'object') return;
    const obj = node as Record<string, unknown>;
    for (const keyword of STRUCTURED_UNSUPPORTED) {
      if (keyword in obj) problems.push(`${path}: '${keyword}' is not supported`);
    }
    if (typeof obj.minItems === 'number' && obj.minItems > 1)
      problems.push(`${path}: minItems above 1 is not supported`);
    if (typeof obj.format === 'string' && !STRING_FORMATS.has(obj.format))
      problems.push(`${path}: format '${obj.format}' is not supported`);
    if (typeof obj.$ref === 'string' && !obj.$ref.startsWith('#'))
      problems.push(`${path}: external $ref is not supported`);
    const types = Array.isArray(obj.type) ? obj.type : [obj.type];
    if (types.includes('object') && obj.additionalProperties !== false)
      problems.push(`${path}: 'additionalProperties' must be explicitly set to false for object types`);
    for (const [key, value] of Object.entries(obj)) {
      if (key === 'properties' || key === '$defs' || key === 'definitions') {
        for (const [name, child] of Object.entries((value ?? {}) as Record<string, unknown>))
          visit(child, `${path}/${key}/${name}`);
      } else if (key === 'items' || key === 'anyOf' || key === 'allOf' || key === 'prefixItems') {
        visit(value, `${path}/${key}`);
      }
    }
  };
  visit(schema, '#');
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Errors, as the API words them

export interface AnthropicErrorBody {
  type:
    | 'invalid_request_error'
    | 'authentication_error'
    | 'permission_error'
    | 'not_found_error'
    | 'request_too_large'
    | 'rate_limit_error'
    | 'api_error'
    | 'overloaded_error';
  message: string;
}

const invalid = (message: string): AnthropicErrorBody => ({ type: 'invalid_request_error', message });

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let node = body;
  for (const key of path) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** The first zod issue in the API's words: `<dotted.path>: <what is wrong>`. */
function describeIssue(body: unknown, issues: z.core.$ZodIssue[], prefix = ''): string {
  const issue = issues[0];
  if (!issue) return 'invalid request';
  const at = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.');
  switch (issue.code) {
    case 'unrecognized_keys':
      return `${at([...issue.path, issue.keys[0] ?? ''])}: Extra inputs are not permitted`;
    case 'invalid_type':
      return valueAt(body, issue.path) === undefined
        ? `${at(issue.path)}: Field required`
        : `${at(issue.path)}: Input should be a valid ${issue.expected}`;
    case 'too_big':
      return `${at(issue.path)}: Input should be less than or equal to ${String(issue.maximum)}`;
    case 'too_small':
      return issue.origin === 'array'
        ? `${at(issue.path)}: List should have at least ${String(issue.minimum)} item(s)`
        : `${at(issue.path)}: Input should be greater than or equal to ${String(issue.minimum)}`;
    case 'invalid_format':
      return issue.format === 'regex' && 'pattern' in issue
        ? `${at(issue.path)}: String should match pattern '${String(issue.pattern)}'`
        : `${at(issue.path)}: ${issue.message}`;
    case 'invalid_union':
      if ('discriminator' in issue && 'options' in issue && Array.isArray(issue.options)) {
        const tag = JSON.stringify(valueAt(body, issue.path));
        const expected = issue.options.map((o: unknown) => `'${String(o)}'`).join(', ');
        return `${at(issue.path)}: Input tag ${tag} found using '${String(issue.discriminator)}' does not match any of the expected tags: ${expected}`;
      }
      {
        // A union of shapes (a string or a list of blocks): name the branch that got furthest.
        const furthest = issue.errors
          .flatMap((branch) => branch.slice(0, 1))
          .sort((a, b) => b.path.length - a.path.length)[0];
        if (furthest && furthest.path.length > 0)
          return describeIssue(body, [{ ...furthest, path: [...issue.path, ...furthest.path] }], prefix);
      }
      return `${at(issue.path)}: ${issue.message}`;
    default:
      return `${at(issue.path)}: ${issue.message}`;
  }
}

const FORCES_TOOL_USE = new Set(['any', 'tool']);

type Content = MessagesRequest['messages'][number]['content'];
const blocksOf = (content: Content) => (typeof content === 'string' ? [] : content);

/** The conversation's order and shape: who speaks first, empty turns, tool_use/tool_result pairs. */
function messagesProblem(request: MessagesRequest): string | null {
  const { messages } = request;
  if (messages[0]?.role !== 'user') return 'messages: first message must use the "user" role';
  for (const [i, m] of messages.entries()) {
    const empty = typeof m.content === 'string' ? m.content === '' : m.content.length === 0;
    const finalAssistant = i === messages.length - 1 && m.role === 'assistant';
    if (empty && !finalAssistant)
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    if (blocksOf(m.content).some((b) => b.type === 'text' && b.text === ''))
      return 'messages: text content blocks must be non-empty';
    const results = blocksOf(m.content).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    if (results.length > 0) {
      const previous = messages[i - 1];
      const asked = new Set(
        previous?.role === 'assistant'
          ? blocksOf(previous.content).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
          : [],
      );
      const unexpected = results.filter((id) => !asked.has(id));
      if (m.role !== 'user' || unexpected.length > 0)
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ') || results.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    const uses = blocksOf(m.content).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    if (uses.length > 0) {
      if (m.role !== 'assistant')
        return `messages.${i}.content: tool_use blocks can only be in assistant messages`;
      const next = messages[i + 1];
      if (next) {
        const answered = new Set(
          blocksOf(next.content).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
        );
        const missing = uses.filter((id) => !answered.has(id));
        if (missing.length > 0)
          return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
  }
  if (Array.isArray(request.system) && request.system.some((b) => b.text === ''))
    return 'system: text content blocks must be non-empty';
  return null;
}

/** Each tool's definition (checked by its kind), unique names, and a tool_choice that fits them. */
function toolsProblem(request: MessagesRequest, body: Record<string, unknown>): string | null {
  const names: string[] = [];
  for (const [i, tool] of (request.tools ?? []).entries()) {
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    const parsed = (custom ? customTool : serverTool).safeParse(tool);
    if (!parsed.success)
      return describeIssue(
        valueAt(body, ['tools', i]),
        parsed.error.issues,
        `tools.${i}.${custom ? 'custom' : String(tool.type)}`,
      );
    names.push(String(tool.name));
    if (custom && tool.strict === true) {
      const problems = structuredSchemaProblems(tool.input_schema as Record<string, unknown>);
      if (problems.length > 0) return `tools.${i}.custom.input_schema: ${problems.join('; ')}`;
    }
  }
  if (new Set(names).size !== names.length) return 'tools: Tool names must be unique.';
  const choice = request.tool_choice;
  if (choice && choice.type !== 'none' && names.length === 0)
    return 'tool_choice: tool_choice may only be specified while providing tools';
  if (choice?.type === 'tool' && !names.includes(choice.name))
    return `tool_choice.name: tool '${choice.name}' is not among the provided tools`;
  return null;
}

/** Extended thinking's limits, and an output format inside the structured-outputs subset. */
function settingsProblem(request: MessagesRequest): string | null {
  const choice = request.tool_choice;
  if (request.thinking?.type === 'enabled') {
    if (request.thinking.budget_tokens >= request.max_tokens)
      return '`max_tokens` must be greater than `thinking.budget_tokens`';
    if (request.temperature !== undefined && request.temperature !== 1)
      return '`temperature` may only be set to 1 when thinking is enabled';
  }
  if (request.thinking && request.thinking.type !== 'disabled' && choice && FORCES_TOOL_USE.has(choice.type))
    return 'Thinking may not be enabled when tool_choice forces tool use.';

  const format = request.output_config?.format;
  if (format) {
    const problems = structuredSchemaProblems(format.schema);
    if (problems.length > 0) return `output_config.format.schema: ${problems.join('; ')}`;
  }
  return null;
}

/** What the API refuses beyond the fields' types, or null. */
function semanticProblem(request: MessagesRequest, body: Record<string, unknown>): string | null {
  return messagesProblem(request) ?? toolsProblem(request, body) ?? settingsProblem(request);
}

// ---------------------------------------------------------------------------------------------
// Answers

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
}

export type Answer =
  | {
      kind: 'message';
      /** What the model says: the text block's text, or the tool_use block's input as JSON text. */
      text: string;
      /**
       * `auto` (the default): a tool_use block of the forced tool when tool_choice forces one
       * (`any`: the first custom tool), else a text block.
       */
      as?: 'auto' | 'text' | { tool: string };
      /** Default: `tool_use` for a tool_use block, else `end_turn`. */
      stopReason?: StopReason;
      usage?: MessageUsage;
      /** Streamed requests only: how the stream misbehaves after some characters of text. */
      stream?: StreamMisbehaviour & {
        /** An `error` event after this many characters, and the stream ends. */
        errorAfter?: { chars: number; error: AnthropicErrorBody };
      };
    }
  | { kind: 'error'; status: number; error: AnthropicErrorBody; headers?: Record<string, string> }
  | RawAnswer
  | { kind: 'delay'; ms: number; then: Answer };

type MessageAnswer = Extract<Answer, { kind: 'message' }>;

const OVERLOADED: AnthropicErrorBody = { type: 'overloaded_error', message: 'Overloaded' };

export const answers = {
  /** An answer carrying these findings (as the forced tool's input, or as text). */
  findings(findings: unknown[], usage?: MessageUsage): Answer {
    return { kind: 'message', text: JSON.stringify({ findings }), ...(usage ? { usage } : {}) };
  },
  /** Any text as the model's answer (malformed JSON too, as a text block only). */
  text(text: string, extra: Partial<MessageAnswer> = {}): Answer {
    return { kind: 'message', text, ...extra };
  },
  rateLimited(retryAfterSeconds?: number): Answer {
    return {
      kind: 'error',
      status: 429,
      error: {
        type: 'rate_limit_error',
        message: 'Number of request tokens has exceeded your per-minute rate limit. Please try again later.',
      },
      ...(retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } }),
    };
  },
  /** 529: the API is overloaded (not this account's limit). */
  overloaded(): Answer {
    return { kind: 'error', status: 529, error: OVERLOADED };
  },
  unauthorized(): Answer {
    return {
      kind: 'error',
      status: 401,
      error: { type: 'authentication_error', message: 'invalid x-api-key' },
    };
  },
  modelNotFound(model: string): Answer {
    return { kind: 'error', status: 404, error: { type: 'not_found_error', message: `model: ${model}` } };
  },
  serverError(): Answer {
    return { kind: 'error', status: 500, error: { type: 'api_error', message: 'Internal server error' } };
  },
  promptTooLong(): Answer {
    return {
      kind: 'error',
      status: 400,
      error: invalid('prompt is too long: 210000 tokens > 200000 maximum'),
    };
  },
  delay(ms: number, then: Answer): Answer {
    return { kind: 'delay', ms, then };
  },
  /** A streamed answer whose connection is destroyed after `chars` characters of `text`. */
  brokenStream(text: string, chars: number): Answer {
    return { kind: 'message', text, stream: { cutAfter: chars } };
  },
  /** A streamed answer that goes silent for `ms` after `chars` characters of `text`. */
  stalledStream(text: string, chars: number, ms: number): Answer {
    return { kind: 'message', text, stream: { stallAfter: { chars, ms } } };
  },
  /** A streamed answer that begins, then carries an overloaded_error event after `chars` characters. */
  overloadedMidStream(text: string, chars: number): Answer {
    return { kind: 'message', text, stream: { errorAfter: { chars, error: OVERLOADED } } };
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
  message: MessagesRequest | null;
}

export interface Rejection {
  path: string;
  status: number;
  error: AnthropicErrorBody;
}

export interface AnthropicDoubleOptions {
  /** The key requests must carry in `x-api-key`; null accepts any key but still requires one. */
  apiKey?: string | null;
  /** Models served; a request for another gets 404 not_found_error. Undefined: any model. */
  models?: string[];
}

export interface AnthropicDouble {
  /** Base URL including `/v1`, for ANTHROPIC_BASE_URL and the SDK's `baseURL`. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  readonly rejections: Rejection[];
  /** Answers for the next valid Messages requests, in order. */
  enqueue(...next: Answer[]): void;
  /** The answer when the queue is empty (default: 500 'no answer queued'). */
  fallback: ((request: MessagesRequest) => Answer) | null;
  /** Requests that reached the answer stage (valid Messages requests). */
  messageRequests(): MessagesRequest[];
  close(): Promise<void>;
}

const ANTHROPIC_VERSIONS = new Set(['2023-06-01', '2023-01-01']);

/** The answer's scripted usage, or one estimated at ~4 characters a token. */
function usageOf(request: MessagesRequest, answer: MessageAnswer): MessageUsage {
  const { system, messages, tools, output_config } = request;
  return (
    answer.usage ?? {
      input_tokens: Math.ceil(JSON.stringify({ system, messages, tools, output_config }).length / 4),
      output_tokens: Math.max(1, Math.ceil(answer.text.length / 4)),
    }
  );
}

/** The block an answer is given as: the forced tool's tool_use, or text. */
function blockKind(request: MessagesRequest, answer: MessageAnswer): { tool: string } | 'text' {
  const as = answer.as ?? 'auto';
  if (as !== 'auto') return as;
  const choice = request.tool_choice;
  if (choice?.type === 'tool') return { tool: choice.name };
  const firstCustom = (request.tools ?? []).find((t) => t.type == null || t.type === 'custom');
  if (choice?.type === 'any' && firstCustom) return { tool: String(firstCustom.name) };
  return 'text';
}

/** One server-sent event: its `event:` line names the data's type, as the API's stream does. */
const sse = (res: ServerResponse, event: { type: string; [field: string]: unknown }) =>
  res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

export async function startAnthropicDouble(options: AnthropicDoubleOptions = {}): Promise<AnthropicDouble> {
  const requests: RecordedRequest[] = [];
  const rejections: Rejection[] = [];
  const queue: Answer[] = [];
  let counter = 0;

  const double: AnthropicDouble = {
    baseURL: '',
    requests,
    rejections,
    enqueue: (...next) => {
      queue.push(...next);
    },
    fallback: null,
    messageRequests: () => requests.flatMap((r) => (r.message ? [r.message] : [])),
    close: () => server.close(),
  };

  const sendError = (
    res: ServerResponse,
    status: number,
    error: AnthropicErrorBody,
    headers: Record<string, string> = {},
  ) => {
    const id = `req_double${++counter}`;
    sendJson(res, status, { type: 'error', error, request_id: id }, { 'request-id': id, ...headers });
  };

  const reject = (res: ServerResponse, path: string, status: number, error: AnthropicErrorBody) => {
    rejections.push({ path, status, error });
    sendError(res, status, error);
  };

  /** A message answer as the API streams it. */
  const streamMessage = async (res: ServerResponse, request: MessagesRequest, answer: MessageAnswer) => {
    if (res.destroyed) return;
    const n = ++counter;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': `req_double${n}`,
    });
    const kind = blockKind(request, answer);
    const usage = usageOf(request, answer);
    sse(res, {
      type: 'message_start',
      message: {
        id: `msg_double${n}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          service_tier: 'standard',
        },
      },
    });
    sse(res, {
      type: 'content_block_start',
      index: 0,
      content_block:
        kind === 'text'
          ? { type: 'text', text: '' }
          : { type: 'tool_use', id: `toolu_double${n}`, name: kind.tool, input: {} },
    });
    sse(res, { type: 'ping' });
    const delta = (piece: string) =>
      sse(res, {
        type: 'content_block_delta',
        index: 0,
        delta:
          kind === 'text'
            ? { type: 'text_delta', text: piece }
            : { type: 'input_json_delta', partial_json: piece },
      });
    // A tool_use block's input begins with an empty partial_json, as the API streams it.
    if (kind !== 'text') delta('');
    const { errorAfter, ...misbehaviour } = answer.stream ?? {};
    const said = errorAfter ? answer.text.slice(0, errorAfter.chars) : answer.text;
    const whole = await streamPieces(res, said === '' ? [] : pieces(said), misbehaviour, delta);
    if (!whole) return;
    if (errorAfter) {
      // The API reports a failure of a stream that had begun as an error event, and ends it.
      sse(res, { type: 'error', error: errorAfter.error });
      res.end();
      return;
    }
    sse(res, { type: 'content_block_stop', index: 0 });
    sse(res, {
      type: 'message_delta',
      delta: {
        stop_reason: answer.stopReason ?? (kind === 'text' ? 'end_turn' : 'tool_use'),
        stop_sequence: null,
      },
      usage: { output_tokens: usage.output_tokens },
    });
    sse(res, { type: 'message_stop' });
    res.end();
  };

  /** A message answer as one Message object (an unstreamed request). */
  const sendMessage = (res: ServerResponse, request: MessagesRequest, answer: MessageAnswer) => {
    const n = ++counter;
    const kind = blockKind(request, answer);
    let block: Record<string, unknown>;
    if (kind === 'text') {
      block = { type: 'text', text: answer.text };
    } else {
      const input: unknown = JSON.parse(answer.text);
      if (!input || typeof input !== 'object' || Array.isArray(input))
        throw new Error('a tool_use answer needs a JSON object as its text');
      block = { type: 'tool_use', id: `toolu_double${n}`, name: kind.tool, input };
    }
    const usage = usageOf(request, answer);
    sendJson(
      res,
      200,
      {
        id: `msg_double${n}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [block],
        stop_reason: answer.stopReason ?? (kind === 'text' ? 'end_turn' : 'tool_use'),
        stop_sequence: null,
        usage: {
          ...usage,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          service_tier: 'standard',
        },
      },
      { 'request-id': `req_double${n}` },
    );
  };

  const respond = async (res: ServerResponse, request: MessagesRequest, answer: Answer): Promise<void> => {
    switch (answer.kind) {
      case 'delay':
        await sleep(answer.ms);
        return respond(res, request, answer.then);
      case 'error':
        return sendError(res, answer.status, answer.error, answer.headers);
      case 'raw':
        return sendRaw(res, answer);
      case 'message':
        return request.stream ? streamMessage(res, request, answer) : sendMessage(res, request, answer);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string, body: unknown) => {
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      message: null,
    };
    requests.push(recorded);

    if (req.method !== 'POST' || path !== '/v1/messages') {
      return reject(res, path, 404, { type: 'not_found_error', message: 'Not Found' });
    }
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key.trim() === '') {
      return reject(res, path, 401, {
        type: 'authentication_error',
        message: 'x-api-key header is required',
      });
    }
    if (options.apiKey && key !== options.apiKey) {
      return reject(res, path, 401, { type: 'authentication_error', message: 'invalid x-api-key' });
    }
    const version = req.headers['anthropic-version'];
    if (typeof version !== 'string' || version === '') {
      return reject(res, path, 400, invalid('anthropic-version: header is required'));
    }
    if (!ANTHROPIC_VERSIONS.has(version)) {
      return reject(res, path, 400, invalid(`anthropic-version: unknown version '${version}'`));
    }
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.toLowerCase().startsWith('application/json')) {
      return reject(res, path, 400, invalid(`content-type: expected application/json, got '${contentType}'`));
    }
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return reject(
        res,
        path,
        400,
        invalid('There was an error parsing the body of your request: not a JSON object'),
      );
    }
    const parsed = messagesRequestSchema.safeParse(body);
    if (!parsed.success) return reject(res, path, 400, invalid(describeIssue(body, parsed.error.issues)));
    const request = parsed.data;
    const problem = semanticProblem(request, body as Record<string, unknown>);
    if (problem) return reject(res, path, 400, invalid(problem));
    if (options.models && !options.models.includes(request.model)) {
      return reject(res, path, 404, { type: 'not_found_error', message: `model: ${request.model}` });
    }
    recorded.message = request;
    const answer = queue.shift() ??
      double.fallback?.(request) ?? {
        kind: 'error' as const,
        status: 500,
        error: { type: 'api_error' as const, message: 'anthropic double: no answer queued' },
      };
    await respond(res, request, answer);
  };

  const server = await startLoopbackServer(
    (req, res, arrived) => handle(req, res, arrived.path, arrived.json),
    (message) => ({ type: 'error', error: { type: 'api_error', message } }),
  );
  (double as { baseURL: string }).baseURL = `${server.origin}/v1`;
  return double;
}
