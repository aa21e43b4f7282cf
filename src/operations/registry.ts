/**
 * The operation declaration: every API operation is declared exactly once, here-typed, and
 * from that one list come the Fastify routes, the OpenAPI document, the tool catalog and the
 * MCP tools. Nothing else may add an `/api/v1` operation.
 */
import type { SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Principal } from '../core/keys';
import type { Services } from './services';
import { renamedArguments } from './tool-arguments';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * - public: no key (health-like discovery).
 * - workspace: any valid key; not tied to a project (projects create, keys).
 * - project: needs a project: a pinned key's project, or `Project-ID` with a workspace key.
 */
export type Scope = 'public' | 'workspace' | 'project';

export interface OperationContext {
  services: Services;
  principal: Principal;
  workspaceId: string;
  /** The resolved project for project-scoped operations; null otherwise. */
  projectId: string | null;
  requestId: string;
  /** Request headers the handlers care about (lower-case names). */
  headers: Record<string, string | undefined>;
  /** Lets a handler set a response header (ETag). */
  setHeader(name: string, value: string): void;
  /** Lets a handler choose a different success status than the declared one (e.g. 200 on an existing record). */
  setStatus(status: number): void;
  /**
   * Records an acknowledgement whose answer is known before it is written: `write` stores the
   * work as one statement (`Engine.enqueue`), guarded, for an operation declared
   * `acknowledgement` sent with an Idempotency-Key, by the statement that records the key with
   * `answer` (null otherwise), and says whether it wrote. When it did not (the key was taken by
   * another request), the request gets that request's answer instead.
   */
  acknowledge?(answer: unknown, write: (guard: SQL | null) => Promise<boolean>): Promise<void>;
}

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface OperationSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
  R extends z.ZodType,
> {
  /** The spec's tool name, e.g. `tasks_get`; also the OpenAPI operationId. */
  tool: string;
  method: HttpMethod;
  /** OpenAPI-style path with `{param}` placeholders, starting with /api/v1. */
  path: string;
  summary: string;
  description?: string;
  scope: Scope;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  /** Success status; default 200 (201 for creates is set by the declaration). */
  status?: 200 | 201 | 202 | 204;
  /**
   * The other success status the handler may choose (`ctx.setStatus`), e.g. 200 when a create
   * finds the record already there; the OpenAPI document lists it with the same schema.
   */
  alternateStatus?: 200;
  /** True when the behaviour belongs to a later issue: the handler answers 501 `not_implemented`. */
  notImplemented?: boolean;
  /** True when the operation edits a revisioned configuration and requires `If-Match`. */
  ifMatch?: boolean;
  /**
   * True when the operation changes what every project of the workspace sees (its reviewers,
   * their events, its skill revisions): a project-pinned key is refused with 403 `forbidden`.
   */
  workspaceWrite?: boolean;
  /**
   * True when the operation's one write goes through `ctx.acknowledge`, after reads only: its
   * Idempotency-Key is then recorded by that write's statement (src/http/idempotent-ack.ts), not
   * held `in_progress` around the handler.
   */
  acknowledgement?: boolean;
  /**
   * True when the answer carries a secret (a new key): it is sent with `Cache-Control: no-store`
   * (src/http/security-headers.ts), and the OpenAPI document says so.
   */
  answersSecret?: boolean;
  /**
   * Set when the operation also answers as Server-Sent Events, to a request that accepts
   * `text/event-stream` (src/http/event-stream.ts); `handler` answers every other request.
   */
  eventStream?: EventStreamSpec<OperationInput<P, Q, B>>;
  handler: (input: OperationInput<P, Q, B>, ctx: OperationContext) => Promise<z.infer<R>>;
}

export type OperationInput<P, Q, B> = {
  params: P extends AnyObject ? z.infer<P> : Record<string, never>;
  query: Q extends AnyObject ? z.infer<Q> : Record<string, never>;
  body: B extends z.ZodType ? z.infer<B> : undefined;
};

/** One Server-Sent Event: its `id` and `event` name, and the JSON sent as its `data`. */
export interface StreamedEvent {
  id: string;
  event: string;
  [field: string]: unknown;
}

export interface EventStreamSpec<I> {
  /** The schema of an event's data, for the OpenAPI document. */
  event: z.ZodType;
  /**
   * Checks the request as `handler` would (a missing record throws its ApiError before anything
   * is sent), then gives the events to send; they end when `signal` aborts (the client left).
   */
  open(input: I, ctx: OperationContext): Promise<(signal: AbortSignal) => AsyncIterable<StreamedEvent>>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds operations of every shape
export type Operation = OperationSpec<any, any, any, any>;

export function defineOperation<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(spec: OperationSpec<P, Q, B, R>): Operation {
  return spec as Operation;
}

/** Write methods accept `Idempotency-Key`. */
export const isWrite = (op: Operation) => op.method !== 'GET';

/** Fastify's path syntax (`:id`) for an OpenAPI-style path (`{id}`). */
export const fastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * The tool's single input object: path params, query and body fields side by side (the body
 * fields flattened), id arguments named `<resource>_id` (./tool-arguments.ts), plus `project_id`
 * on project-scoped operations: required, unless the caller's key is pinned to a project
 * (`projectPinned`), which then defaults to its own.
 */
export function toolInputSchema(op: Operation, options: { projectPinned?: boolean } = {}): AnyObject {
  const shape: Record<string, z.ZodType> = {};
  if (op.scope === 'project') {
    shape.project_id = options.projectPinned
      ? z.string().optional().describe("The project to act on; your key's own project when left out.")
      : z.string().describe('The project to act on (a key pinned to a project may leave it out).');
  }
  const fields: Record<string, z.ZodType> = { ...op.params?.shape, ...op.query?.shape };
  if (op.body instanceof z.ZodObject) Object.assign(fields, op.body.shape);
  else if (op.body) fields.body = op.body;
  const renames = renamedArguments(op);
  for (const [field, schema] of Object.entries(fields)) {
    const name = renames.get(field) ?? field;
    if (name !== field && name in fields) throw new Error(`${op.tool}: argument ${name} is declared twice`);
    shape[name] = schema;
  }
  // Headers a tool caller cannot send otherwise travel as arguments (see src/mcp/server.ts).
  if (isWrite(op) && !('idempotency_key' in shape)) {
    shape.idempotency_key = z
      .string()
      .optional()
      .describe('Idempotency-Key: the same key with the same arguments replays the first answer.');
  }
  if (op.ifMatch && !('if_match' in shape)) {
    shape.if_match = z.string().describe('If-Match: the current configuration revision, quoted (e.g. "3").');
  }
  return z.object(shape);
}
