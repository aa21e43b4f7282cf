/**
 * Reviewers: the workspace's catalog and custom reviewers, most popular first; governed model
 * pins (rule reviewers stay on builtin/rules, model pins name a known provider); measured models
 * with the pin flagged; events, with `pin_changed` appended by the service; another workspace's
 * reviewer is 404. Runs on both storage engines (pin changes lock the row).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countUse, seedCatalogReviewers } from '../../src/review/reviewer-catalog';
import { newId } from '../../src/storage/ids';
import { createApiKey } from '../../src/storage/keys';
import { projects, reviewerModelStats, reviewers, workspaces } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { makeRepo, makeReposDir } from '../helpers/git';

/** A second workspace with one project and a workspace key of its own (sent with Project-ID). */
async function otherWorkspace(t: TestApp) {
  const { db } = t.services;
  const workspaceId = newId('workspace');
  await db.orm.insert(workspaces).values({ id: workspaceId, name: 'other' });
  const projectId = newId('project');
  await db.orm
    .insert(projects)
    .values({ id: projectId, workspaceId, name: 'o', repoFullName: 'acme/o', installationId: 1 });
  await seedCatalogReviewers(db, workspaceId);
  const { secret } = await createApiKey(
    db,
    { workspaceId, kind: 'workspace', name: 'other' },
    { actor: null },
  );
  return { workspaceId, projectId, headers: { ...bearer(secret), 'project-id': projectId } };
}

