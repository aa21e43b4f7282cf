/**
 * A plan from markdown to a merged draft pull request on the local git host, through the API:
 * discovered → proposed → reviewed, nothing written to the repository until approval, rejection,
 * approval → active with a real draft pull request, completed when it merges, superseded by a
 * newer document, a refused pull request recorded with the host's reason, and every move an
 * event with its actor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPush } from '../../src/automation/plans';
import { type AutomationDeps, onPullRequestEvent } from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { planBranch } from '../../src/plans/activate';
import { tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

const PLAN =
  '# Search\n\n## Goal\nFind things fast.\n\n## Steps\n1. Index\n\n## Risks\nNone.\n\n## Done when\nQueries answer in 50 ms.\n';

type Plan = {
  id: string;
  status: string;
  approval_status: string;
  repo_write_status: string;
  draft_pull_request: { number: number; url: string | null } | null;
  repo_write_error: string | null;
  superseded_by: string | null;
  requires_approval: boolean;
  score: { score: number } | null;
};
type Event = { kind: string; actor: string | null; payload: Record<string, unknown> };

describe('plans that move', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let deps: AutomationDeps;
  let headers: Record<string, string>;
  let keyId: string;

  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const plansByPath = async () => {
    const { body } = await api('GET', '/plans?limit=50');
    return new Map(
      (body.data as (Plan & { repo_artifact_path: string })[]).map((p) => [p.repo_artifact_path, p]),
    );
  };
  const events = async (id: string) => (await api('GET', `/plans/${id}/events`)).body.data as Event[];
  const refs = () => gitIn(repo, ['for-each-ref', '--format=%(refname) %(objectname)']);

  const settle = () => settleRuns(t);

  async function pushPlans(files: Record<string, string>) {
    commitFiles(repo, files, 'plans');
    await onPush(deps, {
      installationId: 1,
      repo: 'acme/api',
      ref: 'refs/heads/main',
      after: gitIn(repo, ['rev-parse', 'main']).trim(),
      defaultBranch: 'main',
      paths: Object.keys(files),
    });
    await settle();
  }

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api') };
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
    const keys = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(t.workspaceKey) });
    keyId = keys.json().data[0].id;
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  let search: Plan;

  it('is discovered, proposed and reviewed, and writes nothing to the repository before approval', async () => {
    const before = refs();
    await pushPlans({ 'docs/plans/search.md': PLAN });
    search = (await plansByPath()).get('docs/plans/search.md') as Plan;
    expect(search).toMatchObject({
      status: 'reviewed',
      approval_status: 'pending',
      repo_write_status: 'not_requested',
      requires_approval: true,
      draft_pull_request: null,
    });
    expect(search.score?.score).toBe(1);
    expect((await events(search.id)).map((e) => [e.kind, e.actor])).toEqual([
      ['discovered', null],
      ['proposed', null],
      ['reviewed', null],
    ]);
    // Only the commit the test pushed moved main: no branch, no pull request ref.
    const main = gitIn(repo, ['rev-parse', 'main']).trim();
    expect(refs()).toBe(before.replace(/^(refs\/heads\/main) \S+$/m, `$1 ${main}`));
    expect(refs()).not.toMatch(/refs\/pull\/|svc\//);
  });

  it('refuses transition kinds as notes, takes other notes with their actor', async () => {
    const forged = await api('POST', `/plans/${search.id}/events`, { kind: 'approved' });
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toContain(`/plans/${search.id}/approve`);
    const note = await api('POST', `/plans/${search.id}/events`, {
      kind: 'note',
      payload: { text: 'ship it' },
    });
    expect(note.status).toBe(201);
    expect(note.body.actor).toBe(keyId);
    expect((await api('GET', `/plans/${search.id}`)).body.status).toBe('reviewed');
  });

  it('is rejected by a person, and a second rejection is a conflict', async () => {
    const rejected = await api('POST', `/plans/${search.id}/reject`, { reason: 'not this quarter' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'reviewed', approval_status: 'rejected' });
    expect((await api('POST', `/plans/${search.id}/reject`, {})).status).toBe(409);
    const last = (await events(search.id)).at(-1);
    expect(last).toMatchObject({ kind: 'rejected', actor: keyId, payload: { reason: 'not this quarter' } });
    expect(refs()).not.toMatch(/refs\/pull\/|svc\//);
  });

  it('once approved, opens a draft pull request with the plan as its body and turns active', async () => {
    const approved = await api('POST', `/plans/${search.id}/approve`, {});
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', repo_write_status: 'draft_pr_requested' });
    await settle();
    const plan = (await api('GET', `/plans/${search.id}`)).body as Plan;
    expect(plan).toMatchObject({ status: 'active', repo_write_status: 'draft_pr_opened' });
    const number = plan.draft_pull_request?.number ?? 0;
    const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const pr = await host.getPullRequest('acme/api', number);
    expect(pr).toMatchObject({ draft: true, baseRef: 'main', headRef: planBranch(search.id) });
    const opened = (await host.localRecords<{ number: number; body: string }>('acme/api', 'pulls')).find(
      (p) => p.number === number,
    );
    expect(opened?.body).toContain('## Done when');
    // The branch starts at main with one empty commit of its own.
    expect(gitIn(repo, ['rev-parse', `${planBranch(search.id)}^`]).trim()).toBe(
      gitIn(repo, ['rev-parse', 'main']).trim(),
    );
    expect((await events(search.id)).slice(-3).map((e) => [e.kind, e.actor])).toEqual([
      ['approved', keyId],
      ['draft_pr_requested', keyId],
      ['draft_pr_opened', null],
    ]);
    expect((await api('POST', `/plans/${search.id}/approve`, {})).status).toBe(409);
  });

  it('completes when its pull request merges', async () => {
    const plan = (await api('GET', `/plans/${search.id}`)).body as Plan;
    const number = plan.draft_pull_request?.number ?? 0;
    await onPullRequestEvent(deps, {
      action: 'closed',
      installationId: 1,
      repo: 'acme/api',
      number,
      title: 'Plan: Search',
      draft: true,
      merged: true,
      headRef: planBranch(search.id),
      headSha: gitIn(repo, ['rev-parse', planBranch(search.id)]).trim(),
      baseRef: 'main',
      author: 'svc',
    });
    expect((await api('GET', `/plans/${search.id}`)).body.status).toBe('completed');
    expect((await events(search.id)).at(-1)).toMatchObject({
      kind: 'completed',
      payload: { pull_request: number },
    });
  });

  it('is superseded by a newer document that says so; a document waiving approval is approved by svc', async () => {
    await pushPlans({ 'docs/plans/export.md': PLAN.replace('Search', 'Export') });
    const older = (await plansByPath()).get('docs/plans/export.md') as Plan;
    expect(older.status).toBe('reviewed');
    await pushPlans({
      'docs/plans/export-v2.md': `---\nsupersedes: docs/plans/export.md\nrequires_approval: false\n---\n${PLAN.replace('Search', 'Export v2')}`,
    });
    const now = await plansByPath();
    const newer = now.get('docs/plans/export-v2.md') as Plan;
    expect(now.get('docs/plans/export.md')).toMatchObject({ status: 'superseded', superseded_by: newer.id });
    expect(newer).toMatchObject({ requires_approval: false, status: 'active', approval_status: 'approved' });
    const approval = (await events(newer.id)).find((e) => e.kind === 'approved');
    expect(approval).toMatchObject({ actor: null, payload: { automatic: true } });
  });

  it("records the code host's refusal by name and retries on a second approval", async () => {
    await pushPlans({ 'docs/plans/gone.md': PLAN.replace('Search', 'Gone') });
    const plan = (await plansByPath()).get('docs/plans/gone.md') as Plan;
    gitIn(repo, ['rm', '-q', 'docs/plans/gone.md']);
    gitIn(repo, ['commit', '-qm', 'drop the plan']);
    await api('POST', `/plans/${plan.id}/approve`, {});
    await settle();
    const failed = (await api('GET', `/plans/${plan.id}`)).body as Plan;
    expect(failed).toMatchObject({ status: 'approved', repo_write_status: 'failed' });
    expect(failed.repo_write_error).toContain('docs/plans/gone.md is no longer on main');
    const task = (await t.services.db.orm.select().from(tasks)).find(
      (x) => x.kind === 'plan_activate' && (x.input as { plan_id: string }).plan_id === plan.id,
    );
    const run = await t.services.engine.latestRun(task?.id ?? '');
    expect(run).toMatchObject({ status: 'failed' });
    expect(run?.error?.code).toBe('tool_failed');

    commitFiles(repo, { 'docs/plans/gone.md': PLAN.replace('Search', 'Gone') }, 'restore the plan');
    expect((await api('POST', `/plans/${plan.id}/approve`, { reason: 'restored' })).status).toBe(200);
    await settle();
    expect((await api('GET', `/plans/${plan.id}`)).body).toMatchObject({
      status: 'active',
      repo_write_status: 'draft_pr_opened',
      repo_write_error: null,
    });
  });
});
