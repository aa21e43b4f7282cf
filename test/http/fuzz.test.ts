/**
 * Schema-driven fuzz: every declared operation, with a workspace key and a project, gets hostile
 * values in each path parameter, each query parameter, its headers and each string field of its
 * body (top-level and nested, found by walking the operation's zod schemas as JSON Schema):
 * U+0000 and lone surrogates, which must be 400 `validation_failed`, and 10k-character strings,
 * wrong types, invalid percent-encoding, deeply nested JSON and `__proto__`/`constructor` keys,
 * which must never be a 5xx. Every non-2xx answer must be the error envelope
 * `{error:{code,message,request_id}}`. The same unsafe strings as MCP tool arguments must be a
 * tool error with `validation_failed`, never an internal error.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { injectCaller, MCP_PATH } from '../../src/mcp/http';
import { callTool } from '../../src/mcp/server';
import { OPERATIONS } from '../../src/operations';
import { fastifyPath, isWrite, type Operation, toolInputSchema } from '../../src/operations/registry';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, makeRepo, makeReposDir } from '../helpers/git';
import {
  deepArrayText,
  deepObjectText,
  LONG,
  OTHER_ENCODED,
  UNSAFE_ENCODED,
  UNSAFE_STRINGS,
  WRONG_TYPES,
} from '../helpers/hostile-values';

// ---------------------------------------------------------------------------------------------
// JSON Schema walking: a valid-looking sample, and every place a value can go.

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  $ref?: string;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  minItems?: number;
};

const jsonSchema = (type: z.ZodType): Schema =>
  z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Schema;

function deref(schema: Schema, root: Schema): Schema {
  if (!schema.$ref) return schema;
  if (schema.$ref === '#') return root;
  const name = schema.$ref.replace(/^#\/(\$defs|definitions)\//, '');
  const defs = (root.$defs ?? root.definitions ?? {}) as Record<string, Schema>;
  return defs[name] ?? {};
}

const options = (s: Schema) => s.anyOf ?? s.oneOf ?? s.allOf;
const typeOf = (s: Schema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

/** Strings that satisfy most patterns the declaration uses, tried in order. */
const STRING_CANDIDATES = [
  'fuzz',
  'fuzz-1',
  'openai/gpt-4o-mini',
  'abcdef1234567',
  'a'.repeat(64),
  'note.added',
  'P1',
  'security/weak-hash',
  'x',
];

function sampleString(s: Schema): string {
  if (s.format === 'date-time') return '2099-01-01T00:00:00Z';
  const pattern = s.pattern ? new RegExp(s.pattern, 'u') : null;
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Number.POSITIVE_INFINITY;
  for (const candidate of STRING_CANDIDATES) {
    if ((!pattern || pattern.test(candidate)) && candidate.length >= min && candidate.length <= max) {
      return candidate;
    }
  }
  return 'x'.repeat(Math.max(min, 1));
}

/** A value the schema probably accepts: required properties only, first options, minimums. */
function sample(schema: Schema, root: Schema, depth = 0): unknown {
  const s = deref(schema, root);
  if (depth > 8) return null;
  if ('const' in s) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alternatives = options(s);
  if (alternatives) {
    const pick = alternatives.find((o) => deref(o, root).type !== 'null') ?? alternatives[0];
    return pick ? sample(pick, root, depth + 1) : null;
  }
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = sample(s.properties?.[key] ?? {}, root, depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items ?? {}, root, depth + 1));
    case 'string':
      return sampleString(s);
    case 'integer':
    case 'number':
      return Math.max(typeof s.minimum === 'number' ? s.minimum : 1, 1);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return 'fuzz';
  }
}

type Path = (string | number)[];
interface Place {
  path: Path;
  /** The container schema at each step of `path` (index i: the container holding path[i]). */
  containers: Schema[];
  kind: 'string' | 'value' | 'object';
}

/** Every field (any type), every string leaf and every object of a body schema. */
function places(
  schema: Schema,
  root: Schema,
  path: Path = [],
  containers: Schema[] = [],
  depth = 0,
): Place[] {
  const s = deref(schema, root);
  if (depth > 6) return [];
  const found: Place[] = [];
  const alternatives = options(s);
  if (alternatives) {
    for (const option of alternatives) found.push(...places(option, root, path, containers, depth + 1));
    return found;
  }
  if (path.length > 0) found.push({ path, containers, kind: 'value' });
  switch (typeOf(s)) {
    case 'string':
      found.push({ path, containers, kind: 'string' });
      break;
    case 'object': {
      found.push({ path, containers, kind: 'object' });
      for (const [key, property] of Object.entries(s.properties ?? {})) {
        found.push(...places(property, root, [...path, key], [...containers, s], depth + 1));
      }
      if (typeof s.additionalProperties === 'object') {
        found.push(
          ...places(s.additionalProperties, root, [...path, 'fuzz_key'], [...containers, s], depth + 1),
        );
      }
      break;
    }
    case 'array':
      if (s.items) found.push(...places(s.items, root, [...path, 0], [...containers, s], depth + 1));
      break;
  }
  return found;
}

