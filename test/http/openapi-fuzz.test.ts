/**
 * Fuzz from the OpenAPI document the service serves (`GET /api/v1/openapi.json`): for every
 * operation in it, malformed requests made from its parameter and request body schemas — one
 * broken place at a time on top of a valid baseline (test/helpers/schema-mutations.ts), bad
 * path ids, bad `Authorization`/`Project-ID`/`Idempotency-Key`/`If-Match` headers, wrong
 * Content-Types and bodies that are not the object asked for, the hostile strings of
 * test/helpers/hostile-values.ts — and a seeded random mix of them.
 *
 * Every answer: never a 5xx (a 501 only where the document marks the operation
 * `x-svc-status: not_implemented`); every non-2xx the envelope `{error:{code,message,request_id}}`;
 * NUL and lone surrogates 400 `validation_failed`; what the document says is malformed (or names
 * a record that does not exist) refused with a 4xx. And nothing written by a refused request:
 * after each request, the database's fingerprint (per table: rows, latest `updated_at`, newest
 * row version; events and idempotency records included — test/helpers/db-fingerprint.ts) is
 * the same, checked whenever the write-ahead log moved. Accepted requests (a hostile value may
 * be valid) are allowed, counted and printed by where they were; so are reads that write.
 *
 * FUZZ_SEED=<n> replays a run (the seed is printed); FUZZ_ONLY=<operationId>,… narrows it.
 */
import { randomInt } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations';
import { learnings } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { watchWrites } from '../helpers/db-fingerprint';
import { commitFiles, makeRepo, makeReposDir } from '../helpers/git';
import { type DocumentedOperation, operationsOf } from '../helpers/openapi-operations';
import { type Baseline, type Probe, prng, probesFor } from '../helpers/openapi-probes';
import { baselineFor, SchemaOracle } from '../helpers/schema-mutations';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
/** FUZZ_ONLY=<operationId>,… fuzzes only those (to replay a failure quickly). */
const ONLY = process.env.FUZZ_ONLY?.split(',');
/** Floors: a run that sends fewer requests has lost part of the document or of the generator. */
const MIN_TOTAL = 3000;
const MIN_PER_OPERATION = 20;

// ---------------------------------------------------------------------------------------------
// Judging an answer.

