/**
 * Scorecards end to end on the local git host, with a worker: setup enqueues a scorecard; a
 * repository without CI or a lockfile scores low with named evidence; committing them and
 * recomputing raises the score and the level and the `computed` event names the checks that
 * changed; branch protection is unknown locally; quick actions say what they will do, and
 * add_svc_json opens a draft pull request whose branch holds svc.json; other projects see 404.
 */
import { generateKeyPairSync } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCodeHost, LocalPullRecord } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { CHECK_IDS } from '../../src/scorecards/definitions';
import { newId } from '../../src/storage/ids';
import { findings, pullRequests, reviewResults, tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { createGitHubTestApp } from '../helpers/github-app';
import { GitHubDouble } from '../helpers/github-double';

type Check = {
  id: string;
  check: string;
  result: string;
  evidence: { paths?: string[]; numbers?: Record<string, number>; note: string };
};
type QuickAction = {
  id: string;
  kind: string;
  check: string;
  does: string;
  operation: { tool: string; method: string; path: string } | null;
  why_no_operation: string | null;
  change: { files: { path: string; content: string }[] } | null;
  status: string;
  task_id: string | null;
  result: Record<string, unknown> | null;
};

const PACKAGE = {
  name: 'shop',
  scripts: { test: 'vitest run' },
  devDependencies: { vitest: '3.2.4' },
};

describe('scorecards', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let projectId: string;
  let headers: Record<string, string>;
  let firstScorecard: string;

  const get = (url: string, h = headers) => t.app.inject({ method: 'GET', url, headers: h });
  const post = (url: string, payload?: object, h = headers) =>
    t.app.inject({ method: 'POST', url, headers: h, ...(payload ? { payload } : {}) });

  async function waitForTask(taskId: string) {
    for (let i = 0; i < 400; i++) {
      const res = await get(`/api/v1/tasks/${taskId}/status`);
      if (['completed', 'failed', 'canceled'].includes(res.json().status)) return res.json();
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} did not finish`);
  }

  const checksOf = async (scorecardId?: string) =>
    new Map<string, Check>(
      (await get(`/api/v1/checks${scorecardId ? `?scorecard_id=${scorecardId}` : ''}`))
        .json()
        .data.map((c: Check) => [c.check, c]),
    );
  const quickActions = async () => (await get('/api/v1/quick-actions')).json().data as QuickAction[];

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/shop', {
      'package.json': `${JSON.stringify(PACKAGE, null, 2)}\n`,
      'src/cart.js': 'export const cart = [];\n',
      'src/pay.js': 'export const pay = () => 1;\n',
    });
    makeRepo(reposDir, 'acme/other', { 'a.ts': 'export const a = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('setup enqueues a scorecard task, which computes the first scorecard', async () => {
    const res = await post(
      '/api/v1/projects',
      { name: 'shop', repository: { full_name: 'acme/shop', installation_id: 1 }, setup: true },
      bearer(t.workspaceKey),
    );
    expect(res.statusCode).toBe(201);
    projectId = res.json().project.id;
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const setup = await waitForTask(res.json().setup.task.id);
    expect(setup.status).toBe('completed');
    const setupTask = (await get(`/api/v1/tasks/${res.json().setup.task.id}`)).json();
    const scorecardTaskId = setupTask.run.result.scorecard_task_id;
    expect(scorecardTaskId).toMatch(/^tsk_/);
    const scorecardTask = (await get(`/api/v1/tasks/${scorecardTaskId}`)).json();
    expect(scorecardTask.kind).toBe('scorecard');
    expect((await waitForTask(scorecardTaskId)).status).toBe('completed');

    const list = (await get('/api/v1/scorecards')).json();
    expect(list.data).toHaveLength(1);
    firstScorecard = list.data[0].id;
    expect(list.data[0]).toMatchObject({
      object: 'scorecard',
      id: expect.stringMatching(/^scd_/),
      trigger: 'setup',
      task_id: scorecardTaskId,
      previous_scorecard_id: null,
      gaps: [],
      commit_sha: gitIn(repo, ['rev-parse', 'main']).trim(),
    });
    const knowledge = (await get('/api/v1/repo-knowledge')).json().data[0];
    expect(list.data[0].knowledge_id).toBe(knowledge.id);
    expect((await get(`/api/v1/tasks/${scorecardTaskId}`)).json().run.result.scorecard_id).toBe(
      firstScorecard,
    );
  });

  it('scores a repository without CI or a lockfile low, with named evidence', async () => {
    const scorecard = (await get(`/api/v1/scorecards/${firstScorecard}`)).json();
    expect(scorecard.level).toEqual({ level: 0, name: 'None' });
    expect(scorecard.score).toBeLessThan(30);
    expect(scorecard.next_level).toEqual({
      level: 1,
      name: 'Tracked',
      needs: ['lockfile_committed', 'runtime_declared'],
    });
    const checks = await checksOf();
    expect([...checks.keys()]).toEqual([...CHECK_IDS]);
    expect(scorecard.counts.pass + scorecard.counts.fail + scorecard.counts.unknown).toBe(CHECK_IDS.length);
    expect(checks.get('lockfile_committed')).toMatchObject({
      object: 'check',
      id: expect.stringMatching(/^chk_/),
      result: 'fail',
      scorecard_id: firstScorecard,
      evidence: { paths: ['package.json'], numbers: { package_managers: 1, with_lockfile: 0 } },
      remedy: expect.stringContaining('package-lock.json'),
    });
    expect(checks.get('ci_runs_tests_on_pull_requests')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { ci_files: 0 } },
    });
    expect(checks.get('tests_present')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { test_files: 0, source_files: 2 } },
    });
    expect(checks.get('review_check_required')).toMatchObject({
      result: 'unknown',
      evidence: { note: 'the local code host has no branch protection' },
    });
    expect(checks.get('secrets_absent')?.result).toBe('unknown');

    const failing = (await get('/api/v1/checks?result=fail')).json().data;
    expect(failing.map((c: Check) => c.check)).toContain('lockfile_committed');
    expect(failing.every((c: Check) => c.result === 'fail')).toBe(true);
    const one = await get(`/api/v1/checks/${checks.get('lockfile_committed')?.id}`);
    expect(one.json()).toEqual(checks.get('lockfile_committed'));
  });

  it('lists quick actions saying what each will do, with an operation only where svc can do it', async () => {
    const actions = await quickActions();
    const ci = actions.find((a) => a.kind === 'add_ci_test_workflow');
    expect(ci).toMatchObject({
      check: 'ci_runs_tests_on_pull_requests',
      status: 'available',
      does: expect.stringContaining('Opens a draft pull request adding .github/workflows/svc-tests.yml'),
      operation: { tool: 'quick_actions_run', method: 'POST', path: `/api/v1/quick-actions/${ci?.id}/runs` },
      why_no_operation: null,
    });
    expect(ci?.does).toContain('`npm test`');
    const protect = actions.find((a) => a.kind === 'require_review_check');
    expect(protect).toMatchObject({
      operation: null,
      why_no_operation: 'the local code host has no branch protection',
    });
    const refused = await post(`/api/v1/quick-actions/${protect?.id}/runs`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('the local code host has no branch protection'),
    });
    expect((await get(`/api/v1/quick-actions/${ci?.id}`)).json()).toEqual(ci);
  });

  it('serves the ladder with what the latest scorecard reached', async () => {
    const levels = (await get('/api/v1/scorecard-levels')).json().data;
    expect(levels.length).toBeGreaterThanOrEqual(5);
    expect(levels[0]).toMatchObject({
      object: 'scorecard_level',
      id: 'lvl_1',
      level: 1,
      name: 'Tracked',
      requires: ['lockfile_committed', 'runtime_declared'],
      reached: false,
      scorecard_id: firstScorecard,
    });
    expect((await get('/api/v1/scorecard-levels/lvl_2')).json()).toEqual(levels[1]);
    expect((await get('/api/v1/scorecard-levels/lvl_9')).statusCode).toBe(404);
  });

  it('recomputes on request after files are added: score and level rise, the event names what changed', async () => {
    const head = commitFiles(repo, {
      'package.json': `${JSON.stringify({ ...PACKAGE, engines: { node: '>=20' } }, null, 2)}\n`,
      'package-lock.json': '{"lockfileVersion":3}\n',
      'src/cart.test.js': 'import { test } from "vitest";\ntest("cart", () => {});\n',
      '.github/workflows/ci.yml':
        'on: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm ci\n      - run: npm test\n',
    });
    const ack = await post('/api/v1/scorecards');
    expect(ack.statusCode).toBe(202);
    expect(ack.json()).toMatchObject({
      id: expect.stringMatching(/^tsk_/),
      run_id: expect.stringMatching(/^run_/),
    });
    expect((await waitForTask(ack.json().id)).status).toBe('completed');

    const [latest, previous] = (await get('/api/v1/scorecards')).json().data;
    expect(previous.id).toBe(firstScorecard);
    expect(latest).toMatchObject({
      trigger: 'request',
      previous_scorecard_id: firstScorecard,
      commit_sha: head,
    });
    expect(latest.score).toBeGreaterThan(previous.score);
    expect(latest.level).toEqual({ level: 2, name: 'Tested' });
    expect(latest.next_level.level).toBe(3);
    // The knowledge was refreshed at the new head, so every check reads the same commit.
    expect((await get('/api/v1/repo-knowledge')).json().data[0]).toMatchObject({
      commit_sha: head,
      refreshed_by: 'scorecard',
    });

    const checks = await checksOf();
    expect(checks.get('lockfile_committed')).toMatchObject({
      result: 'pass',
      evidence: { paths: ['package-lock.json'] },
    });
    expect(checks.get('ci_runs_tests_on_pull_requests')).toMatchObject({
      result: 'pass',
      evidence: { paths: ['.github/workflows/ci.yml'] },
    });
    // The first scorecard's checks are still readable.
    expect((await checksOf(firstScorecard)).get('lockfile_committed')?.result).toBe('fail');

    const events = (await get(`/api/v1/scorecards/${latest.id}/events`)).json().data;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'computed',
      subject_type: 'scorecard',
      actor: null,
      payload: {
        previous_scorecard_id: firstScorecard,
        score: { from: previous.score, to: latest.score },
        level: { from: 0, to: 2 },
      },
    });
    const changed = events[0].payload.changed as { check: string; from: string; to: string }[];
    expect(changed).toEqual(
      expect.arrayContaining([
        { check: 'lockfile_committed', from: 'fail', to: 'pass' },
        { check: 'runtime_declared', from: 'fail', to: 'pass' },
        { check: 'tests_present', from: 'fail', to: 'pass' },
        { check: 'ci_runs_tests_on_pull_requests', from: 'fail', to: 'pass' },
      ]),
    );
    expect(changed.map((c) => c.check)).not.toContain('review_check_required');

    const note = await post(`/api/v1/scorecards/${latest.id}/events`, {
      kind: 'note.added',
      payload: { text: 'ok' },
    });
    expect(note.statusCode).toBe(201);
    expect(
      (await get(`/api/v1/scorecards/${latest.id}/events`)).json().data.map((e: { kind: string }) => e.kind),
    ).toEqual(['computed', 'note.added']);
  });

  it('runs add_svc_json on the local host: a draft pull request whose branch holds svc.json', async () => {
    const stale = (await get(`/api/v1/quick-actions?scorecard_id=${firstScorecard}`)).json()
      .data as QuickAction[];
    const staleSvcJson = stale.find((a) => a.kind === 'add_svc_json');
    const action = (await quickActions()).find((a) => a.kind === 'add_svc_json') as QuickAction;
    expect(action.operation?.path).toBe(`/api/v1/quick-actions/${action.id}/runs`);
    expect(action.does).toContain('node >=20');

    // An action of a replaced scorecard is not run: the latest scorecard's is named instead.
    const old = await post(`/api/v1/quick-actions/${staleSvcJson?.id}/runs`);
    expect(old.statusCode).toBe(409);
    expect(old.json().error.details).toMatchObject({ quick_action_id: action.id });

    const mainBefore = gitIn(repo, ['rev-parse', 'main']).trim();
    const ack = await post(`/api/v1/quick-actions/${action.id}/runs`);
    expect(ack.statusCode).toBe(202);
    const status = await waitForTask(ack.json().id);
    const done = (await get(`/api/v1/quick-actions/${action.id}`)).json() as QuickAction;
    expect(status.status, JSON.stringify(done.result)).toBe('completed');
    expect(done).toMatchObject({ status: 'done', task_id: ack.json().id });
    const result = done.result as { pull_request: { number: number }; branch: string; commit: string };
    expect(result.branch).toBe(`svc/quick-action/add_svc_json-${action.id.slice(-8)}`);
    const planned = action.change?.files[0]?.content;
    expect(gitIn(repo, ['show', `${result.branch}:svc.json`])).toBe(planned);
    expect(JSON.parse(planned ?? '{}').runtimes).toEqual([{ name: 'node', version: '>=20' }]);
    expect(gitIn(repo, ['rev-parse', result.branch]).trim()).toBe(result.commit);
    const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const pulls = await host.localRecords<LocalPullRecord>('acme/shop', 'pulls');
    expect(pulls.find((p) => p.number === result.pull_request.number)).toMatchObject({
      draft: true,
      headRef: result.branch,
      baseRef: 'main',
      title: 'Add svc.json',
    });
    // The default branch is untouched: the change waits in its draft pull request.
    expect(gitIn(repo, ['rev-parse', 'main']).trim()).toBe(mainBefore);
    expect(gitIn(repo, ['ls-tree', '--name-only', 'main'])).not.toContain('svc.json');
    // Not twice.
    const again = await post(`/api/v1/quick-actions/${action.id}/runs`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toContain('already done');
  });

  it("answers 404 for another project's scorecard, checks and quick actions", async () => {
    const other = await createProject(t, 'acme/other');
    const otherHeaders = { ...bearer(t.workspaceKey), 'project-id': other };
    const action = (await quickActions())[0] as QuickAction;
    const check = [...(await checksOf()).values()][0] as Check;
    for (const url of [
      `/api/v1/scorecards/${firstScorecard}`,
      `/api/v1/scorecards/${firstScorecard}/events`,
      `/api/v1/checks/${check.id}`,
      `/api/v1/checks?scorecard_id=${firstScorecard}`,
      `/api/v1/quick-actions/${action.id}`,
    ]) {
      expect((await get(url, otherHeaders)).statusCode, url).toBe(404);
    }
    expect((await post(`/api/v1/quick-actions/${action.id}/runs`, undefined, otherHeaders)).statusCode).toBe(
      404,
    );
    expect((await get('/api/v1/scorecards', otherHeaders)).json().data).toEqual([]);
    expect((await get('/api/v1/checks', otherHeaders)).json().data).toEqual([]);
    expect((await get('/api/v1/scorecard-levels', otherHeaders)).json().data[0].reached).toBeNull();
    const ownTasks = await t.services.db.orm
      .select()
      .from(tasks)
      .where(and(eq(tasks.projectId, other), eq(tasks.kind, 'scorecard')));
    expect(ownTasks).toEqual([]);
  });
});

/**
 * The ledger checks read the findings svc recorded: a study pass recomputes the scorecard, and
 * each rate, open P0 and secret traces to the rows it was counted from.
 */
describe('scorecards from the findings ledger', () => {
  let t: TestApp;
  let worker: Worker;
  let projectId: string;
  let headers: Record<string, string>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/ledger', { 'src/app.js': 'export const ok = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    projectId = await createProject(t, 'acme/ledger');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const orm = t.services.db.orm;
    const scope = { workspaceId: t.workspaceId, projectId };
    const day = 86_400_000;
    const hour = 3_600_000;
    const recent = new Date(Date.now() - 5 * day);
    const [merged, open] = await orm
      .insert(pullRequests)
      .values([
        {
          id: newId('pullRequest'),
          ...scope,
          number: 1,
          mergedAt: new Date(Date.now() - day),
          state: 'closed',
        },
        { id: newId('pullRequest'), ...scope, number: 2 },
      ])
      .returning();
    let n = 0;
    const finding = (over: Partial<typeof findings.$inferInsert>): typeof findings.$inferInsert => {
      n++;
      return {
        id: newId('finding'),
        ...scope,
        ledgerKey: `pr:${merged?.id}`,
        pullRequestId: merged?.id ?? null,
        fingerprint: `f${n}`,
        status: 'open',
        severity: 'P2',
        path: `src/f${n}.js`,
        line: n,
        endLine: n,
        title: 't',
        body: 'b',
        rule: 'correctness/debug-statement',
        category: 'correctness',
        anchorText: 'x',
        taskId: 'tsk_x',
        firstRunId: 'run_x',
        lastRunId: 'run_x',
        createdAt: recent,
        ...over,
      };
    };
    const fixedAfter = (hours: number) => ({
      status: 'fixed' as const,
      fixedAt: new Date(recent.getTime() + hours * hour),
    });
    const p0 = finding({ severity: 'P0', rule: 'security/sql-injection', category: 'security' });
    const secret = finding({
      rule: 'secrets/aws',
      category: 'secrets',
      severity: 'P0',
      pullRequestId: open?.id ?? null,
      ...fixedAfter(10),
    });
    ids.p0 = p0.id as string;
    await orm.insert(findings).values([
      ...[1, 2, 3, 4].map(() =>
        finding({ rule: 'security/weak-hash', category: 'security', status: 'dismissed' }),
      ),
      finding({ rule: 'security/weak-hash', category: 'security', ...fixedAfter(2) }),
      finding({ rule: 'security/weak-hash', category: 'security', ...fixedAfter(4) }),
      finding(fixedAfter(1)),
      finding(fixedAfter(3)),
      finding(fixedAfter(5)),
      p0,
      // Open P0 on a pull request that has not merged: not on the default branch.
      finding({
        severity: 'P0',
        rule: 'security/xss',
        category: 'security',
        pullRequestId: open?.id ?? null,
      }),
      secret,
      // Outside the 30-day window.
      finding({
        createdAt: new Date(Date.now() - 40 * day),
        status: 'fixed',
        fixedAt: new Date(Date.now() - 39 * day),
      }),
    ]);
    await orm.insert(reviewResults).values(
      [1, 2].map((i) => ({
        id: newId('reviewResult'),
        ...scope,
        taskId: `tsk_${i}`,
        runId: `run_${i}`,
        baseSha: 'a'.repeat(40),
        headSha: 'b'.repeat(40),
        createdAt: new Date(Date.now() - (10 - i) * day),
      })),
    );
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  async function finished(taskId: string) {
    for (let i = 0; i < 400; i++) {
      const run = await t.services.engine.latestRun(taskId);
      if (run && ['completed', 'failed', 'canceled'].includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} did not finish`);
  }

  it('a study pass is followed by a scorecard whose ledger checks name their numbers', async () => {
    const { task } = await t.services.engine.createTask({
      workspaceId: t.workspaceId,
      projectId,
      kind: 'study',
      title: 'Study',
      input: {},
    });
    const study = await finished(task.id);
    expect(study.status).toBe('completed');
    const scorecardTask = (study.result as { scorecard_task_id: string }).scorecard_task_id;
    expect((await finished(scorecardTask)).status).toBe('completed');

    const [scorecard] = (await t.app.inject({ method: 'GET', url: '/api/v1/scorecards', headers })).json()
      .data;
    expect(scorecard).toMatchObject({ trigger: 'study', task_id: scorecardTask, gaps: [] });
    const checks = new Map<string, Check>(
      (await t.app.inject({ method: 'GET', url: '/api/v1/checks', headers }))
        .json()
        .data.map((c: Check) => [c.check, c]),
    );
    // 12 findings in the window: 6 fixed, 4 dismissed, 2 open.
    expect(checks.get('fix_rate_30d')).toMatchObject({
      result: 'pass',
      evidence: { numbers: { findings: 12, fixed: 6, dismissed: 4, open: 2, fix_rate_pct: 50 } },
    });
    // Fixed after 1, 2, 3, 4, 5 and 10 hours.
    expect(checks.get('median_time_to_fix_30d')).toMatchObject({
      result: 'pass',
      evidence: { numbers: { fixed: 6, median_hours: 3.5 } },
    });
    // Only security/weak-hash has the 5 findings a rate needs (debug-statement: 3 in the window).
    expect(checks.get('dismissal_rate_per_rule')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { rules_measured: 1, noisy_rules: 1, 'dismissed_pct:security/weak-hash': 67 } },
    });
    expect(checks.get('no_open_p0_on_default_branch')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { merged_pull_requests: 1, open_p0: 1 } },
    });
    expect(checks.get('no_open_p0_on_default_branch')?.evidence.note).toContain(
      `${ids.p0} security/sql-injection`,
    );
    expect(checks.get('secrets_absent')).toMatchObject({
      result: 'fail',
      evidence: {
        numbers: { reviews: 2, secret_findings: 1 },
        note: expect.stringContaining('secrets/aws at'),
      },
    });
    expect(checks.get('secrets_absent')?.evidence.note).toContain('on #2, fixed');
    const actions = (await t.app.inject({ method: 'GET', url: '/api/v1/quick-actions', headers })).json()
      .data as QuickAction[];
    expect(actions.find((a) => a.kind === 'tune_noisy_rules')).toMatchObject({
      check: 'dismissal_rate_per_rule',
      operation: null,
      does: expect.stringContaining('security/weak-hash'),
    });
  });
});

