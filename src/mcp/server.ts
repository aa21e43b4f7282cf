/**
 * The MCP server: one tool per declared operation, under its tool name, with the operation's
 * tool input schema. A tool call is not executed here: it becomes the HTTP request the
 * operation declares (path params into the path, `project_id` into `Project-ID`, the query
 * fields into the query string, the rest as the JSON body) and goes through the same HTTP
 * pipeline as any client (auth, project resolution, idempotency, validation, error envelope).
 * The transport decides how that request travels: in-process `inject()` or `fetch`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { describeUnsafeInput } from '../http/unsafe-strings';
import { toolDescription } from '../operations/contract';
import { type HttpMethod, type Operation, toolInputSchema } from '../operations/registry';
import { renamedArguments, requestFields } from '../operations/tool-arguments';
import { errorInToolTerms, isRecord } from './error-terms';
import {
  describeEvent,
  type EventListener,
  type ProgressSink,
  progressSinkFor,
  waitsOnRun,
} from './run-progress';

export interface ToolHttpRequest {
  method: HttpMethod;
  /** Path and query string, e.g. `/api/v1/tasks/tsk_1/status?run_id=run_2`. */
  url: string;
  /** Lower-case header names (no Authorization: the transport adds the caller's key). */
  headers: Record<string, string>;
  /** JSON body, when the request has one. */
  body?: unknown;
  /**
   * Set for a call that waits on a run: the request asks for the operation's event stream
   * (`text/event-stream`) and hands each event here as it arrives; the response then carries a
   * body only when it is an error.
   */
  onEvent?: EventListener;
  /** Aborts the request (the MCP call was canceled, or its connection closed). */
  signal?: AbortSignal;
}

export interface ToolHttpResponse {
  status: number;
  /** Parsed JSON body; undefined for an empty body. */
  body: unknown;
}

/** Sends one request through the HTTP pipeline on behalf of the MCP caller. */
export type ToolCaller = (request: ToolHttpRequest) => Promise<ToolHttpResponse>;

function appendQuery(search: URLSearchParams, name: string, value: unknown) {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) appendQuery(search, name, item);
    return;
  }
  search.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** Tool arguments that travel as request headers (the HTTP pipeline reads them there). */
export const HEADER_ARGUMENTS: Readonly<Record<string, string>> = {
  idempotency_key: 'idempotency-key',
  if_match: 'if-match',
};

/**
 * The HTTP request a tool call stands for. Arguments the operation has no place for are
 * reported as a local `validation_failed` result rather than silently dropped.
 */
export function toolRequest(
  op: Operation,
  args: Record<string, unknown>,
): { request: ToolHttpRequest } | { error: ToolHttpResponse } {
  // NUL, lone surrogates and over-deep JSON are refused as the HTTP pipeline would refuse them;
  // checked here because a lone surrogate cannot even be put into a URL or a header.
  const unsafe = describeUnsafeInput(args, 'arguments');
  if (unsafe) return { error: localValidationError(op, unsafe) };
  const named = requestFields(op, args);
  if ('conflict' in named) return { error: localValidationError(op, named.conflict) };
  const rest = named.fields;
  const headers: Record<string, string> = {};
  const missing: string[] = [];
  const path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || value === '') {
      missing.push(name);
      return '_';
    }
    return encodeURIComponent(String(value));
  });
  if (missing.length > 0) {
    const names = missing.map((field) => renamedArguments(op).get(field) ?? field);
    return { error: localValidationError(op, `missing required argument(s): ${names.join(', ')}`) };
  }
  // Header arguments: `idempotency_key` (writes) and `if_match` (configuration edits), unless the
  // operation declares a field of that name itself.
  const declared = new Set([
    ...Object.keys(op.query?.shape ?? {}),
    ...(op.body instanceof z.ZodObject ? Object.keys(op.body.shape) : []),
  ]);
  for (const [arg, header] of Object.entries(HEADER_ARGUMENTS)) {
    if (declared.has(arg) || !(arg in rest)) continue;
    const value = rest[arg];
    delete rest[arg];
    if (value !== undefined && value !== null) headers[header] = String(value);
  }
  if (op.scope === 'project' && 'project_id' in rest) {
    const projectId = rest.project_id;
    delete rest.project_id;
    if (projectId !== undefined && projectId !== null) headers['project-id'] = String(projectId);
  }

  const queryNames = new Set(Object.keys(op.query?.shape ?? {}));
  const search = new URLSearchParams();
  let body: unknown;
  if (op.method === 'GET') {
    // Everything left is query: unknown names reach the strict query schema and are rejected there.
    for (const [name, value] of Object.entries(rest)) appendQuery(search, name, value);
  } else {
    const bodyFields: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(rest)) {
      if (queryNames.has(name)) appendQuery(search, name, value);
      else bodyFields[name] = value;
    }
    if (op.body instanceof z.ZodObject) body = bodyFields;
    else if (op.body) body = bodyFields.body;
    else if (Object.keys(bodyFields).length > 0) {
      return {
        error: localValidationError(op, `unknown argument(s): ${Object.keys(bodyFields).join(', ')}`),
      };
    }
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  const query = search.toString();
  return {
    request: {
      method: op.method,
      url: query ? `${path}?${query}` : path,
      headers,
      ...(body === undefined ? {} : { body }),
    },
  };
}

