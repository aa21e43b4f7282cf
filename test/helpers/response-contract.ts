/**
 * The response contract: every answer an in-process svc gives a test must be one its served
 * OpenAPI document describes — a status the operation lists, a body that validates against the
 * schema of that status, and the svc headers (`ETag`, `Idempotent-Replayed`, `Retry-After`,
 * `X-Request-Id`, `X-Content-Type-Options`, `Cache-Control`) only where that status declares
 * them, in their declared form. Answers of
 * routes the document does not describe (webhooks, MCP, the console, unknown paths) are held to
 * the error envelope when they are JSON errors.
 *
 * `watchResponses(app)` adds the check as an onSend hook; `takeViolations(app)` hands what broke
 * the contract to whoever closes the app (createTestApp's `close()` throws them). Validators are
 * compiled once per process and (operation, status), on first use.
 */
import { appendFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { expect } from 'vitest';

type Json = Record<string, unknown>;

interface OpenApiDocument {
  info: { 'x-contract-hash'?: string };
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, Json> }>>;
  components?: Json;
}

export interface ObservedResponse {
  method: string;
  /** The route pattern Fastify matched (`/api/v1/reviews/:review_id`); undefined when none did. */
  route: string | undefined;
  url: string;
  status: number;
  headers: Record<string, string | number | string[] | undefined>;
  /** The body as sent; null when there is none. */
  body: string | null;
}

/** Headers svc sets whose presence and form the document describes. */
const DESCRIBED_HEADERS = [
  'cache-control',
  'etag',
  'idempotent-replayed',
  'retry-after',
  'x-content-type-options',
  'x-request-id',
];

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Validators for one document: built once per process and contract hash. */
class ContractValidator {
  private readonly ajv: Ajv2020;
  private readonly byRoute = new Map<string, { path: string; method: string }>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
    addFormats(this.ajv);
    // The whole document under one id: a response schema is compiled by reference into it, so
    // its `#/components/...` references resolve where the document put them.
    this.ajv.addSchema(doc as unknown as Json, 'openapi.json');
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        this.byRoute.set(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`, { path, method });
      }
    }
  }

  private resolve(value: Json | undefined): Json | undefined {
    let current = value;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 5; hops++) {
      const parts = (current.$ref as string).replace(/^#\//, '').split('/');
      let target: unknown = this.doc;
      for (const part of parts)
        target = (target as Json | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
      current = target as Json | undefined;
    }
    return current;
  }

  private validator(key: string, schema: string | Json): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(typeof schema === 'string' ? { $ref: schema } : schema);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private errors(validate: ValidateFunction, value: unknown): string | null {
    if (validate(value)) return null;
    return (validate.errors ?? [])
      .slice(0, 3)
      .map(
        (e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      )
      .join('; ');
  }

  /** What is wrong with `res` against the document; empty when nothing is. */
  check(res: ObservedResponse): string[] {
    const problems: string[] = [];
    const documented = res.route ? this.byRoute.get(`${res.method} ${res.route}`) : undefined;
    const contentType = String(res.headers['content-type'] ?? '');
    const parsed = () => {
      try {
        return { ok: true as const, value: JSON.parse(res.body ?? '') as unknown };
      } catch {
        return { ok: false as const };
      }
    };

    if (!documented) {
      // Not an operation: only its JSON errors are held to the envelope.
      if (res.status >= 400 && contentType.startsWith('application/json')) {
        const body = parsed();
        const problem = body.ok
          ? this.errors(this.validator('#Error', 'openapi.json#/components/schemas/Error'), body.value)
          : 'the body is not JSON';
        if (problem) problems.push(`error body is not the envelope: ${problem}`);
      }
      return problems;
    }

    const operation = this.doc.paths[documented.path]?.[documented.method];
    const status = String(res.status);
    const responsePointer = `openapi.json#/${pointer('paths', documented.path, documented.method, 'responses', status)}`;
    let response = operation?.responses?.[status];
    let schemaRef = `${responsePointer}/content/application~1json/schema`;
    if (response && typeof response.$ref === 'string') {
      schemaRef = `openapi.json${response.$ref}/content/application~1json/schema`;
      response = this.resolve(response);
    }
    if (!response) {
      problems.push(`status ${status} is not documented for ${operation?.operationId ?? documented.path}`);
      return problems;
    }

    const content = response.content as Record<string, { schema?: Json }> | undefined;
    if (!content) {
      if (res.body) problems.push(`status ${status} is documented without a body, but one was sent`);
    } else if (content['application/json']) {
      if (!contentType.startsWith('application/json'))
        problems.push(`content-type is ${contentType || 'missing'}, documented application/json`);
      const body = parsed();
      const problem = body.ok
        ? this.errors(this.validator(`${operation?.operationId} ${status}`, schemaRef), body.value)
        : 'the body is not JSON';
      if (problem) problems.push(`body does not match the ${status} schema: ${problem}`);
    } else {
      const types = Object.keys(content);
      if (!types.some((t) => contentType.startsWith(t)))
        problems.push(`content-type is ${contentType || 'missing'}, documented ${types.join(' or ')}`);
    }

    const declared = new Map(
      Object.entries((response.headers as Record<string, Json> | undefined) ?? {}).map(([name, h]) => [
        name.toLowerCase(),
        this.resolve(h),
      ]),
    );
    for (const name of DESCRIBED_HEADERS) {
      const value = res.headers[name];
      if (value === undefined) continue;
      const header = declared.get(name);
      if (!header) {
        problems.push(`header ${name} is sent but not documented for status ${status}`);
        continue;
      }
      const schema = header.schema as Json | undefined;
      if (schema) {
        const problem = this.errors(
          this.validator(`header ${JSON.stringify(schema)}`, schema),
          String(value),
        );
        if (problem) problems.push(`header ${name}: ${problem}`);
      }
    }
    return problems;
  }
}