/** `base` with `value` at `place.path`, containers on the way filled with their samples. */
function withValue(base: unknown, place: Place, value: unknown, root: Schema): unknown {
  if (place.path.length === 0) return value;
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let cursor = copy;
  place.path.forEach((step, i) => {
    if (i === place.path.length - 1) {
      cursor[step] = value;
      return;
    }
    const next = cursor[step];
    if (next === null || typeof next !== 'object') {
      const inner = place.containers[i + 1];
      const filled = inner ? sample(inner, root) : undefined;
      cursor[step] =
        filled !== null && typeof filled === 'object'
          ? filled
          : typeof place.path[i + 1] === 'number'
            ? []
            : {};
    }
    const child = cursor[step] as Record<string | number, unknown>;
    if (Array.isArray(child) && typeof place.path[i + 1] === 'number' && child.length === 0) {
      child.push(place.containers[i + 1] ? sample(place.containers[i + 1] as Schema, root) : {});
    }
    cursor = child;
  });
  return copy;
}

// ---------------------------------------------------------------------------------------------

interface Sent {
  label: string;
  res: LightMyRequestResponse;
  unsafe: boolean;
}

function problemsOf(sent: Sent): string | null {
  const { res, label, unsafe } = sent;
  const status = res.statusCode;
  if (status >= 500 && status !== 501) return `${label}: ${status} ${res.body.slice(0, 300)}`;
  if (status >= 300) {
    let body: { error?: { code?: unknown; message?: unknown; request_id?: unknown } };
    try {
      body = JSON.parse(res.body);
    } catch {
      return `${label}: ${status} is not JSON: ${res.body.slice(0, 200)}`;
    }
    const error = body.error;
    if (
      typeof error?.code !== 'string' ||
      typeof error.message !== 'string' ||
      typeof error.request_id !== 'string' ||
      !error.request_id.startsWith('req_')
    ) {
      return `${label}: ${status} is not the error envelope: ${res.body.slice(0, 200)}`;
    }
    if (unsafe && (status !== 400 || error.code !== 'validation_failed')) {
      return `${label}: expected 400 validation_failed, got ${status} ${error.code}`;
    }
    return null;
  }
  if (unsafe) return `${label}: expected 400 validation_failed, got ${status}`;
  return null;
}

