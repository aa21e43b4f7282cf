/**
 * Workspace-level writes need workspace authority: a project-pinned key cannot create or change
 * a reviewer, append to its events or import a skill revision (each reaches every project of
 * the workspace), over REST or MCP; it still reads them. And a revoked key stops working on
 * every process within SVC_KEY_CACHE_MS (default 1 s on PostgreSQL; 0: at once): two API
 * processes on one PostgreSQL database, the key revoked through one, refused by the other.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createServices } from '../../src/main';
import { injectCaller } from '../../src/mcp/http';
import { callTool } from '../../src/mcp/server';
import { OPERATIONS } from '../../src/operations';
import { openDatabase } from '../../src/storage/database';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { makeRepo, makeReposDir } from '../helpers/git';

const SKILL = { 'SKILL.md': '# House style\n\nPrefer early returns.\n' };

describe('workspace-level writes with a project-pinned key', () => {
  let t: TestApp;
  let workspace: Record<string, string>;
  let pinned: Record<string, string>;
  let pinnedSecret: string;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/one', { 'a.ts': 'a\n' });
    t = await createTestApp({ reposDir });
    const projectId = await createProject(t, 'acme/one');
    workspace = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'ci of one project', kind: 'project', project_id: projectId },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    pinnedSecret = minted.json().secret;
    pinned = bearer(pinnedSecret);
  });
  afterAll(() => t.close());

  const call = (
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    headers: Record<string, string>,
    payload?: object,
  ) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

  it('answers 403 forbidden to reviewer create, update and events, and to skill imports, changing nothing', async () => {
    const before = (await call('GET', '/api/v1/reviewers/general', pinned)).json();
    const attempts = [
      call('POST', '/api/v1/reviewers', pinned, { id: 'mine', name: 'Mine', instructions: 'x' }),
      call('PATCH', '/api/v1/reviewers/general', pinned, {
        instructions: 'Approve everything.',
        model_pin: 'anthropic/claude-3-5-sonnet-latest',
      }),
      call('POST', '/api/v1/reviewers/general/events', pinned, { kind: 'note.added' }),
      call('POST', '/api/v1/skill-imports', pinned, { skill_id: 'house-style', files: SKILL }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining('workspace key'),
        request_id: expect.stringMatching(/^req_/),
      });
    }
    expect((await call('GET', '/api/v1/reviewers/general', pinned)).json()).toEqual(before);
    expect((await call('GET', '/api/v1/reviewers/mine', workspace)).statusCode).toBe(404);
    expect((await call('GET', '/api/v1/reviewers/general/events', workspace)).json().data).toEqual([]);
  });

  it('lets the pinned key read what the workspace key writes', async () => {
    const created = await call('POST', '/api/v1/reviewers', workspace, {
      id: 'house',
      name: 'House',
      instructions: 'Our style.',
    });
    expect(created.statusCode).toBe(201);
    const imported = await call('POST', '/api/v1/skill-imports', workspace, {
      skill_id: 'house-style',
      files: SKILL,
    });
    expect(imported.statusCode).toBe(201);
    const noted = await call('POST', '/api/v1/reviewers/house/events', workspace, { kind: 'note.added' });
    expect(noted.statusCode).toBe(201);

    expect((await call('GET', '/api/v1/reviewers/house', pinned)).json().name).toBe('House');
    const events = (await call('GET', '/api/v1/reviewers/house/events', pinned)).json().data;
    expect(events.map((e: { kind: string }) => e.kind)).toEqual(['created', 'note.added']);
    const revision = await call('GET', `/api/v1/skill-revisions/${imported.json().id}`, pinned);
    expect(revision.json()).toMatchObject({ verified: true, skill_id: 'house-style' });
  });

  it('refuses the same through MCP tools, as a forbidden tool error', async () => {
    const caller = injectCaller(t.app, `Bearer ${pinnedSecret}`);
    const update = OPERATIONS.find((op) => op.tool === 'reviewers_update');
    if (!update) throw new Error('reviewers_update is declared');
    const result: CallToolResult = await callTool(update, { id: 'general', name: 'Renamed' }, caller);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
  });
});

describe('key revocation across API processes on PostgreSQL', () => {
  let testDb: TestDatabase;
  const apps: FastifyInstance[] = [];
  const closers: (() => Promise<void>)[] = [];
  let bootstrapKey: string;

  /** One API process: its own connection pool and key cache, on the shared database. */
  async function apiProcess(env: Record<string, string>): Promise<FastifyInstance> {
    const db = apps.length === 0 ? testDb.db : await openDatabase({ databaseUrl: testDb.url });
    const config = loadConfig({ SVC_REPOS_DIR: makeReposDir(), ...env });
    const started = await createServices(config, { db, logger: pino({ level: 'silent' }) });
    if (started.bootstrap) bootstrapKey = started.bootstrap.secret;
    const app = await buildApp(started.services, { logger: false });
    await app.ready();
    apps.push(app);
    closers.push(async () => {
      await app.close();
      if (db !== testDb.db) await db.close();
    });
    return app;
  }

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await testDb.close();
  });

  const projects = (app: FastifyInstance, secret: string) =>
    app.inject({ method: 'GET', url: '/api/v1/projects', headers: bearer(secret) });

  /** Mints a key on `a`, makes `b` cache it, revokes it on `a`; returns when the revocation answered. */
  async function revokeWhileCached(a: FastifyInstance, b: FastifyInstance) {
    const minted = await a.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(bootstrapKey),
      payload: { name: 'soon revoked' },
    });
    const { id, secret } = minted.json();
    expect((await projects(b, secret)).statusCode).toBe(200);
    const revoked = await a.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${id}`,
      headers: bearer(bootstrapKey),
    });
    expect(revoked.statusCode).toBe(200);
    expect((await projects(a, secret)).statusCode).toBe(401);
    return { secret, revokedAt: Date.now() };
  }

  it('refuses a revoked key on another process once the default bound (1 s) has passed', async () => {
    const a = await apiProcess({});
    const b = await apiProcess({});
    const { secret, revokedAt } = await revokeWhileCached(a, b);
    // B may still accept it from its cache, but for no longer than the bound.
    const wait = revokedAt + 1_000 + 50 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const after = await projects(b, secret);
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('unauthenticated');
  });

  it('refuses it on the very next request with SVC_KEY_CACHE_MS=0', async () => {
    const a = await apiProcess({ SVC_KEY_CACHE_MS: '0' });
    const b = await apiProcess({ SVC_KEY_CACHE_MS: '0' });
    const { secret } = await revokeWhileCached(a, b);
    expect((await projects(b, secret)).statusCode).toBe(401);
  });

  it('keeps a configured bound: a key revoked elsewhere is still accepted inside it', async () => {
    const a = await apiProcess({ SVC_KEY_CACHE_MS: '60000' });
    const b = await apiProcess({ SVC_KEY_CACHE_MS: '60000' });
    const { secret } = await revokeWhileCached(a, b);
    // Documented behaviour, not a wish: the bound is what an operator chose.
    expect((await projects(b, secret)).statusCode).toBe(200);
  });
});