function problemWith(probe: Probe, res: LightMyRequestResponse, op: DocumentedOperation): string | null {
  const status = res.statusCode;
  const where = `${op.id} ${probe.site}: ${probe.label} →`;
  if (status >= 500 && !(status === 501 && op.notImplemented))
    return `${where} ${status} ${res.body.slice(0, 300)}`;
  if (status < 300) {
    return probe.expect === 'any' ? null : `${where} ${status} accepted; expected ${probe.expect}`;
  }
  let body: { error?: { code?: unknown; message?: unknown; request_id?: unknown } };
  try {
    body = JSON.parse(res.body);
  } catch {
    return `${where} ${status} is not JSON: ${res.body.slice(0, 200)}`;
  }
  const error = body.error;
  if (
    typeof error?.code !== 'string' ||
    error.code === '' ||
    typeof error.message !== 'string' ||
    typeof error.request_id !== 'string' ||
    !error.request_id.startsWith('req_')
  ) {
    return `${where} ${status} is not the error envelope: ${res.body.slice(0, 200)}`;
  }
  if (probe.expect === 'validation_failed' && (status !== 400 || error.code !== 'validation_failed')) {
    return `${where} ${status} ${error.code}; expected 400 validation_failed`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------

describe('OpenAPI-driven fuzz of every operation', () => {
  let t: TestApp;
  let operations: DocumentedOperation[] = [];
  const oracle = new SchemaOracle();
  const zodBodies = new Map(OPERATIONS.map((op) => [op.tool, op.body]));
  const headers: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const sentPerOperation = new Map<string, number>();
  const accepted: string[] = [];
  const withoutServedBaseline: string[] = [];
  const readsThatWrote = new Set<string>();
  const baselineAnswers: string[] = [];
  let idempotencyCounter = 0;

  beforeAll(async () => {
    console.log(`openapi-fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays it)`);
    const reposDir = makeReposDir();
    const dir = makeRepo(reposDir, 'acme/openapi-fuzz', { 'a.js': 'export const a = 1;\n' });
    const base = commitFiles(dir, { 'b.js': 'export const b = 2;\n' });
    const head = commitFiles(dir, { 'c.js': 'export const c = 3;\n' });
    t = await createTestApp({ reposDir });
    const projectId = await createProject(t, 'acme/openapi-fuzz');
    Object.assign(headers, bearer(t.workspaceKey), { 'project-id': projectId });
    ids.project = projectId;

    const document = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(document.statusCode).toBe(200);
    operations = operationsOf(document.json());

    // Records for path parameters to name, so a broken header or body reaches the handler.
    const create = async (url: string, payload: unknown, method: 'POST' = 'POST') => {
      const res = await t.app.inject({ method, url, headers, payload: payload as object });
      expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
      return res.json() as Record<string, unknown>;
    };
    ids.review = (await create('/api/v1/reviews', { base, head, reviewers: ['security'] })).id as string;
    ids.learning = (await create('/api/v1/learnings', { learning: 'Fuzzing finds what reading does not.' }))
      .id as string;
    // A key of its own for DELETE /keys/{key_id}: revoking the one the fuzz uses would end it.
    ids.key =
      ((await create('/api/v1/keys', { name: 'fuzz victim' })).key as { id: string } | undefined)?.id ?? '';
    ids.dashboard = (await create('/api/v1/dashboards', { name: 'fuzz' })).id as string;
    ids.metric = (await create('/api/v1/metric-records', { owner: 'fuzz', key: 'fuzz/k', value: 1 }))
      .id as string;
    // Reading `me` creates the caller's preferences: done here, so the fuzz's reads write nothing.
    await t.app.inject({ method: 'GET', url: '/api/v1/preferences/me', headers });
  });
  afterAll(async () => {
    const total = [...sentPerOperation.values()].reduce((a, b) => a + b, 0);
    const perOperation = [...sentPerOperation].map(([id, n]) => `${id} ${n}`).join(', ');
    console.log(
      `openapi-fuzz seed ${SEED}: ${total} requests over ${sentPerOperation.size} operations (${perOperation})`,
    );
    // Accepted mutations are allowed (a hostile value may be valid), so they are told by where they were.
    const bySite = new Map<string, number>();
    for (const line of accepted) {
      const site = line.slice(line.indexOf(' ') + 1, line.indexOf(':'));
      bySite.set(site, (bySite.get(site) ?? 0) + 1);
    }
    console.log(
      `accepted (2xx) besides the baselines: ${accepted.length}: ${[...bySite].map(([site, n]) => `${site} ${n}`).join(', ')}`,
    );
    console.log(`baselines answered: ${baselineAnswers.join('; ')}`);
    if (readsThatWrote.size > 0)
      console.log(`reads that wrote (accepted): ${[...readsThatWrote].join(', ')}`);
    if (withoutServedBaseline.length > 0) {
      console.log(`no baseline the server's own schema accepts: ${withoutServedBaseline.join(', ')}`);
    }
    await t?.close();
  });

  /** A real id for a path parameter where one is known, else a well-formed one of nothing. */
  async function paramValue(op: DocumentedOperation, name: string): Promise<string> {
    const collection = op.path.split('/')[3] ?? '';
    if (name === 'project_id') return ids.project as string;
    if (name === 'task_id' || name === 'review_id') return ids.review as string;
    if (name === 'reviewer_key' || collection === 'reviewers') return 'security';
    const known: Record<string, string | undefined> = {
      keys: ids.key,
      learnings: ids.learning,
      dashboards: ids.dashboard,
      'metric-records': ids.metric,
      preferences: 'me',
    };
    if (known[collection]) return known[collection];
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/${collection}`, headers });
    const first = list.statusCode === 200 ? (list.json().data?.[0]?.id as string | undefined) : undefined;
    return first ?? `${collection.slice(0, 3)}_01jzzzzzzzzzzzzzzzzzzzzzzz`;
  }

  async function baselineOf(op: DocumentedOperation, index: number): Promise<Baseline> {
    const params: Record<string, string> = {};
    for (const p of op.parameters.filter((x) => x.in === 'path'))
      params[p.name] = await paramValue(op, p.name);
    let body: unknown;
    if (op.body) {
      const zod = zodBodies.get(op.id);
      const made = baselineFor(
        op.body,
        oracle,
        SEED + index * 1000,
        (v) => zod?.safeParse(v).success ?? true,
      );
      if (!made.servedValid) withoutServedBaseline.push(op.id);
      body = made.value;
    }
    return {
      params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, encodeURIComponent(v)])),
      body,
    };
  }

  async function currentRevision(): Promise<string> {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${ids.review}`, headers });
    return res.headers.etag?.toString() ?? '"1"';
  }

  async function send(
    op: DocumentedOperation,
    base: Baseline,
    probe: Probe,
  ): Promise<LightMyRequestResponse> {
    const params = { ...base.params, ...probe.params };
    const url =
      op.path.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] ?? 'x') +
      (probe.query ? `?${probe.query}` : '');
    const names = new Set(op.parameters.filter((p) => p.in === 'header').map((p) => p.name));
    const requestHeaders: Record<string, string | undefined> = {
      authorization: headers.authorization,
      ...(names.has('project-id') ? { 'project-id': headers['project-id'] } : {}),
      ...(names.has('idempotency-key') ? { 'idempotency-key': `fuzz-${SEED}-${idempotencyCounter++}` } : {}),
      ...(names.has('if-match') ? { 'if-match': await currentRevision() } : {}),
    };
    let payload: string | undefined;
    const body = probe.body ?? (op.body ? { json: base.body } : undefined);
    if (body && 'json' in body) {
      payload = JSON.stringify(body.json);
      requestHeaders['content-type'] = 'application/json';
    } else if (body && 'raw' in body) {
      payload = body.raw;
      requestHeaders['content-type'] = body.type;
    } else if (body && 'none' in body) {
      requestHeaders['content-type'] = body.type;
    }
    Object.assign(requestHeaders, probe.headers);
    const sent = Object.fromEntries(
      Object.entries(requestHeaders).filter((e): e is [string, string] => e[1] !== undefined),
    );
    return t.app.inject({
      method: op.method as 'GET',
      url,
      headers: sent,
      ...(payload !== undefined ? { payload } : {}),
    });
  }

  it('finds operations in the document', () => {
    const documented = new Set(operations.map((op) => op.id));
    expect(OPERATIONS.map((op) => op.tool).filter((tool) => !documented.has(tool))).toEqual([]);
  });

  it('notices a write, and a read that writes nothing', async () => {
    // The instrument the fuzz relies on: blind, it would pass every refused request.
    const writes = await watchWrites(t.services.db);
    await t.app.inject({ method: 'GET', url: '/api/v1/learnings', headers });
    expect(await writes.changes()).toEqual([]);
    await t.services.db.orm
      .update(learnings)
      .set({ learning: 'Changed in place, updated_at left alone.' })
      .where(eq(learnings.id, ids.learning as string));
    expect((await writes.changes()).join()).toContain('learnings:');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/learnings',
      headers: { ...headers, 'idempotency-key': `fuzz-self-check-${SEED}` },
      payload: { learning: 'A second learning.' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const written = (await writes.changes()).join();
    expect(written).toContain('learnings:');
    expect(written).toContain('idempotency_records:');
  });

  it('answers every malformed request to every operation with a 4xx envelope, and writes nothing', async () => {
    const problems: string[] = [];
    const writes = await watchWrites(t.services.db);
    const started = performance.now();
    for (const [index, op] of operations.entries()) {
      if (ONLY && !ONLY.includes(op.id)) continue;
      const random = prng(SEED + index);
      const base = await baselineOf(op, index);
      const probes = probesFor(op, base, oracle, random);
      await writes.changes(); // what setting up the baseline wrote (a review's current revision) is not the fuzz's
      for (const probe of probes) {
        const res = await send(op, base, probe);
        const problem = problemWith(probe, res, op);
        if (problem) problems.push(problem);
        const ok = res.statusCode < 300;
        if (probe.site === 'baseline') {
          baselineAnswers.push(
            `${op.id} ${res.statusCode}${ok ? '' : ` ${res.json().error?.code} ${res.json().error?.message}`}`,
          );
        } else if (ok) accepted.push(`${op.id} ${probe.site}: ${probe.label} → ${res.statusCode}`);
        const written = await writes.changes();
        if (written.length > 0 && !ok) {
          problems.push(
            `${op.id} ${probe.site}: ${probe.label} → ${res.statusCode}, yet wrote: ${written.join('; ')}`,
          );
        }
        // Some reads write by design (a dashboard refreshes svc's derived metric records): told, not failed.
        if (written.length > 0 && ok && op.method === 'GET') readsThatWrote.add(op.id);
      }
      sentPerOperation.set(op.id, probes.length);
    }
    console.log(`openapi-fuzz: sent in ${Math.round((performance.now() - started) / 1000)} s`);
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype was polluted').toBeUndefined();
    expect(problems).toEqual([]);
  }, 300_000);

  it.skipIf(ONLY)(`sent at least ${MIN_TOTAL} requests, and ${MIN_PER_OPERATION} to each operation`, () => {
    const total = [...sentPerOperation.values()].reduce((a, b) => a + b, 0);
    expect(sentPerOperation.size).toBe(operations.length);
    expect(total).toBeGreaterThanOrEqual(MIN_TOTAL);
    const few = [...sentPerOperation].filter(([, n]) => n < MIN_PER_OPERATION);
    expect(few).toEqual([]);
  });
});