describe('schema-driven fuzz of every operation', () => {
  let t: TestApp;
  let projectId: string;
  let headers: Record<string, string>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const dir = makeRepo(reposDir, 'acme/fuzz', { 'a.js': 'export const a = 1;\n' });
    const base = commitFiles(dir, { 'b.js': 'export const b = 2;\n' });
    const head = commitFiles(dir, { 'c.js': 'export const c = 3;\n' });
    t = await createTestApp({ reposDir });
    projectId = await createProject(t, 'acme/fuzz');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const review = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { base, head, reviewers: ['security'] },
    });
    expect(review.statusCode, review.body).toBe(202);
    ids.review = review.json().id;
    const learning = await t.app.inject({
      method: 'POST',
      url: '/api/v1/learnings',
      headers,
      payload: { learning: 'Fuzzing finds what reading does not.' },
    });
    expect(learning.statusCode, learning.body).toBe(201);
    ids.learning = learning.json().id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A real id where one is cheap to have, so hostile values elsewhere reach the handler. */
  function paramValue(op: Operation, name: string): string {
    if (name === 'project_id') return projectId;
    if (name === 'task_id' || name === 'review_id') return ids.review ?? 'tsk_nope';
    if (name === 'reviewer_key') return 'security';
    const collection = op.path.split('/')[3];
    if (collection === 'reviewers') return 'security';
    if (collection === 'learnings') return ids.learning ?? 'lrn_nope';
    return 'fuzz_nope';
  }

  const urlOf = (op: Operation, params: Record<string, string>, query = '') =>
    fastifyPath(op.path).replace(/:(\w+)/g, (_m, name: string) => params[name] ?? 'x') +
    (query ? `?${query}` : '');

  async function fuzz(op: Operation): Promise<string[]> {
    const sent: Sent[] = [];
    const params: Record<string, string> = {};
    for (const name of Object.keys(op.params?.shape ?? {})) {
      params[name] = encodeURIComponent(paramValue(op, name));
    }
    const baseHeaders: Record<string, string> = { ...headers, ...(op.ifMatch ? { 'if-match': '"1"' } : {}) };
    const bodyRoot = op.body ? jsonSchema(op.body) : null;
    const baseBody = bodyRoot ? sample(bodyRoot, bodyRoot) : undefined;
    const send = async (
      label: string,
      unsafe: boolean,
      request: { url?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string },
    ) => {
      const payload =
        request.rawBody ??
        (request.body !== undefined
          ? JSON.stringify(request.body)
          : op.body
            ? JSON.stringify(baseBody)
            : undefined);
      const res = await t.app.inject({
        method: op.method,
        url: request.url ?? urlOf(op, params),
        headers: {
          ...baseHeaders,
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...request.headers,
        },
        ...(payload !== undefined ? { payload } : {}),
      });
      sent.push({ label, res, unsafe });
    };

    // The untouched sample: whatever it answers, never a 5xx and always the envelope.
    await send('sample request', false, {});

    // Path parameters.
    for (const name of Object.keys(op.params?.shape ?? {})) {
      for (const [what, value] of UNSAFE_ENCODED) {
        await send(`path ${name}: ${what}`, true, { url: urlOf(op, { ...params, [name]: value }) });
      }
      for (const [what, value] of OTHER_ENCODED) {
        await send(`path ${name}: ${what}`, false, { url: urlOf(op, { ...params, [name]: value }) });
      }
    }

    // Query parameters: each declared one, and one the operation does not declare.
    const queryNames = [...Object.keys(op.query?.shape ?? {}), 'undeclared'];
    for (const name of queryNames) {
      for (const [what, value] of UNSAFE_ENCODED) {
        await send(`query ${name}: ${what}`, true, { url: urlOf(op, params, `${name}=${value}`) });
      }
      for (const [what, value] of OTHER_ENCODED) {
        await send(`query ${name}: ${what}`, false, { url: urlOf(op, params, `${name}=${value}`) });
      }
      await send(`query ${name}: repeated`, false, { url: urlOf(op, params, `${name}=1&${name}=2`) });
    }
    await send('query __proto__ bracket', false, { url: urlOf(op, params, '__proto__[x]=1&constructor=1') });

    // Headers the pipeline reads.
    const headerNames = [
      ...(op.scope === 'project' ? ['project-id'] : []),
      ...(isWrite(op) ? ['idempotency-key'] : []),
      ...(op.ifMatch ? ['if-match'] : []),
    ];
    for (const name of headerNames) {
      for (const [what, value] of UNSAFE_STRINGS) {
        await send(`header ${name}: ${what}`, true, { headers: { [name]: value } });
      }
      await send(`header ${name}: 10k characters`, false, { headers: { [name]: LONG } });
      await send(`header ${name}: empty`, false, { headers: { [name]: '' } });
    }

    // The body: every string leaf, every field, every object.
    if (bodyRoot) {
      const seen = new Set<string>();
      for (const place of places(bodyRoot, bodyRoot)) {
        const key = `${place.kind}:${place.path.join('.')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const where = `body ${place.path.join('.') || '(top level)'}`;
        if (place.kind === 'string') {
          for (const [what, value] of UNSAFE_STRINGS) {
            await send(`${where}: ${what}`, true, { body: withValue(baseBody, place, value, bodyRoot) });
          }
        } else if (place.kind === 'value') {
          for (const [what, value] of WRONG_TYPES) {
            await send(`${where}: ${what}`, false, { body: withValue(baseBody, place, value, bodyRoot) });
          }
          for (const depth of [63, 10_000]) {
            const rawBody = JSON.stringify(withValue(baseBody, place, '__FUZZ_DEEP__', bodyRoot)).replace(
              '"__FUZZ_DEEP__"',
              deepObjectText(depth),
            );
            await send(`${where}: ${depth}-deep object`, false, { rawBody });
          }
        } else {
          // An object: keys that are unsafe, and keys that would pollute a prototype.
          for (const [what, value] of UNSAFE_STRINGS) {
            const polluted =
              place.path.length === 0
                ? { ...(baseBody as object), [value]: 'x' }
                : withValue(
                    baseBody,
                    place,
                    { ...(objectAt(baseBody, place) ?? {}), [value]: 'x' },
                    bodyRoot,
                  );
            await send(`${where}: key with ${what}`, true, { body: polluted });
          }
          const inner = place.path.length === 0 ? '' : JSON.stringify(objectAt(baseBody, place) ?? {});
          for (const [what, key] of [
            ['__proto__ key', '"__proto__":{"polluted":true}'],
            ['constructor.prototype key', '"constructor":{"prototype":{"polluted":true}}'],
          ] as const) {
            const rawBody =
              place.path.length === 0
                ? injectKey(JSON.stringify(baseBody), key)
                : JSON.stringify(withValue(baseBody, place, '__FUZZ_OBJECT__', bodyRoot)).replace(
                    '"__FUZZ_OBJECT__"',
                    injectKey(inner, key),
                  );
            await send(`${where}: ${what}`, false, { rawBody });
          }
        }
      }
      await send('body: 10k-deep object', false, { rawBody: deepObjectText(10_000) });
      await send('body: 100k-deep array', false, { rawBody: deepArrayText(100_000) });
      await send('body: a JSON string', false, { rawBody: '"x"' });
      await send('body: null', false, { rawBody: 'null' });
      await send('body: truncated JSON', false, { rawBody: '{"a":' });
      await send('body: over the body limit', false, {
        rawBody: JSON.stringify({ x: 'x'.repeat(t.services.config.bodyLimit) }),
      });
    }
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype was polluted').toBeUndefined();
    return sent.map(problemsOf).filter((p): p is string => p !== null);
  }

  it.each(OPERATIONS.map((op) => [`${op.method} ${op.path}`, op] as const))(
    '%s: no 5xx, the envelope on every error, 400 validation_failed for NUL and lone surrogates',
    async (_name, op) => {
      expect(await fuzz(op)).toEqual([]);
    },
  );

  it('makes NUL and lone surrogates in MCP tool arguments a validation_failed tool error', async () => {
    const caller = injectCaller(t.app, `Bearer ${t.workspaceKey}`);
    const problems: string[] = [];
    for (const op of OPERATIONS) {
      const shape = toolInputSchema(op).shape;
      const base: Record<string, unknown> = {};
      for (const name of Object.keys(op.params?.shape ?? {})) base[name] = paramValue(op, name);
      if (op.scope === 'project') base.project_id = projectId;
      for (const name of Object.keys(shape)) {
        for (const [what, value] of UNSAFE_STRINGS) {
          const label = `${op.tool}(${name}: ${what})`;
          let result: CallToolResult;
          try {
            result = await callTool(op, { ...base, [name]: value }, caller);
          } catch (error) {
            problems.push(`${label}: threw ${(error as Error).message}`);
            continue;
          }
          const structured = result.structuredContent as { error?: { code?: string } } | undefined;
          if (!result.isError || structured?.error?.code !== 'validation_failed') {
            problems.push(`${label}: ${JSON.stringify(result).slice(0, 200)}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('answers the same over the MCP endpoint itself', async () => {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${address}${MCP_PATH}`), {
        requestInit: { headers: bearer(t.workspaceKey) },
      }),
    );
    try {
      for (const args of [
        { project_id: projectId, task_id: 'tsk_\ud800' },
        { project_id: projectId, task_id: ids.review, run_id: 'run_\u0000' },
        { project_id: 'prj_\u0000', task_id: ids.review },
      ]) {
        const result = (await client.callTool({ name: 'tasks_status', arguments: args })) as CallToolResult;
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: { code: 'validation_failed' } });
      }
      const learning = (await client.callTool({
        name: 'learnings_create',
        arguments: { project_id: projectId, learning: 'a\udc00' },
      })) as CallToolResult;
      expect(learning.structuredContent).toMatchObject({ error: { code: 'validation_failed' } });
    } finally {
      await client.close();
    }
  });
});

function objectAt(base: unknown, place: Place): Record<string, unknown> | undefined {
  let cursor: unknown = base;
  for (const step of place.path) {
    if (cursor === null || typeof cursor !== 'object') return undefined;
    cursor = (cursor as Record<string | number, unknown>)[step];
  }
  return cursor !== null && typeof cursor === 'object' && !Array.isArray(cursor)
    ? (cursor as Record<string, unknown>)
    : undefined;
}

/** Adds a raw `"key":value` member to a JSON object text (JSON.stringify drops `__proto__`). */
function injectKey(objectText: string, member: string): string {
  const trimmed = objectText.trim();
  if (!trimmed.startsWith('{')) return `{${member}}`;
  return trimmed === '{}' ? `{${member}}` : `{${member},${trimmed.slice(1)}`;
}