function localValidationError(op: Operation, message: string): ToolHttpResponse {
  return {
    status: 400,
    body: { error: { code: 'validation_failed', message: `${op.tool}: ${message}`, request_id: null } },
  };
}

/** The tool result for an HTTP response: the JSON as text (+ structuredContent); non-2xx is an error. */
export function toolResult(response: ToolHttpResponse): CallToolResult {
  const ok = response.status >= 200 && response.status < 300;
  const text = response.body === undefined ? '' : JSON.stringify(response.body, null, 2);
  return {
    content: [{ type: 'text', text: text || `HTTP ${response.status}` }],
    ...(isRecord(response.body) ? { structuredContent: response.body } : {}),
    ...(ok ? {} : { isError: true }),
  };
}

export async function callTool(
  op: Operation,
  args: unknown,
  caller: ToolCaller,
  call: { progress?: ProgressSink | undefined; signal?: AbortSignal | undefined } = {},
): Promise<CallToolResult> {
  const input = isRecord(args) ? args : {};
  if (waitsOnRun(op, input)) {
    // Follow the run to its end (each event a progress notification), then answer the page.
    const { wait: _wait, ...read } = input;
    const built = toolRequest(op, read);
    if ('error' in built) return toolResult(built.error);
    let events = 0;
    const onEvent = (event: Record<string, unknown>) => call.progress?.(++events, describeEvent(event));
    const followed = await caller({
      ...built.request,
      onEvent,
      ...(call.signal ? { signal: call.signal } : {}),
    });
    if (followed.status !== 200) return callFailed(op, followed);
    return callTool(op, read, caller);
  }
  const built = toolRequest(op, input);
  if ('error' in built) return toolResult(built.error);
  const response = await caller(built.request);
  const ok = response.status >= 200 && response.status < 300;
  return ok ? toolResult(response) : callFailed(op, response);
}

/** An error answer as a tool result: it names the tool's arguments, not the HTTP request's headers and parts. */
const callFailed = (op: Operation, response: ToolHttpResponse) =>
  toolResult({ ...response, body: errorInToolTerms(response.body, renamedArguments(op)) });

export const MCP_SERVER_INFO = { name: 'svc', version: '0.1.0' } as const;

/**
 * An MCP server with one tool per operation. Tool calls are forwarded with their raw
 * arguments: validation is the HTTP pipeline's, so an invalid call answers the same
 * `validation_failed` envelope a REST client gets (the SDK's own pre-validation, which would
 * answer in another shape, is replaced).
 */
export function createMcpServer(
  operations: readonly Operation[],
  caller: ToolCaller,
  options: { projectPinned?: boolean } = {},
): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    instructions:
      'Tools of the svc code review service. Each tool is one HTTP operation of /api/v1; results are the JSON responses. Project-scoped tools take `project_id` when the key is not pinned to a project. Id arguments are named `<resource>_id` (`finding_id`, `pull_request_id`).',
  });
  const byName = new Map<string, Operation>();
  for (const op of operations) {
    byName.set(op.tool, op);
    server.registerTool(
      op.tool,
      {
        description: toolDescription(op),
        inputSchema: toolInputSchema(op, options),
        annotations: {
          title: op.summary,
          readOnlyHint: op.method === 'GET',
          destructiveHint: op.method === 'DELETE',
          idempotentHint: op.method === 'GET' || op.method === 'DELETE',
          openWorldHint: false,
        },
      },
      (args: unknown) => callTool(op, args, caller),
    );
  }
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const op = byName.get(request.params.name);
    if (!op) {
      return {
        content: [
          { type: 'text', text: `unknown tool ${request.params.name}: not in this connection's tool set` },
        ],
        isError: true,
      };
    }
    const progress = progressSinkFor(request.params._meta?.progressToken, extra.sendNotification);
    return callTool(op, request.params.arguments ?? {}, caller, { progress, signal: extra.signal });
  });
  return server;
}