describe.each(DATABASE_KINDS)('reviewers on %s', (kind) => {
  let t: TestApp;
  let projectA: string;
  let projectB: string;
  let headers: Record<string, string>;

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, h = headers) =>
    t.app.inject({
      method,
      url,
      headers: h,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/a', { 'a.ts': 'a\n' });
    makeRepo(reposDir, 'acme/b', { 'b.ts': 'b\n' });
    t = await createTestApp({ kind, reposDir });
    projectA = await createProject(t, 'acme/a');
    projectB = await createProject(t, 'acme/b');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectA };
  });
  afterAll(() => t.close());

  it('lists the catalog reviewers with their pins, then most popular first once they are used', async () => {
    const before = await call('GET', '/api/v1/reviewers');
    expect(before.statusCode).toBe(200);
    const ids = (res: typeof before) => res.json().data.map((r: { id: string }) => r.id);
    expect(ids(before)).toEqual(['correctness', 'general', 'secrets', 'security']);
    const security = before.json().data.find((r: { id: string }) => r.id === 'security');
    expect(security).toMatchObject({
      object: 'reviewer',
      model_pin: 'builtin/rules',
      builtin: true,
      engine: 'builtin',
      source: 'catalog',
      popularity: 0,
      skill_revision_id: null,
    });
    expect(before.json().data.find((r: { id: string }) => r.id === 'general').model_pin).toBe(
      'openai/gpt-4o-mini',
    );

    await countUse(t.services.db, t.workspaceId, ['security', 'secrets']);
    await countUse(t.services.db, t.workspaceId, ['security']);
    const after = await call('GET', '/api/v1/reviewers');
    expect(ids(after)).toEqual(['security', 'secrets', 'correctness', 'general']);
    expect(after.json().data.map((r: { popularity: number }) => r.popularity)).toEqual([2, 1, 0, 0]);

    // Pages follow the same order, without repeats or gaps.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/api/v1/reviewers?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      seen.push(...ids(res));
      cursor = res.json().next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids(after));
    expect((await call('GET', '/api/v1/reviewers?cursor=nonsense')).json().error.code).toBe(
      'validation_failed',
    );
  });

  it('reads one reviewer; an unknown id is 404', async () => {
    const res = await call('GET', '/api/v1/reviewers/secrets');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'secrets', model_pin: 'builtin/rules', builtin: true });
    const missing = await call('GET', '/api/v1/reviewers/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('not_found');
  });

  it('keeps a rule reviewer on builtin/rules and a model pin on a known provider', async () => {
    const rule = await call('PATCH', '/api/v1/reviewers/security', { model_pin: 'openai/gpt-4o' });
    expect(rule.statusCode).toBe(400);
    expect(rule.json().error.code).toBe('validation_failed');
    expect(rule.json().error.message).toMatch(/rule reviewer.*only be pinned to builtin\/rules/);
    const instructions = await call('PATCH', '/api/v1/reviewers/security', { instructions: 'be nice' });
    expect(instructions.statusCode).toBe(400);

    for (const pin of ['mistral/large', 'builtin/rules']) {
      const bad = await call('PATCH', '/api/v1/reviewers/general', { model_pin: pin });
      expect(bad.statusCode, pin).toBe(400);
      expect(bad.json().error.message).toMatch(/must be one of openai, anthropic, compat/);
    }
    const malformed = await call('PATCH', '/api/v1/reviewers/general', { model_pin: 'gpt-4o' });
    expect(malformed.statusCode).toBe(400);
    // Nothing changed.
    expect((await call('GET', '/api/v1/reviewers/general')).json().model_pin).toBe('openai/gpt-4o-mini');
    expect((await call('GET', '/api/v1/reviewers/security')).json().model_pin).toBe('builtin/rules');
    expect(
      (await call('PATCH', '/api/v1/reviewers/security', { model_pin: 'builtin/rules' })).statusCode,
    ).toBe(200);
  });

  it('changes the governed pin, records pin_changed with the key that did it, and resets to the default on null', async () => {
    const keys = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(t.workspaceKey) });
    const keyId = keys.json().data[0].id as string;

    const res = await call('PATCH', '/api/v1/reviewers/general', {
      model_pin: 'anthropic/claude-3-5-haiku-latest',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().model_pin).toBe('anthropic/claude-3-5-haiku-latest');
    // The pin is the workspace's: another project of the workspace sees it too.
    const fromB = await call('GET', '/api/v1/reviewers/general', undefined, {
      ...bearer(t.workspaceKey),
      'project-id': projectB,
    });
    expect(fromB.json().model_pin).toBe('anthropic/claude-3-5-haiku-latest');

    // Same pin again, or other fields only: no pin event.
    await call('PATCH', '/api/v1/reviewers/general', { model_pin: 'anthropic/claude-3-5-haiku-latest' });
    const renamed = await call('PATCH', '/api/v1/reviewers/general', { name: 'General', description: null });
    expect(renamed.json()).toMatchObject({ name: 'General', description: null });
    await call('PATCH', '/api/v1/reviewers/general', { model_pin: 'compat/qwen2.5-coder:7b' });
    const reset = await call('PATCH', '/api/v1/reviewers/general', { model_pin: null });
    expect(reset.json().model_pin).toBe('openai/gpt-4o-mini');

    const events = await call('GET', '/api/v1/reviewers/general/events');
    expect(events.statusCode).toBe(200);
    const pinEvents = events.json().data.filter((e: { kind: string }) => e.kind === 'pin_changed');
    expect(pinEvents.map((e: { payload: unknown }) => e.payload)).toEqual([
      { from: 'openai/gpt-4o-mini', to: 'anthropic/claude-3-5-haiku-latest' },
      { from: 'anthropic/claude-3-5-haiku-latest', to: 'compat/qwen2.5-coder:7b' },
      { from: 'compat/qwen2.5-coder:7b', to: 'openai/gpt-4o-mini' },
    ]);
    for (const e of pinEvents) {
      expect(e).toMatchObject({
        object: 'event',
        subject_type: 'reviewer',
        subject_id: 'general',
        actor: keyId,
      });
    }
  });

  it('lists the measured models with the current pin flagged, the pin listed even before it ran', async () => {
    const { db } = t.services;
    await db.orm.insert(reviewerModelStats).values([
      {
        workspaceId: t.workspaceId,
        reviewerId: 'general',
        model: 'openai/gpt-4o-mini',
        runs: 4,
        findings: 6,
        failures: 1,
        totalMs: 8000,
        costUsd: 0.012,
        lastUsedAt: new Date('2026-01-02T03:04:05Z'),
      },
      { workspaceId: t.workspaceId, reviewerId: 'general', model: 'openai/gpt-4o', runs: 9, totalMs: 900 },
      {
        workspaceId: t.workspaceId,
        reviewerId: 'general',
        model: 'anthropic/claude-3-5-haiku-latest',
        runs: 2,
      },
    ]);
    const res = await call('GET', '/api/v1/reviewers/general/models');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((m: { model: string; pinned: boolean }) => [m.model, m.pinned])).toEqual([
      ['openai/gpt-4o-mini', true],
      ['openai/gpt-4o', false],
      ['anthropic/claude-3-5-haiku-latest', false],
    ]);
    expect(res.json().data[0]).toMatchObject({
      object: 'reviewer_model',
      runs: 4,
      findings: 6,
      failures: 1,
      avg_ms: 2000,
      cost_usd: 0.012,
      measured_at: '2026-01-02T03:04:05.000Z',
    });

    await call('PATCH', '/api/v1/reviewers/general', { model_pin: 'anthropic/claude-3-5-haiku-latest' });
    const repinned = await call('GET', '/api/v1/reviewers/general/models?limit=2');
    expect(repinned.json().data.map((m: { model: string }) => m.model)).toEqual([
      'anthropic/claude-3-5-haiku-latest',
      'openai/gpt-4o',
    ]);
    const rest = await call(
      'GET',
      `/api/v1/reviewers/general/models?limit=2&cursor=${repinned.json().next_cursor}`,
    );
    expect(rest.json()).toMatchObject({
      data: [{ model: 'openai/gpt-4o-mini', pinned: false }],
      next_cursor: null,
    });

    // Never measured: its pin alone, flagged.
    const rules = await call('GET', '/api/v1/reviewers/correctness/models');
    expect(rules.json().data).toEqual([
      expect.objectContaining({ model: 'builtin/rules', pinned: true, runs: 0, measured_at: null }),
    ]);
    expect((await call('GET', '/api/v1/reviewers/nope/models')).statusCode).toBe(404);
  });

  it('creates a custom model reviewer; an existing id is 409 conflict', async () => {
    const res = await call('POST', '/api/v1/reviewers', {
      id: 'sql-review',
      name: 'SQL review',
      instructions: 'Look for N+1 queries and missing indexes in migrations.',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      object: 'reviewer',
      id: 'sql-review',
      engine: 'llm',
      source: 'custom',
      builtin: false,
      skill_id: 'sql-review',
      model_pin: 'openai/gpt-4o-mini',
      popularity: 0,
      description: null,
      instructions: 'Look for N+1 queries and missing indexes in migrations.',
    });
    const row = await t.services.db.orm
      .select()
      .from(reviewers)
      .where(and(eq(reviewers.workspaceId, t.workspaceId), eq(reviewers.id, 'sql-review')));
    expect(row[0]).toMatchObject({ engine: 'llm', source: 'custom', skillId: 'sql-review' });

    for (const id of ['sql-review', 'security']) {
      const dup = await call('POST', '/api/v1/reviewers', { id, name: 'x', instructions: 'y' });
      expect(dup.statusCode, id).toBe(409);
      expect(dup.json().error.code).toBe('conflict');
    }
    const pinned = await call('POST', '/api/v1/reviewers', {
      id: 'docs',
      name: 'Docs',
      instructions: 'Check the docs match the code.',
      model_pin: 'anthropic/claude-3-5-sonnet-latest',
    });
    expect(pinned.json().model_pin).toBe('anthropic/claude-3-5-sonnet-latest');
    const badPin = await call('POST', '/api/v1/reviewers', {
      id: 'bad-pin',
      name: 'x',
      instructions: 'y',
      model_pin: 'builtin/rules',
    });
    expect(badPin.statusCode).toBe(400);
    const noRevision = await call('POST', '/api/v1/reviewers', {
      id: 'ghost',
      name: 'x',
      instructions: 'y',
      skill_revision_id: 'skr_000000000000000000000000',
    });
    expect(noRevision.statusCode).toBe(404);
    expect(noRevision.json().error.code).toBe('not_found');
    const invalid = await call('POST', '/api/v1/reviewers', { id: 'Bad Id', name: 'x', instructions: 'y' });
    expect(invalid.statusCode).toBe(400);
    expect((await call('GET', '/api/v1/reviewers/bad-pin')).statusCode).toBe(404);
    expect((await call('GET', '/api/v1/reviewers/ghost')).statusCode).toBe(404);

    const listed = await call('GET', '/api/v1/reviewers');
    expect(listed.json().data.map((r: { id: string }) => r.id)).toContain('sql-review');
    const events = await call('GET', '/api/v1/reviewers/sql-review/events');
    expect(events.json().data.map((e: { kind: string }) => e.kind)).toEqual(['created']);
  });

  it('appends events and reads them oldest first, page by page', async () => {
    const first = await call('POST', '/api/v1/reviewers/security/events', {
      kind: 'note.added',
      payload: { text: 'too noisy on tests' },
      occurred_at: '2026-01-01T00:00:00Z',
    });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      object: 'event',
      id: expect.stringMatching(/^evt_/),
      subject_type: 'reviewer',
      subject_id: 'security',
      kind: 'note.added',
      payload: { text: 'too noisy on tests' },
      occurred_at: '2026-01-01T00:00:00.000Z',
      actor: expect.stringMatching(/^key_/),
    });
    await call('POST', '/api/v1/reviewers/security/events', { kind: 'feedback' });
    const page1 = await call('GET', '/api/v1/reviewers/security/events?limit=1');
    expect(page1.json().data.map((e: { kind: string }) => e.kind)).toEqual(['note.added']);
    const page2 = await call(
      'GET',
      `/api/v1/reviewers/security/events?limit=1&cursor=${page1.json().next_cursor}`,
    );
    expect(page2.json()).toMatchObject({ data: [{ kind: 'feedback', payload: {} }], next_cursor: null });

    const bad = await call('POST', '/api/v1/reviewers/security/events', { kind: 'Not A Kind' });
    expect(bad.statusCode).toBe(400);
    for (const [method, payload] of [
      ['POST', { kind: 'x' }],
      ['GET', undefined],
    ] as const) {
      const missing = await call(method, '/api/v1/reviewers/nope/events', payload);
      expect(missing.statusCode, method).toBe(404);
    }
  });

  it("gives another workspace's key 404 for this workspace's reviewers, and its own list", async () => {
    const other = await otherWorkspace(t);
    const attempts = [
      call('GET', '/api/v1/reviewers/sql-review', undefined, other.headers),
      call('GET', '/api/v1/reviewers/sql-review/models', undefined, other.headers),
      call('PATCH', '/api/v1/reviewers/sql-review', { name: 'mine' }, other.headers),
      call('GET', '/api/v1/reviewers/sql-review/events', undefined, other.headers),
      call('POST', '/api/v1/reviewers/sql-review/events', { kind: 'x' }, other.headers),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    const list = await call('GET', '/api/v1/reviewers', undefined, other.headers);
    expect(list.json().data.map((r: { id: string }) => r.id)).toEqual([
      'correctness',
      'general',
      'secrets',
      'security',
    ]);
    // Its catalog copy has its own pin and events, untouched by this workspace's changes.
    const general = await call('GET', '/api/v1/reviewers/general', undefined, other.headers);
    expect(general.json().model_pin).toBe('openai/gpt-4o-mini');
    const events = await call('GET', '/api/v1/reviewers/security/events', undefined, other.headers);
    expect(events.json().data).toEqual([]);
    // The same id can be created there: reviewers are per workspace.
    const same = await call(
      'POST',
      '/api/v1/reviewers',
      { id: 'sql-review', name: 'theirs', instructions: 'z' },
      other.headers,
    );
    expect(same.statusCode).toBe(201);
    expect((await call('GET', '/api/v1/reviewers/sql-review')).json().name).toBe('SQL review');
  });
});

describe('reviewer pins with a named compatible endpoint', () => {
  let t: TestApp;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/c', { 'c.ts': 'c\n' });
    t = await createTestApp({
      reposDir,
      env: { SVC_LLM_COMPAT_NAME: 'ollama', SVC_LLM_DEFAULT_MODEL: 'ollama/qwen2.5-coder:7b' },
    });
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/c') };
  });
  afterAll(() => t.close());

  it('accepts the configured compat name and defaults new reviewers to SVC_LLM_DEFAULT_MODEL', async () => {
    const ok = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/reviewers/general',
      headers,
      payload: { model_pin: 'ollama/llama3.1:8b' },
    });
    expect(ok.statusCode).toBe(200);
    const compat = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/reviewers/general',
      headers,
      payload: { model_pin: 'compat/llama3.1:8b' },
    });
    expect(compat.statusCode).toBe(400);
    expect(compat.json().error.message).toMatch(/openai, anthropic, ollama/);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviewers',
      headers,
      payload: { id: 'local', name: 'Local', instructions: 'Review it.' },
    });
    expect(created.json().model_pin).toBe('ollama/qwen2.5-coder:7b');
  });
});
