/**
 * The contract: the spec's Endpoints section is the checklist. The declared operations, the
 * mounted routes, the OpenAPI document, the tool catalog and the MCP tool list are one and the
 * same set: the spec's operations plus the documented extensions. The contract hash is carried
 * by the OpenAPI document and the catalog and moves with any change to the declaration.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_ERROR_STATUS } from '../src/core/errors';
import { PUBLIC_ROUTES } from '../src/http/openapi-http';
import { MCP_PATH } from '../src/mcp/http';
import { OPERATIONS } from '../src/operations';
import { contractHash } from '../src/operations/contract';
import { EXTENSION_TOOLS } from '../src/operations/extensions';
import { fastifyPath, type Operation } from '../src/operations/registry';
import { bearer, createTestApp, type TestApp } from './helpers/app';
import { contractValidator, type ObservedResponse } from './helpers/response-contract';

const SPEC_FILE = join(process.cwd(), 'spec', 'code-review-service-api.md');
const SHARED_SPEC_FILE = join(process.cwd(), '..', 'shared', 'spec', 'code-review-service-api.md');

interface SpecOperation {
  method: string;
  /** Full path, with the /api/v1 prefix. */
  path: string;
  /** The spec's tool name; null where the spec gives none (POST /projects). */
  tool: string | null;
}