/**
 * On GitHub (the local double, validated against GitHub's REST description) branch protection can
 * be read and changed: the review check is failed, then required by its quick action.
 */
describe('scorecards on GitHub', () => {
  const APP_ID = 4242;
  const INSTALLATION = 888;
  let double: GitHubDouble;
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;

  async function compute() {
    const ack = await t.app.inject({ method: 'POST', url: '/api/v1/scorecards', headers });
    expect(ack.statusCode).toBe(202);
    for (let i = 0; i < 400; i++) {
      const run = await t.services.engine.latestRun(ack.json().id);
      if (run && ['completed', 'failed', 'canceled'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const checks = (await t.app.inject({ method: 'GET', url: '/api/v1/checks', headers })).json()
      .data as Check[];
    const actions = (await t.app.inject({ method: 'GET', url: '/api/v1/quick-actions', headers })).json()
      .data as QuickAction[];
    return { checks: new Map(checks.map((c) => [c.check, c])), actions };
  }

  async function run(action: QuickAction | undefined) {
    const ack = await t.app.inject({
      method: 'POST',
      url: `/api/v1/quick-actions/${action?.id}/runs`,
      headers,
    });
    expect(ack.statusCode, ack.body).toBe(202);
    for (let i = 0; i < 400; i++) {
      const done = (
        await t.app.inject({ method: 'GET', url: `/api/v1/quick-actions/${action?.id}`, headers })
      ).json() as QuickAction;
      if (done.status === 'done' || done.status === 'failed') return done;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`quick action ${action?.id} did not finish`);
  }

  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    double = await GitHubDouble.start({ appId: APP_ID, publicKey, installations: [INSTALLATION] });
    const repo = makeRepo(makeReposDir(), 'acme/api', {
      'package.json': `${JSON.stringify({ ...PACKAGE, engines: { node: '>=20' } }, null, 2)}\n`,
      'package-lock.json': '{"lockfileVersion":3}\n',
      'src/cart.js': 'export const cart = [];\n',
      'src/cart.test.js': 'test("cart", () => {});\n',
    });
    await double.seedFromGit('acme', 'api', repo, { installationId: INSTALLATION });
    double.setBranchProtection('acme/api', 'main', { contexts: ['build'] });
    t = await createGitHubTestApp(double, {
      appId: APP_ID,
      privateKey,
      webhookSecret: 'scorecard-test-secret',
    });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api', INSTALLATION) };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  it('fails the review check that protection does not require, and requires it by its quick action', async () => {
    const before = await compute();
    expect(before.checks.get('review_check_required')).toMatchObject({
      result: 'fail',
      evidence: {
        numbers: { required_checks: 1 },
        note: 'branch protection of main requires build, not Service / Review',
      },
    });
    const protect = before.actions.find((a) => a.kind === 'require_review_check');
    expect(protect?.operation?.tool).toBe('quick_actions_run');
    expect(protect?.does).toContain('keeping the others');
    const done = await run(protect);
    expect(done).toMatchObject({
      status: 'done',
      result: { required_check: 'Service / Review', branch: 'main' },
    });
    expect(
      double.branchProtection('acme/api', 'main')?.requiredStatusChecks?.checks.map((c) => c.context),
    ).toEqual(['build', 'Service / Review']);

    const after = await compute();
    expect(after.checks.get('review_check_required')?.result).toBe('pass');
    expect(after.actions.map((a) => a.kind)).not.toContain('require_review_check');
    expect(double.rejections).toEqual([]);
  });

  it('opens the CI workflow as a draft pull request on GitHub', async () => {
    const { actions } = await compute();
    const ci = actions.find((a) => a.kind === 'add_ci_test_workflow');
    expect(ci?.does).toContain('`npm ci`, `npm test`');
    const done = await run(ci);
    expect(done.status, JSON.stringify(done.result)).toBe('done');
    const number = (done.result as { pull_request: { number: number } }).pull_request.number;
    expect(double.pulls.find((p) => p.repo === 'acme/api' && p.number === number)).toMatchObject({
      draft: true,
      base: 'main',
      head: `svc/quick-action/add_ci_test_workflow-${ci?.id.slice(-8)}`,
      title: 'Run the tests on pull requests',
    });
    expect(double.rejections).toEqual([]);
  });

  it('says the check is unknown when svc may not read branch protection', async () => {
    double.setAdministrationPermission(INSTALLATION, 'none');
    const { checks, actions } = await compute();
    expect(checks.get('review_check_required')).toMatchObject({
      result: 'unknown',
      evidence: { note: 'the code host did not say which checks protect main' },
    });
    // Requiring it is still the step; running it would say what GitHub refused.
    expect(actions.find((a) => a.kind === 'require_review_check')?.operation).not.toBeNull();
  });
});
