/**
 * Timeline events and pull-request events over a real review: what happened to findings and pull
 * requests, read across objects newest first, filtered by object, kind and time, paged; notes on
 * a pull request from an agent; another project's events are not there; a refused change leaves
 * no event. Both engines.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest } from '../../src/core/keys';
import { Worker } from '../../src/engine/worker';
import { createApiKey } from '../../src/storage/keys';
import { apiKeys, pullRequests } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

type TimelineEvent = {
  object: string;
  id: string;
  subject_type: string;
  subject_id: string;
  kind: string;
  actor: string | null;
  payload: Record<string, unknown>;
  occurred_at: string;
  created_at: string;
};

describe.each(DATABASE_KINDS)('timeline events on %s', (kind) => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;
  let findingId: string;
  let pullRequestId: string;
  let shopId: string;

  const get = (url: string, as = headers) => t.app.inject({ method: 'GET', url, headers: as });
  const timeline = async (query = '', as = headers) => {
    const res = await get(`/api/v1/timeline-events${query}`, as);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: TimelineEvent[]; next_cursor: string | null };
  };

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(
      repo,
      1,
      { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' },
      'runner',
    );
    makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });
    t = await createTestApp({ kind, reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    shopId = await createProject(t, 'acme/shop');
    headers = { ...bearer(t.workspaceKey), 'project-id': shopId };
    otherHeaders = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/other') };

    const started = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 1, reviewers: ['security'] },
    });
    expect(started.statusCode, started.body).toBe(202);
    for (let i = 0; ; i++) {
      const body = (await get(`/api/v1/reviews/${started.json().id}`)).json();
      if (body.run?.status === 'completed') {
        findingId = body.findings[0].id;
        break;
      }
      if (i > 400 || ['failed', 'canceled'].includes(body.run?.status))
        throw new Error(JSON.stringify(body.run));
      await new Promise((r) => setTimeout(r, 50));
    }
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    pullRequestId = pr?.id as string;
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('records each move of a pull request’s review status, the finished review with its counts', async () => {
    const moves = (
      await timeline(`?subject_type=pull_request&subject_id=${pullRequestId}&kind=review_status_changed`)
    ).data.reverse();
    const statuses = moves.map((e) => (e.payload.after as { review_status: string }).review_status);
    expect(statuses).toEqual(expect.arrayContaining(['reviewing', 'reviewed']));
    expect(statuses.indexOf('reviewing')).toBeLessThan(statuses.indexOf('reviewed'));
    const reviewed = moves.at(-1) as TimelineEvent;
    expect(reviewed.actor).toBeNull();
    expect(reviewed.payload).toMatchObject({
      before: { review_status: 'summarizing' },
      after: { review_status: 'reviewed' },
      counts: { p0: 1, opened: 1, opened_p0: 1, fixed: 0 },
    });
    expect(reviewed.payload.run_id).toMatch(/^run_/);
  });

  it('records each run queued, claimed by a worker, and ended in its terminal commit', async () => {
    const ended = (await timeline('?subject_type=run&kind=completed')).data;
    const review = ended.find((e) => e.payload.kind === 'review');
    expect(review).toMatchObject({
      kind: 'completed',
      actor: null,
      payload: { before: { status: 'running' }, after: { status: 'completed', error_code: null } },
    });
    expect(review?.payload.task_id).toMatch(/^tsk_/);
    const life = (await timeline(`?subject_type=run&subject_id=${review?.subject_id}`)).data.reverse();
    expect(life.map((e) => e.kind)).toEqual(['queued', 'claimed', 'completed']);
    expect(life[0]?.payload).toEqual({ task_id: review?.payload.task_id, kind: 'review', retry_of: null });
    expect(life[1]?.payload).toMatchObject({ task_id: review?.payload.task_id, worker: expect.any(String) });
    const times = life.map((e) => Date.parse(e.occurred_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('lists what happened to a finding, newest first, with its actor, and reads one by id', async () => {
    for (const [kindOf, payload] of [
      ['dismissed', { reason: 'the query is built from constants' }],
      ['reopened', {}],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/findings/${findingId}/events`,
        headers,
        payload: { kind: kindOf, payload },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const { data } = await timeline(`?subject_type=finding&subject_id=${findingId}`);
    expect(data.map((e) => e.kind)).toEqual(['reopened', 'dismissed']);
    expect(data[1]).toMatchObject({
      object: 'timeline_event',
      subject_type: 'finding',
      subject_id: findingId,
      payload: { reason: 'the query is built from constants' },
    });
    expect(data[1]?.actor).toMatch(/^key_/);
    const one = await get(`/api/v1/timeline-events/${data[1]?.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(data[1]);
  });

  it('takes notes on a pull request and lists them with the rest of the timeline', async () => {
    const note = await t.app.inject({
      method: 'POST',
      url: `/api/v1/pull-requests/${pullRequestId}/events`,
      headers,
      payload: { kind: 'note.added', payload: { text: 'fixing the eval in the next push' } },
    });
    expect(note.statusCode, note.body).toBe(201);
    const read = await get(`/api/v1/pull-requests/${pullRequestId}/events`);
    // Oldest first: the review's status moves svc recorded, then the note.
    const kinds = read.json().data.map((e: TimelineEvent) => e.kind);
    expect(kinds.at(-1)).toBe('note.added');
    expect(kinds.slice(0, -1).every((k: string) => k === 'review_status_changed')).toBe(true);
    const { data } = await timeline();
    expect(data[0]).toMatchObject({
      subject_type: 'pull_request',
      subject_id: pullRequestId,
      kind: 'note.added',
    });
    expect(data.map((e) => e.subject_type)).toEqual(expect.arrayContaining(['finding', 'pull_request']));
  });

  it('filters by kind and time and pages with a cursor, never repeating an event', async () => {
    const all = (await timeline()).data;
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect((await timeline('?kind=dismissed')).data.map((e) => e.kind)).toEqual(['dismissed']);
    const newest = all[0] as TimelineEvent;
    const since = await timeline(`?since=${encodeURIComponent(newest.created_at)}`);
    expect(since.data.map((e) => e.id)).toContain(newest.id);
    expect(since.data.every((e) => e.created_at >= newest.created_at)).toBe(true);
    const until = await timeline(`?until=${encodeURIComponent('2000-01-01T00:00:00Z')}`);
    expect(until.data).toEqual([]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const pageOf: { data: TimelineEvent[]; next_cursor: string | null } = await timeline(
        `?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...pageOf.data.map((e) => e.id));
      cursor = pageOf.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.id));
  });

  it("keeps another project's events out, and a refused change leaves no event", async () => {
    const before = (await timeline()).data.length;
    // Reopening an open finding is refused (409): nothing is appended.
    const refused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/findings/${findingId}/events`,
      headers,
      payload: { kind: 'reopened', payload: {} },
    });
    expect(refused.statusCode).toBe(409);
    // Another project cannot note this project's pull request or see its events.
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/api/v1/pull-requests/${pullRequestId}/events`,
      headers: otherHeaders,
      payload: { kind: 'note.added', payload: {} },
    });
    expect(foreign.statusCode).toBe(404);
    expect((await timeline()).data).toHaveLength(before);
    const seenByOther = (await timeline('?limit=200', otherHeaders)).data.map((e) => e.subject_id);
    expect(seenByOther).not.toContain(findingId);
    expect(seenByOther).not.toContain(pullRequestId);
    expect(seenByOther).not.toContain(shopId);
    const [first] = (await timeline()).data;
    expect((await get(`/api/v1/timeline-events/${first?.id}`, otherHeaders)).statusCode).toBe(404);
  });

  it('records projects, settings and keys changed through the API, with before, after and actor', async () => {
    const [created] = (await timeline(`?subject_type=project&subject_id=${shopId}`)).data;
    expect(created).toMatchObject({
      kind: 'created',
      payload: { before: null, after: { name: 'shop', repository: { full_name: 'acme/shop' } } },
    });
    const patch = (payload: unknown) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/projects/${shopId}/settings`,
        headers,
        payload: payload as object,
      });
    expect((await patch({ 'svc.review.guidance': 'prefer small functions' })).statusCode).toBe(200);
    expect((await patch({ 'svc.review.guidance': 'name every failure' })).statusCode).toBe(200);
    // A refused change (unknown key) appends nothing.
    expect((await patch({ 'svc.nope': 1 })).statusCode).toBe(400);
    const settings = (await timeline(`?subject_type=project_settings&subject_id=${shopId}`)).data;
    expect(settings.map((e) => e.payload)).toEqual([
      {
        before: { 'svc.review.guidance': 'prefer small functions' },
        after: { 'svc.review.guidance': 'name every failure' },
      },
      { before: { 'svc.review.guidance': null }, after: { 'svc.review.guidance': 'prefer small functions' } },
    ]);
    expect(settings[0]?.actor).toMatch(/^key_/);

    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'ci bot', kind: 'project', project_id: shopId },
    });
    expect(minted.statusCode).toBe(201);
    const { id: keyId, secret } = minted.json() as { id: string; secret: string };
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${keyId}`,
      headers: bearer(t.workspaceKey),
    });
    expect(revoked.statusCode).toBe(200);
    const keyEvents = (await timeline(`?subject_type=key&subject_id=${keyId}`)).data;
    expect(keyEvents.map((e) => e.kind)).toEqual(['revoked', 'created']);
    expect(keyEvents[1]?.payload).toMatchObject({
      after: { kind: 'project', name: 'ci bot', project_id: shopId },
    });
    expect(JSON.stringify(keyEvents)).not.toContain(secret);
    expect(JSON.stringify(keyEvents)).not.toContain(keyDigest(secret));
  });

  it('shows a project-pinned key its project’s events, and no workspace keys or settings', async () => {
    const mint = async (payload: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(t.workspaceKey),
        payload,
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string; secret: string };
    };
    const workspaceKey = await mint({ name: 'deploy', kind: 'workspace' });
    const pinned = bearer((await mint({ name: 'pinned', kind: 'project', project_id: shopId })).secret);
    const setting = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: bearer(t.workspaceKey),
      payload: { 'svc.checks.p1_conclusion': 'neutral' },
    });
    expect(setting.statusCode, setting.body).toBe(200);
    // A workspace key with Project-ID sees both.
    const all = (await timeline('?limit=200')).data;
    expect(all.map((e) => e.subject_id)).toEqual(expect.arrayContaining([workspaceKey.id, t.workspaceId]));
    const seen = (await timeline('?limit=200', pinned)).data;
    expect(seen.map((e) => e.subject_id)).toContain(findingId);
    expect(seen.map((e) => e.subject_id)).not.toContain(workspaceKey.id);
    expect(seen.filter((e) => e.subject_type === 'workspace_settings')).toEqual([]);
  });

  it('appends an event in the transaction of its change: when either fails, neither is there', async () => {
    const before = (await timeline('?limit=200')).data.length;
    // The key's row is written first, then its event; PostgreSQL refuses a NUL in text, so
    // the event fails after the key was inserted, and the key must be gone with it.
    const failing = createApiKey(
      t.services.db,
      { workspaceId: t.workspaceId, kind: 'workspace', name: 'never' },
      { actor: 'key_\u0000' },
    );
    await expect(failing).rejects.toThrow();
    const keys = await t.services.db.orm.select().from(apiKeys).where(eq(apiKeys.name, 'never'));
    expect(keys).toEqual([]);
    expect((await timeline('?limit=200')).data).toHaveLength(before);
  });
});