/** The (method, path, tool) rows of the spec's "## Endpoints" section. */
function parseSpecEndpoints(markdown: string): SpecOperation[] {
  const start = markdown.indexOf('\n## Endpoints');
  if (start < 0) throw new Error('the spec has no "## Endpoints" section');
  const next = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, next < 0 ? undefined : next);
  const found: SpecOperation[] = [];

  for (const line of section.split('\n')) {
    const row = /^\|\s*`(GET|POST|PATCH|PUT|DELETE) (\/[^`\s]*)`\s*\|(.*)\|\s*$/.exec(line);
    if (!row) continue;
    const cells = (row[3] ?? '').split('|');
    const last = (cells[cells.length - 1] ?? '').trim();
    const tool = /^`([a-z][a-z0-9_]*)`/.exec(last)?.[1] ?? null;
    found.push({ method: row[1] as string, path: `/api/v1${row[2]}`, tool });
  }

  // "For each collection below, `GET /<collection>/{id}` and `GET /<collection>` exist".
  const intro = section.indexOf('For each collection below');
  if (intro < 0) throw new Error('the Endpoints section lost its collections paragraph');
  const listStart = section.indexOf('\n\n', intro) + 2;
  const listEnd = section.indexOf('\n\n', listStart);
  const listParagraph = section.slice(listStart, listEnd);
  const getOnly = /`([a-z][a-z-]*)` has get by id only \(`([a-z_]+)`\)/.exec(listParagraph);
  const collections = [...listParagraph.matchAll(/`([a-z][a-z-]*)`/g)]
    .map((m) => m[1] as string)
    .filter((c) => c !== getOnly?.[1] && c !== getOnly?.[2]);
  for (const collection of collections) {
    const base = collection.replaceAll('-', '_');
    found.push({ method: 'GET', path: `/api/v1/${collection}/{id}`, tool: `${base}_get` });
    found.push({ method: 'GET', path: `/api/v1/${collection}`, tool: `${base}_list` });
  }
  if (getOnly) found.push({ method: 'GET', path: `/api/v1/${getOnly[1]}/{id}`, tool: getOnly[2] as string });
  return found;
}

const specMarkdown = readFileSync(SPEC_FILE, 'utf8');
const SPEC = parseSpecEndpoints(specMarkdown);
const specTools = SPEC.flatMap((s) => (s.tool ? [s.tool] : []));
const declaredTools = OPERATIONS.map((op) => op.tool);
const sorted = (values: Iterable<string>) => [...values].sort();
const key = (method: string, path: string) => `${method} ${path}`;

describe('the spec checklist', () => {
  it('is the committed copy of the shared spec', () => {
    if (existsSync(SHARED_SPEC_FILE)) expect(specMarkdown).toBe(readFileSync(SHARED_SPEC_FILE, 'utf8'));
  });

  it('parses every endpoint of the spec', () => {
    // 3 projects + 5 tasks + 8 reviews + 9 reviewers/skills + 14×2 collections + preferences + 10 additional.
    expect(SPEC).toHaveLength(3 + 5 + 8 + 9 + 28 + 1 + 10);
    expect(new Set(specTools).size).toBe(specTools.length);
    expect(SPEC).toContainEqual({ method: 'GET', path: '/api/v1/swarms/{id}', tool: 'swarms_get' });
    expect(SPEC).toContainEqual({
      method: 'GET',
      path: '/api/v1/metric-records',
      tool: 'metric_records_list',
    });
    expect(SPEC).toContainEqual({ method: 'GET', path: '/api/v1/preferences/{id}', tool: 'preferences_get' });
    expect(SPEC).toContainEqual({
      method: 'GET',
      path: '/api/v1/tasks/{task_id}/status',
      tool: 'tasks_status',
    });
    expect(SPEC).toContainEqual({ method: 'POST', path: '/api/v1/projects', tool: null });
  });
});

describe('the declaration', () => {
  it('declares each tool and each (method, path) once', () => {
    expect(new Set(declaredTools).size).toBe(declaredTools.length);
    const routes = OPERATIONS.map((op) => key(op.method, op.path));
    expect(new Set(routes).size).toBe(routes.length);
    for (const op of OPERATIONS) expect(op.path, op.tool).toMatch(/^\/api\/v1\//);
  });

  it('is exactly the spec operations plus the documented extensions', () => {
    for (const tool of EXTENSION_TOOLS)
      expect(specTools, `${tool} is in the spec, not an extension`).not.toContain(tool);
    expect(sorted(declaredTools)).toEqual(sorted(new Set([...specTools, ...EXTENSION_TOOLS])));
  });

  it('puts every spec tool on the spec method and path', () => {
    const byTool = new Map(OPERATIONS.map((op) => [op.tool, op]));
    for (const s of SPEC) {
      if (s.tool) {
        const op = byTool.get(s.tool);
        expect(op && key(op.method, op.path), s.tool).toBe(key(s.method, s.path));
      } else {
        const op = OPERATIONS.find((o) => o.method === s.method && o.path === s.path);
        expect(op, `${s.method} ${s.path} is declared`).toBeDefined();
        expect(EXTENSION_TOOLS, `${s.method} ${s.path} names its tool as an extension`).toContain(op?.tool);
      }
    }
  });

  it('gives every operation an object input and a response schema', () => {
    for (const op of OPERATIONS) {
      expect(op.response, op.tool).toBeInstanceOf(z.ZodType);
      if (op.body) expect(op.body, op.tool).toBeInstanceOf(z.ZodObject);
      if (op.method === 'GET') expect(op.body, op.tool).toBeUndefined();
      const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(sorted(Object.keys(op.params?.shape ?? {})), op.tool).toEqual(sorted(pathParams as string[]));
    }
  });
});

describe('the contract hash', () => {
  const base = contractHash(OPERATIONS);
  const withChanged = (tool: string, change: (op: Operation) => Operation) =>
    OPERATIONS.map((op) => (op.tool === tool ? change(op) : op));

  it('is a SHA-256 hex digest, independent of declaration order', () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(contractHash([...OPERATIONS].reverse())).toBe(base);
  });

  it('changes when any schema, route or flag of the declaration changes', () => {
    const review = OPERATIONS.find((op) => op.tool === 'reviews_create') as Operation;
    const variants: Operation[][] = [
      withChanged('reviews_create', (op) => ({
        ...op,
        body: review.body.extend({ extra: z.string().optional() }),
      })),
      withChanged('reviews_get', (op) => ({ ...op, response: op.response.extend({ extra: z.boolean() }) })),
      withChanged('reviews_list', (op) => ({ ...op, query: op.query.extend({ q: z.string().optional() }) })),
      withChanged('reviews_get', (op) => ({
        ...op,
        params: z.strictObject({ review_id: z.string().min(2) }),
      })),
      withChanged('reviews_get', (op) => ({ ...op, path: `${op.path}/x` })),
      withChanged('reviews_get', (op) => ({ ...op, method: 'POST' })),
      withChanged('reviews_get', (op) => ({ ...op, scope: 'workspace' })),
      withChanged('reviews_create', (op) => ({ ...op, status: 201 })),
      withChanged('reviews_get', (op) => ({ ...op, notImplemented: !op.notImplemented })),
      withChanged('reviews_get', (op) => ({ ...op, tool: 'reviews_read' })),
      OPERATIONS.filter((op) => op.tool !== 'swarms_get'),
    ];
    const hashes = variants.map((ops) => contractHash(ops));
    for (const hash of hashes) expect(hash).not.toBe(base);
    expect(new Set(hashes).size).toBe(hashes.length);
    // A copy with the same content hashes the same.
    expect(contractHash(OPERATIONS.map((op) => ({ ...op })))).toBe(base);
  });
});

type Json = Record<string, unknown>;
interface DocParameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: Json;
}
interface DocResponse {
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: unknown }>;
}
interface DocOperation {
  operationId?: string;
  parameters?: (DocParameter | { $ref: string })[];
  responses: Record<string, DocResponse | { $ref: string }>;
  security?: unknown;
  'x-svc-status'?: string;
}
// biome-ignore lint/suspicious/noExplicitAny: the served document, read by the tests
type Doc = any;

async function openApi(t: TestApp): Promise<Doc> {
  return (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
}

/** The object a local `$ref` (`#/components/...`) points at, or `value` itself. */
function deref<T>(doc: Doc, value: T | { $ref: string }): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    return value.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Doc, part: string) => node?.[part], doc) as T;
  }
  return value as T;
}

