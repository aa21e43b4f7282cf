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
import { MCP_PATH } from '../src/mcp/http';
import { OPERATIONS } from '../src/operations';
import { contractHash } from '../src/operations/contract';
import { EXTENSION_TOOLS } from '../src/operations/extensions';
import { fastifyPath, type Operation } from '../src/operations/registry';
import { bearer, createTestApp, type TestApp } from './helpers/app';

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
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });

    const documented: string[] = [];
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { operationId?: string }>>,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation?.operationId)
          documented.push(`${method.toUpperCase()} ${path} ${operation.operationId}`);
      }
    }
    expect(sorted(documented)).toEqual(sorted(OPERATIONS.map((op) => `${op.method} ${op.path} ${op.tool}`)));
  });

  it('documents the headers each operation reads, its error statuses with the envelope, and its response headers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    type Param = { in: string; name: string; required?: boolean };
    type Documented = {
      parameters?: Param[];
      responses: Record<
        string,
        { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
      >;
      'x-svc-status'?: string;
    };
    const documented = (op: Operation) => doc.paths[op.path][op.method.toLowerCase()] as Documented;
    const headersOf = (op: Operation) =>
      new Map((documented(op).parameters ?? []).filter((p) => p.in === 'header').map((p) => [p.name, p]));
    for (const op of OPERATIONS) {
      const headers = headersOf(op);
      const responses = documented(op).responses;
      expect(headers.has('project-id'), op.tool).toBe(op.scope === 'project');
      expect(headers.has('idempotency-key'), op.tool).toBe(op.method !== 'GET' && op.scope !== 'public');
      expect(headers.get('if-match')?.required ?? false, op.tool).toBe(op.ifMatch === true);
      expect(Object.keys(responses), op.tool).toEqual(expect.arrayContaining(['400', '500']));
      if (op.scope !== 'public') expect(responses['401'], op.tool).toBeDefined();
      if (op.ifMatch) expect(Object.keys(responses), op.tool).toEqual(expect.arrayContaining(['412', '428']));
      expect(documented(op)['x-svc-status'], op.tool).toBe(op.notImplemented ? 'not_implemented' : undefined);
    }
    const settingsUpdate = OPERATIONS.find((op) => op.ifMatch) as Operation;
    const error = documented(settingsUpdate).responses['412']?.content?.['application/json']?.schema as {
      properties: { error: { required: string[] } };
    };
    expect(error.properties.error.required).toEqual(['code', 'message', 'request_id']);
    const create = OPERATIONS.find((op) => op.tool === 'projects_create') as Operation;
    expect(Object.keys(documented(create).responses[String(create.status)]?.headers ?? {})).toContain(
      'idempotent-replayed',
    );
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
