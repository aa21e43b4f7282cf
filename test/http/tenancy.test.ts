/**
 * Keys and tenancy: a pinned key sees one project and nothing else; missing or bad keys get a
 * 401 envelope. Runs on both storage engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { makeRepo, makeReposDir } from '../helpers/git';

describe.each(DATABASE_KINDS)('keys and tenancy on %s', (kind) => {
  let t: TestApp;
  let projectA: string;
  let projectB: string;
  let taskB: string;
  let pinnedA: string;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/a', { 'a.ts': 'export const a = 1;\n' });
    makeRepo(reposDir, 'acme/b', { 'b.py': 'b = 1\n' });
    t = await createTestApp({ kind, reposDir });
    const create = async (name: string, setup: boolean) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/projects',
        headers: bearer(t.workspaceKey),
        payload: { name, repository: { full_name: `acme/${name}`, installation_id: 1 }, setup },
      });
      expect(res.statusCode).toBe(201);
      return res.json();
    };
    projectA = (await create('a', false)).project.id;
    const b = await create('b', true);
    projectB = b.project.id;
    taskB = b.setup.task.id;
    const key = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'pinned to a', kind: 'project', project_id: projectA },
    });
    expect(key.statusCode).toBe(201);
    pinnedA = key.json().secret;
    expect(pinnedA).toMatch(/^svc_prj_/);
  });
  afterAll(() => t.close());

  it('answers 401 with the envelope when the key is missing, malformed, unknown or revoked', async () => {
    const noKey = await t.app.inject({ method: 'GET', url: '/api/v1/projects' });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json()).toMatchObject({
      error: { code: 'unauthenticated', request_id: expect.stringMatching(/^req_/) },
    });
    for (const authorization of ['Basic abc', 'Bearer', 'Bearer svc_ws_notarealkeyatall', 'Bearer nope']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: { authorization } });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json().error.code).toBe('unauthenticated');
    }
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'short-lived' },
    });
    const { id, secret } = minted.json();
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: bearer(secret) })).statusCode,
    ).toBe(200);
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${id}`,
      headers: bearer(t.workspaceKey),
    });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json().revoked_at).not.toBeNull();
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: bearer(secret) });
    expect(after.statusCode).toBe(401);
  });

  it('stores keys only as digests', async () => {
    const rows = await t.services.db.orm.query.apiKeys.findMany();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(pinnedA);
      expect(JSON.stringify(row)).not.toContain(t.workspaceKey);
    }
  });

  it('lets a pinned key read its own project without Project-ID', async () => {
    const own = await t.app.inject({
      method: 'GET',
      url: `/api/v1/projects/${projectA}`,
      headers: bearer(pinnedA),
    });
    expect(own.statusCode).toBe(200);
    expect(own.json().id).toBe(projectA);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: bearer(pinnedA) });
    expect(list.json().data.map((p: { id: string }) => p.id)).toEqual([projectA]);
  });

  it("gives a pinned key 404 for another project's anything: read, list, change", async () => {
    const other = { ...bearer(pinnedA), 'project-id': projectB };
    const attempts = [
      { method: 'GET', url: `/api/v1/projects/${projectB}`, headers: bearer(pinnedA) },
      { method: 'GET', url: `/api/v1/projects/${projectB}/settings`, headers: bearer(pinnedA) },
      { method: 'GET', url: `/api/v1/projects/${projectB}/setup`, headers: bearer(pinnedA) },
      { method: 'POST', url: `/api/v1/projects/${projectB}/setup`, headers: bearer(pinnedA) },
      {
        method: 'PATCH',
        url: `/api/v1/projects/${projectB}/settings`,
        headers: bearer(pinnedA),
        payload: { 'svc.review.enabled': false },
      },
      { method: 'GET', url: `/api/v1/tasks/${taskB}`, headers: other },
      { method: 'GET', url: `/api/v1/tasks/${taskB}/runs`, headers: other },
      { method: 'POST', url: `/api/v1/tasks/${taskB}/cancel`, headers: other },
      // Even with its own project in scope, another project's task id is not found.
      { method: 'GET', url: `/api/v1/tasks/${taskB}`, headers: bearer(pinnedA) },
      { method: 'GET', url: `/api/v1/tasks/${taskB}/status`, headers: bearer(pinnedA) },
      { method: 'GET', url: `/api/v1/tasks/${taskB}/messages`, headers: bearer(pinnedA) },
      { method: 'POST', url: `/api/v1/tasks/${taskB}/cancel`, headers: bearer(pinnedA) },
    ] as const;
    for (const attempt of attempts) {
      const res = await t.app.inject(attempt);
      expect(res.statusCode, `${attempt.method} ${attempt.url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    // Nothing changed: project b's settings and its setup task are as they were.
    const settings = await t.app.inject({
      method: 'GET',
      url: `/api/v1/projects/${projectB}/settings`,
      headers: bearer(t.workspaceKey),
    });
    expect(settings.json().values['svc.review.enabled']).toBe(true);
    const task = await t.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${taskB}`,
      headers: { ...bearer(t.workspaceKey), 'project-id': projectB },
    });
    expect(task.statusCode).toBe(200);
    expect(task.json().run.status).not.toBe('canceled');
  });

  it('refuses workspace-level changes and key management to a pinned key', async () => {
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: bearer(pinnedA),
      payload: { 'svc.checks.p1_conclusion': 'success' },
    });
    expect(patch.statusCode).toBe(403);
    const keys = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(pinnedA) });
    expect(keys.statusCode).toBe(403);
    const create = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(pinnedA),
      payload: { name: 'x', repository: { full_name: 'acme/a', installation_id: 1 } },
    });
    expect(create.statusCode).toBe(403);
  });

  it('asks a workspace key for Project-ID on project-scoped calls', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${taskB}`,
      headers: bearer(t.workspaceKey),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('project_required');
    const unknown = await t.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${taskB}`,
      headers: { ...bearer(t.workspaceKey), 'project-id': 'prj_nope' },
    });
    expect(unknown.statusCode).toBe(404);
  });
});