const documented = (doc: Doc, op: Operation) => doc.paths[op.path][op.method.toLowerCase()] as DocOperation;
const parametersOf = (doc: Doc, op: Operation) =>
  (documented(doc, op).parameters ?? []).map((p) => deref<DocParameter>(doc, p));
const responseOf = (doc: Doc, op: Operation, status: number) => {
  const response = documented(doc, op).responses[String(status)];
  return response ? deref<DocResponse>(doc, response) : undefined;
};

describe('routes, OpenAPI, tool catalog and MCP tools', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t?.close());

  it('mounts a route for every declared operation', () => {
    for (const op of OPERATIONS) {
      expect(t.app.hasRoute({ method: op.method, url: fastifyPath(op.path) }), op.tool).toBe(true);
    }
  });

  it('serves a valid OpenAPI 3.1 document, without a key, listing exactly the declared operations', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const validation = await new Validator().validate(doc);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);

    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, DocOperation>>)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId && !PUBLIC_ROUTES[path]?.[method])
          documented.push(`${method.toUpperCase()} ${path} ${operation.operationId}`);
      }
    }
    expect(sorted(documented)).toEqual(sorted(OPERATIONS.map((op) => `${op.method} ${op.path} ${op.tool}`)));
  });

  it('asks for the bearer key on every operation, and on none of the public routes', async () => {
    const doc = await openApi(t);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const op of OPERATIONS) expect(documented(doc, op).security, op.tool).toEqual([{ bearer: [] }]);

    const publicPaths = Object.entries(PUBLIC_ROUTES).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({ path, method })),
    );
    expect(publicPaths.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/healthz', '/api/v1/openapi.json', '/api/v1/tools']),
    );
    for (const { path, method } of publicPaths) {
      expect(doc.paths[path]?.[method]?.security, path).toEqual([]);
      expect(t.app.hasRoute({ method: method.toUpperCase() as 'GET', url: path }), path).toBe(true);
      // Documented as keyless, and so it is.
      const res = await t.app.inject({ method: method.toUpperCase() as 'GET', url: path });
      expect(res.statusCode, path).toBe(200);
    }
    const refused = await t.app.inject({ method: 'GET', url: '/api/v1/projects' });
    expect(refused.statusCode).toBe(401);
  });

  it('documents the headers each operation reads', async () => {
    const doc = await openApi(t);
    for (const op of OPERATIONS) {
      const headers = new Map(
        parametersOf(doc, op)
          .filter((p) => p.in === 'header')
          .map((p) => [p.name.toLowerCase(), p]),
      );
      expect(headers.has('project-id'), op.tool).toBe(op.scope === 'project');
      expect(headers.has('idempotency-key'), op.tool).toBe(op.method !== 'GET' && op.scope !== 'public');
      expect(headers.get('if-match')?.required ?? false, op.tool).toBe(op.ifMatch === true);
      // Authorization is the security scheme, not a parameter (OpenAPI ignores one named so).
      expect(headers.has('authorization'), op.tool).toBe(false);
    }
    const create = OPERATIONS.find((op) => op.tool === 'reviews_create') as Operation;
    expect(parametersOf(doc, create).find((p) => p.name === 'Idempotency-Key')?.schema).toMatchObject({
      type: 'string',
      maxLength: 255,
    });
  });

  it('documents limit and cursor, with their schemas, on every list', async () => {
    const doc = await openApi(t);
    const lists = OPERATIONS.filter((op) => {
      const schema = responseOf(doc, op, op.status ?? 200)?.content?.['application/json']?.schema as
        | { properties?: Record<string, unknown> }
        | undefined;
      return schema?.properties?.next_cursor !== undefined;
    });
    // Every `GET /<collection>` is a list; and a list is what answers `next_cursor`.
    const collections = OPERATIONS.filter((op) => op.method === 'GET' && op.tool.endsWith('_list'));
    expect(lists.length).toBeGreaterThanOrEqual(collections.length);
    for (const op of collections) expect(lists, op.tool).toContain(op);
    // The one list that is never paged: a workspace has a handful of installations, all answered
    // at once, so it takes no `limit` or `cursor` and its `next_cursor` is always null.
    const unpaged = await t.app.inject({
      method: 'GET',
      url: '/api/v1/installations',
      headers: bearer(t.workspaceKey),
    });
    expect(unpaged.json().next_cursor).toBeNull();
    for (const op of lists.filter((o) => o.tool !== 'installations_list')) {
      const query = new Map(
        parametersOf(doc, op)
          .filter((p) => p.in === 'query')
          .map((p) => [p.name, p]),
      );
      // 1-200, default 50, on every collection; a list of bigger items may page smaller (a diff's files).
      expect(query.get('limit')?.schema, op.tool).toMatchObject({
        type: 'integer',
        minimum: 1,
        maximum: expect.any(Number),
        default: expect.any(Number),
      });
      if (collections.includes(op))
        expect(query.get('limit')?.schema, op.tool).toMatchObject({ maximum: 200, default: 50 });
      expect(query.get('cursor')?.schema, op.tool).toMatchObject({ type: 'string' });
      expect(query.get('cursor')?.description, op.tool).toContain('next_cursor');
      const schema = responseOf(doc, op, 200)?.content?.['application/json']?.schema as {
        required: string[];
        properties: { next_cursor: unknown; data: { type: string } };
      };
      expect(schema.required, op.tool).toEqual(expect.arrayContaining(['object', 'data', 'next_cursor']));
      expect(schema.properties.data.type, op.tool).toBe('array');
      expect(schema.properties.next_cursor, op.tool).toEqual({ type: ['string', 'null'] });
    }
  });

  it('documents every status each operation can answer, errors with the envelope of their codes', async () => {
    const doc = await openApi(t);
    for (const op of OPERATIONS) {
      const statuses = Object.keys(documented(doc, op).responses).map(Number);
      const expected = [
        op.status ?? 200,
        ...(op.alternateStatus ? [op.alternateStatus] : []),
        400,
        408,
        431,
        500,
        503,
        401,
        403,
        ...(op.params || op.scope === 'project' || op.method !== 'GET' ? [404] : []),
        ...(op.method !== 'GET' ? [409, 413, 415] : []),
        ...(op.ifMatch ? [412, 428] : []),
        ...(op.notImplemented ? [501] : []),
      ];
      expect(statuses.sort(), op.tool).toEqual([...new Set(expected)].sort());
      // svc never answers 429: no rate limit is documented that does not exist.
      expect(statuses, op.tool).not.toContain(429);
      for (const status of statuses.filter((s) => s >= 400)) {
        const schema = deref(doc, responseOf(doc, op, status)?.content?.['application/json']?.schema) as {
          required: string[];
          properties: { error: { required: string[]; properties: { code: { enum: string[] } } } };
        };
        expect(schema.required, `${op.tool} ${status}`).toEqual(['error']);
        expect(schema.properties.error.required).toEqual(['code', 'message', 'request_id']);
        const codes = Object.entries(API_ERROR_STATUS)
          .filter(([, s]) => s === status)
          .map(([code]) => code);
        expect(schema.properties.error.properties.code.enum, `${op.tool} ${status}`).toEqual(codes);
      }
      expect(documented(doc, op)['x-svc-status'], op.tool).toBe(
        op.notImplemented ? 'not_implemented' : undefined,
      );
    }
    // A create that finds the record already there answers 200 with it, documented as such.
    const skillImport = OPERATIONS.find((op) => op.tool === 'skills_import') as Operation;
    expect(responseOf(doc, skillImport, 200)?.content).toEqual(responseOf(doc, skillImport, 201)?.content);
  });

  it('documents the response headers: X-Request-Id, ETag on revisioned reads and edits, Idempotent-Replayed on writes', async () => {
    const doc = await openApi(t);
    for (const op of OPERATIONS) {
      const success = responseOf(doc, op, op.status ?? 200);
      const headers = Object.keys(success?.headers ?? {});
      expect(headers, op.tool).toContain('X-Request-Id');
      expect(headers.includes('Idempotent-Replayed'), op.tool).toBe(op.method !== 'GET');
      const revisioned =
        op.ifMatch || (op.method === 'GET' && OPERATIONS.some((o) => o.ifMatch && o.path === op.path));
      expect(headers.includes('ETag'), op.tool).toBe(Boolean(revisioned));
      expect(Object.keys(responseOf(doc, op, 503)?.headers ?? {}), op.tool).toContain('Retry-After');
    }
    // What is documented is what is sent: a review's read carries its revision.
    const reviewsGet = OPERATIONS.find((op) => op.tool === 'reviews_get') as Operation;
    expect(Object.keys(responseOf(doc, reviewsGet, 200)?.headers ?? {})).toContain('ETag');
  });

  it('holds answers to the document: the response contract catches a wrong body, status or header', async () => {
    const doc = await openApi(t);
    const validator = contractValidator(doc);
    const answer = (over: Partial<ObservedResponse>): ObservedResponse => ({
      method: 'GET',
      route: '/api/v1/projects/:project_id',
      url: '/api/v1/projects/prj_1',
      status: 404,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_1' },
      body: JSON.stringify({ error: { code: 'not_found', message: 'no', request_id: 'req_1' } }),
      ...over,
    });
    expect(validator.check(answer({}))).toEqual([]);
    // A 404 whose code belongs to another status.
    expect(
      validator.check(
        answer({ body: JSON.stringify({ error: { code: 'conflict', message: 'x', request_id: 'r' } }) }),
      ),
    ).toEqual([expect.stringContaining('body does not match the 404 schema')]);
    // A status the operation does not list.
    expect(validator.check(answer({ status: 409 }))).toEqual([
      expect.stringContaining('409 is not documented'),
    ]);
    // A header the status does not declare.
    expect(validator.check(answer({ status: 404, headers: { ...answer({}).headers, etag: '"1"' } }))).toEqual(
      [expect.stringContaining('header etag is sent but not documented')],
    );
    // A success body missing a required field.
    expect(validator.check(answer({ status: 200, body: JSON.stringify({ project: {} }) }))[0]).toContain(
      'body does not match the 200 schema',
    );
    // A route outside the document still answers its errors in the envelope.
    expect(
      validator.check(answer({ route: undefined, url: '/nowhere', body: JSON.stringify({ message: 'x' }) })),
    ).toEqual([expect.stringContaining('not the envelope')]);
  });

  it('serves the tool catalog without a key, with the contract hash the OpenAPI document carries', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/tools' });
    expect(res.statusCode).toBe(200);
    const catalog = res.json() as {
      tools: {
        name: string;
        description: string;
        method: string;
        path: string;
        input_schema: { type: string };
      }[];
      contract_hash: string;
    };
    expect(sorted(catalog.tools.map((tool) => tool.name))).toEqual(sorted(declaredTools));
    for (const tool of catalog.tools) {
      const op = OPERATIONS.find((o) => o.tool === tool.name) as Operation;
      expect(key(tool.method, tool.path), tool.name).toBe(key(op.method, op.path));
      expect(tool.description.length, tool.name).toBeGreaterThan(0);
      expect(tool.input_schema.type, tool.name).toBe('object');
    }
    expect(catalog.contract_hash).toBe(contractHash(OPERATIONS));
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.info['x-contract-hash']).toBe(catalog.contract_hash);
  });

  it('lists exactly the declared tools over MCP, with the catalog input schemas', async () => {
    const client = new Client({ name: 'contract-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}${MCP_PATH}`), {
      requestInit: { headers: bearer(t.workspaceKey) },
    });
    await client.connect(transport);
    try {
      const listed = await client.listTools();
      expect(sorted(listed.tools.map((tool) => tool.name))).toEqual(sorted(declaredTools));
      const catalog = (await t.app.inject({ method: 'GET', url: '/api/v1/tools' })).json() as {
        tools: { name: string; input_schema: Record<string, unknown> }[];
      };
      const inputs = new Map(catalog.tools.map((tool) => [tool.name, tool.input_schema]));
      for (const tool of listed.tools) {
        const { $schema: _a, ...listedSchema } = tool.inputSchema as Record<string, unknown>;
        const { $schema: _b, ...catalogSchema } = inputs.get(tool.name) ?? {};
        expect(listedSchema, tool.name).toEqual(catalogSchema);
      }
    } finally {
      await client.close();
    }
  });
});