const CACHE = Symbol.for('svc.test.responseContract');
type Cache = Map<string, ContractValidator>;
const cache = (): Cache => {
  const holder = globalThis as unknown as Record<symbol, Cache | undefined>;
  holder[CACHE] ??= new Map();
  return holder[CACHE];
};

/** The validator for `doc`, shared by every app of the process with the same contract. */
export function contractValidator(doc: OpenApiDocument): ContractValidator {
  const key = doc.info['x-contract-hash'] ?? JSON.stringify(doc).length.toString();
  let validator = cache().get(key);
  if (!validator) {
    validator = new ContractValidator(doc);
    cache().set(key, validator);
  }
  return validator;
}

export interface Violation {
  test: string | undefined;
  request: string;
  status: number;
  problems: string[];
}

interface Watch {
  violations: Violation[];
  exempt: string | null;
  validator: ContractValidator | null;
  checked: number;
}

const watches = new WeakMap<FastifyInstance, Watch>();

const currentTest = (): string | undefined => expect.getState().currentTestName;

/**
 * Holds every answer of `app` to its own served document. Call before `app.ready()`.
 */
export function watchResponses(app: FastifyInstance): void {
  const watch: Watch = { violations: [], exempt: null, validator: null, checked: 0 };
  watches.set(app, watch);
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (watch.exempt) return payload;
    // Streams (the console's files, MCP's event streams) are not JSON answers to hold.
    if (payload !== null && payload !== undefined && typeof payload !== 'string' && !Buffer.isBuffer(payload))
      return payload;
    watch.validator ??= contractValidator((app as unknown as { swagger(): OpenApiDocument }).swagger());
    const observed: ObservedResponse = {
      method: request.method,
      route: request.routeOptions.url,
      url: request.url,
      status: reply.statusCode,
      headers: reply.getHeaders(),
      body: payload === null || payload === undefined ? null : String(payload),
    };
    watch.checked++;
    const problems = watch.validator.check(observed);
    if (problems.length > 0)
      watch.violations.push({
        test: currentTest(),
        request: `${request.method} ${request.url}`,
        status: reply.statusCode,
        problems,
      });
    return payload;
  });
}

/**
 * Stops holding `app`'s answers to the document, for a test that sends deliberately
 * non-conforming traffic whose answers are not the contract's to describe. Say why.
 */
export function exemptFromResponseContract(app: FastifyInstance, reason: string): void {
  const watch = watches.get(app);
  if (watch) watch.exempt = reason;
}

/** The violations `app` collected (then forgets them), and how many answers it checked. */
export function takeViolations(app: FastifyInstance): { violations: Violation[]; checked: number } {
  const watch = watches.get(app);
  if (!watch) return { violations: [], checked: 0 };
  const taken = { violations: watch.violations, checked: watch.checked };
  watch.violations = [];
  if (process.env.SVC_CONTRACT_COUNT_FILE)
    appendFileSync(process.env.SVC_CONTRACT_COUNT_FILE, `${watch.checked}\n`);
  watch.checked = 0;
  return taken;
}

export function describeViolations(violations: readonly Violation[]): string {
  const shown = violations
    .slice(0, 20)
    .map((v) => `- ${v.request} → ${v.status}${v.test ? ` (in "${v.test}")` : ''}: ${v.problems.join('; ')}`);
  const more = violations.length > 20 ? [`… and ${violations.length - 20} more`] : [];
  return [
    `${violations.length} response(s) broke the OpenAPI document (test/helpers/response-contract.ts):`,
    ...shown,
    ...more,
  ].join('\n');
}
