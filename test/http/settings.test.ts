/** Project and workspace settings: defaults without configuration, partial updates, bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { gitIn, makeRepo, makeReposDir } from '../helpers/git';

describe('settings', () => {
  let t: TestApp;
  let projectId: string;
  let repo: string;
  const url = () => `/api/v1/projects/${projectId}/settings`;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/s', { 'a.ts': 'a\n' });
    t = await createTestApp({ reposDir });
    projectId = await createProject(t, 'acme/s');
  });
  afterAll(() => t.close());

  it('reads defaults that work without configuration', async () => {
    const res = await t.app.inject({ method: 'GET', url: url(), headers: bearer(t.workspaceKey) });
    expect(res.statusCode).toBe(200);
    expect(res.json().values).toEqual({
      'svc.review.enabled': true,
      'svc.review.guidance': '',
      'svc.review.budget_usd': 1,
      'svc.repository.default_branch': null,
      'svc.brakes.paused': false,
      'svc.brakes.approval_window': null,
      'svc.brakes.spend_cap_usd': null,
      'svc.brakes.run_budget': null,
    });
    const ws = await t.app.inject({
      method: 'GET',
      url: '/api/v1/settings',
      headers: bearer(t.workspaceKey),
    });
    expect(ws.json().values).toEqual({
      'svc.checks.p0_conclusion': 'action_required',
      'svc.checks.p1_conclusion': 'neutral',
      'svc.checks.p2_conclusion': 'success',
    });
  });

  it('changes only the keys sent', async () => {
    const patch = await t.app.inject({
      method: 'PATCH',
      url: url(),
      headers: bearer(t.workspaceKey),
      payload: { 'svc.review.guidance': 'Prefer early returns.', 'svc.review.budget_usd': 2.5 },
    });
    expect(patch.statusCode).toBe(200);
    const second = await t.app.inject({
      method: 'PATCH',
      url: url(),
      headers: bearer(t.workspaceKey),
      payload: { 'svc.review.enabled': false },
    });
    expect(second.json().values).toMatchObject({
      'svc.review.enabled': false,
      'svc.review.guidance': 'Prefer early returns.',
      'svc.review.budget_usd': 2.5,
    });
    const ws = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: bearer(t.workspaceKey),
      payload: { 'svc.checks.p1_conclusion': 'success' },
    });
    expect(ws.json().values['svc.checks.p1_conclusion']).toBe('success');
    expect(ws.json().values['svc.checks.p0_conclusion']).toBe('action_required');
  });

  it.each([
    [{ 'svc.review.budget_usd': 'lots' }, /budget_usd/],
    [{ 'svc.review.budget_usd': -1 }, /budget_usd/],
    [{ 'svc.review.enabeld': true }, /enabeld/],
    [{ 'svc.brakes.approval_window': { start: 'soon', end: 'later' } }, /approval_window/],
    [{ 'svc.repository.default_branch': '--upload-pack=x' }, /not a branch name: it starts with \\"-\\"/],
    [{ 'svc.repository.default_branch': 'HEAD' }, /not a branch name/],
    [{ 'svc.repository.default_branch': 'main~1' }, /not a branch name/],
  ])('rejects %j and keeps the stored values', async (payload, message) => {
    const res = await t.app.inject({ method: 'PATCH', url: url(), headers: bearer(t.workspaceKey), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
    expect(JSON.stringify(res.json().error)).toMatch(message);
    const after = await t.app.inject({ method: 'GET', url: url(), headers: bearer(t.workspaceKey) });
    expect(after.json().values['svc.review.budget_usd']).toBe(2.5);
  });

  it("names the local repository's default branch for the local code host", async () => {
    const host = t.services.codeHosts.forInstallation(1);
    expect(await host?.defaultBranch('acme/s')).toBe('main');
    gitIn(repo, ['branch', 'develop']);
    const res = await t.app.inject({
      method: 'PATCH',
      url: url(),
      headers: bearer(t.workspaceKey),
      payload: { 'svc.repository.default_branch': 'develop' },
    });
    expect(res.statusCode).toBe(200);
    expect(await host?.defaultBranch('acme/s')).toBe('develop');
    await t.app.inject({
      method: 'PATCH',
      url: url(),
      headers: bearer(t.workspaceKey),
      payload: { 'svc.repository.default_branch': null },
    });
    expect(await host?.defaultBranch('acme/s')).toBe('main');
  });

  it('rejects an unknown check conclusion', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: bearer(t.workspaceKey),
      payload: { 'svc.checks.p0_conclusion': 'block' },
    });
    expect(res.statusCode).toBe(400);
  });
});
