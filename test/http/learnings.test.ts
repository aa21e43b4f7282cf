/**
 * Learnings: recorded with `learnings_create` (a documented extension), listed newest first
 * without those past `forgets_at` unless asked, forgotten by a `forgotten` event, handed to
 * reviews by `currentLearnings`; another project's learning is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentLearnings } from '../../src/review/learnings';
import { newId } from '../../src/storage/ids';
import { createApiKey } from '../../src/storage/keys';
import { learnings, projects, workspaces } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

const HOUR = 3_600_000;

describe('learnings', () => {
  let t: TestApp;
  let projectA: string;
  let projectB: string;
  let headersA: Record<string, string>;
  let headersB: Record<string, string>;

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, headers = headersA) =>
    t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const learn = (payload: Record<string, unknown>, headers = headersA) =>
    call('POST', '/api/v1/learnings', payload, headers);
  const listIds = async (query = '', headers = headersA) =>
    (await call('GET', `/api/v1/learnings${query}`, undefined, headers))
      .json()
      .data.map((l: { id: string }) => l.id);

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/a', { 'a.ts': 'a\n' });
    makeRepo(reposDir, 'acme/b', { 'b.ts': 'b\n' });
    t = await createTestApp({ reposDir });
    projectA = await createProject(t, 'acme/a');
    projectB = await createProject(t, 'acme/b');
    headersA = { ...bearer(t.workspaceKey), 'project-id': projectA };
    headersB = { ...bearer(t.workspaceKey), 'project-id': projectB };
  });
  afterAll(() => t.close());

  it('records a learning and reads it back', async () => {
    const res = await learn({ learning: 'Money is stored in integer cents.', why: 'PR #12 review thread' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      object: 'learning',
      id: expect.stringMatching(/^lrn_/),
      learning: 'Money is stored in integer cents.',
      why: 'PR #12 review thread',
      forgets_at: null,
      forgotten: false,
    });
    expect(Date.parse(res.json().learned_at)).toBeGreaterThan(Date.now() - 60_000);
    const got = await call('GET', `/api/v1/learnings/${res.json().id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(res.json());
    const bare = await learn({ learning: 'Tests use vitest.' });
    expect(bare.json().why).toBeNull();

    const events = await call('GET', `/api/v1/learnings/${res.json().id}/events`);
    expect(events.json().data).toEqual([
      expect.objectContaining({
        kind: 'created',
        subject_type: 'learning',
        actor: expect.stringMatching(/^key_/),
      }),
    ]);
  });

  it.each([
    [{ learning: '' }, /learning/],
    [{ learning: 'x', forgets_at: '2020-01-01T00:00:00Z' }, /not in the future/],
    [{ learning: 'x', forgets_at: 'tomorrow' }, /forgets_at/],
    [{ learning: 'x', extra: 1 }, /extra/],
  ])('rejects %j', async (payload, message) => {
    const res = await learn(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
    expect(JSON.stringify(res.json().error)).toMatch(message);
  });

  it('hides learnings past forgets_at unless include_forgotten=true; get still reads them', async () => {
    const lasting = (await learn({ learning: 'Lasting.' })).json().id;
    const later = (
      await learn({ learning: 'Expires later.', forgets_at: new Date(Date.now() + HOUR).toISOString() })
    ).json().id;
    // Already past its date: written straight to the table, as a learning created long ago would be.
    const past = newId('learning');
    await t.services.db.orm.insert(learnings).values({
      id: past,
      workspaceId: t.workspaceId,
      projectId: projectA,
      learning: 'Forgotten.',
      learnedAt: new Date(Date.now() - 48 * HOUR),
      forgetsAt: new Date(Date.now() - HOUR),
      createdAt: new Date(),
    });

    const visible = await listIds();
    expect(visible).toEqual(expect.arrayContaining([lasting, later]));
    expect(visible).not.toContain(past);
    expect(await listIds('?include_forgotten=false')).toEqual(visible);
    const all = await call('GET', '/api/v1/learnings?include_forgotten=true');
    expect(all.json().data.map((l: { id: string }) => l.id)).toContain(past);
    expect(all.json().data.find((l: { id: string }) => l.id === past).forgotten).toBe(true);
    expect((await call('GET', `/api/v1/learnings/${past}`)).json()).toMatchObject({
      id: past,
      forgotten: true,
    });
    expect((await call('GET', '/api/v1/learnings?include_forgotten=yes')).statusCode).toBe(400);

    // What a review is told: the same rule, at the time the review runs.
    const now = new Date();
    const current = (await currentLearnings(t.services.db, projectA, now)).map((l) => l.id);
    expect(current).toEqual(expect.arrayContaining([lasting, later]));
    expect(current).not.toContain(past);
    const inTwoHours = (
      await currentLearnings(t.services.db, projectA, new Date(now.getTime() + 2 * HOUR))
    ).map((l) => l.id);
    expect(inTwoHours).toContain(lasting);
    expect(inTwoHours).not.toContain(later);
    expect(await currentLearnings(t.services.db, projectB, now)).toEqual([]);
  });

  it('takes a scope rule reviewers honour, and refuses one that names neither rule nor path', async () => {
    const scoped = await learn({
      learning: 'Legacy code is frozen; do not report it.',
      scope: { path: 'legacy/**', action: 'suppress' },
    });
    expect(scoped.statusCode).toBe(201);
    expect(scoped.json().scope).toEqual({ path: 'legacy/**', action: 'suppress' });
    expect((await call('GET', `/api/v1/learnings/${scoped.json().id}`)).json().scope).toEqual({
      path: 'legacy/**',
      action: 'suppress',
    });
    expect((await learn({ learning: 'No scope.' })).json().scope).toBeNull();
    const vague = await learn({ learning: 'Vague.', scope: { action: 'downgrade' } });
    expect(vague.statusCode).toBe(400);
    expect(vague.json().error.message).toMatch(/names a rule, a path glob or both/);
  });

  it('lists newest first, page by page', async () => {
    const all = await listIds('?limit=200');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/api/v1/learnings?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...res.json().data.map((l: { id: string }) => l.id));
      cursor = res.json().next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect([...all].sort().reverse()).toEqual(all);
  });

  it('appends events; a `forgotten` event retires the learning from reviews', async () => {
    const id = (await learn({ learning: 'We deploy on Fridays.' })).json().id;
    const note = await call('POST', `/api/v1/learnings/${id}/events`, {
      kind: 'note.added',
      payload: { text: 'not any more' },
    });
    expect(note.statusCode).toBe(201);
    expect(note.json()).toMatchObject({ subject_type: 'learning', subject_id: id, kind: 'note.added' });
    expect(await listIds()).toContain(id);

    const forgot = await call('POST', `/api/v1/learnings/${id}/events`, { kind: 'forgotten', payload: {} });
    expect(forgot.statusCode).toBe(201);
    const after = await call('GET', `/api/v1/learnings/${id}`);
    expect(after.json()).toMatchObject({ forgotten: true, forgets_at: forgot.json().occurred_at });
    expect(await listIds()).not.toContain(id);
    expect((await currentLearnings(t.services.db, projectA, new Date())).map((l) => l.id)).not.toContain(id);

    const events = await call('GET', `/api/v1/learnings/${id}/events`);
    expect(events.json().data.map((e: { kind: string }) => e.kind)).toEqual([
      'created',
      'note.added',
      'forgotten',
    ]);
  });

  it("gives another project's or workspace's key 404 for the learning, and lists only its own", async () => {
    const id = (await learn({ learning: 'Only in A.' })).json().id;
    const inB = (await learn({ learning: 'Only in B.' }, headersB)).json().id;
    expect(await listIds('', headersB)).toEqual([inB]);

    const { db } = t.services;
    const workspaceId = newId('workspace');
    await db.orm.insert(workspaces).values({ id: workspaceId, name: 'other' });
    const otherProject = newId('project');
    await db.orm
      .insert(projects)
      .values({ id: otherProject, workspaceId, name: 'o', repoFullName: 'acme/a', installationId: 1 });
    const otherWs = bearer(
      (
        await createApiKey(
          db,
          { workspaceId, kind: 'project', projectId: otherProject, name: 'o' },
          { actor: null },
        )
      ).secret,
    );
    expect(await listIds('', otherWs)).toEqual([]);

    for (const headers of [headersB, otherWs]) {
      for (const [method, url, payload] of [
        ['GET', `/api/v1/learnings/${id}`, undefined],
        ['GET', `/api/v1/learnings/${id}/events`, undefined],
        ['POST', `/api/v1/learnings/${id}/events`, { kind: 'forgotten' }],
      ] as const) {
        const res = await call(method, url, payload, headers);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json().error.code).toBe('not_found');
      }
    }
    // The failed attempts changed nothing.
    expect((await call('GET', `/api/v1/learnings/${id}`)).json().forgotten).toBe(false);
  });
});
