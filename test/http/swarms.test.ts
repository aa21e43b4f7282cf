/**
 * Swarms end to end over the API, on a real git repository with pull request refs that the local
 * watcher records (two open, one merged after its review): a swarm reviewing every open pull
 * request, one re-reviewing the merged one with a priced model pin (spend and the reviewer's
 * model measurements), the study pass with its rescore, cancel of a swarm whose children are still
 * pending, tenancy, validation, idempotency, paging and the swarm's timeline. Both engines.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalWatcher } from '../../src/automation/local-watch';
import { Engine } from '../../src/engine/engine';
import { Worker } from '../../src/engine/worker';
import { swarmHandler } from '../../src/review/swarm';
import { bearer, createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { answers, type OpenAIDouble, startOpenAIDouble } from '../helpers/openai-double';

type Swarm = {
  id: string;
  goal: string;
  status: string;
  task_id: string;
  children: Record<string, number>;
  child_task_ids: string[];
  spend_usd: number | null;
  cost_unknown_children: number;
  result: Record<string, unknown>;
  skipped: Record<string, unknown>[];
};

const UNSAFE = 'export function run(req) {\n  return eval(req.query.code);\n}\n';

describe.each(DATABASE_KINDS)('swarms on %s', (kind) => {
  let t: TestApp;
  let worker: Worker;
  let double: OpenAIDouble;
  let repo: string;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;
  let mergedReviewId: string;

  const get = (url: string, as = headers) => t.app.inject({ method: 'GET', url, headers: as });
  const post = (url: string, payload?: unknown, extra: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, ...extra },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    let last: T | undefined;
    for (let i = 0; i < 600; i++) {
      last = await read();
      if (done(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${what} did not happen: ${JSON.stringify(last)}`);
  }

  const readSwarm = async (id: string) => {
    const res = await get(`/api/v1/swarms/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Swarm;
  };
  const swarmEnded = (id: string) =>
    waitFor(
      () => readSwarm(id),
      (s) => ['completed', 'failed', 'canceled'].includes(s.status),
      `swarm ${id} ending`,
    );

  async function startSwarm(payload: unknown): Promise<string> {
    const res = await post('/api/v1/swarms', payload);
    expect(res.statusCode, res.body).toBe(202);
    const ack = res.json();
    expect(ack).toEqual({
      id: expect.stringMatching(/^tsk_/),
      run_id: expect.stringMatching(/^run_/),
      status_url: `/api/v1/tasks/${ack.id}/status`,
      swarm_url: `/api/v1/swarms/${ack.id}`,
    });
    return ack.id;
  }

  const timelineOf = async (id: string) => {
    const res = await get(`/api/v1/timeline-events?subject_type=swarm&subject_id=${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { kind: string; actor: string | null; payload: Record<string, unknown> }[];
  };

  beforeAll(async () => {
    double = await startOpenAIDouble({ apiKey: null });
    // Every model call reports its tokens, so a first-party model's cost is known.
    double.fallback = () => answers.findings([], { prompt_tokens: 1000, completion_tokens: 100 });
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/shop', {
      'src/app.js': 'export const ok = 1;\n',
      'README.md': '# shop\n',
    });
    const branch = (name: string, files: Record<string, string>, pr: number) => {
      gitIn(repo, ['checkout', '-q', '-b', name]);
      commitFiles(repo, files, name);
      gitIn(repo, ['checkout', '-q', 'main']);
      gitIn(repo, ['update-ref', `refs/pull/${pr}/head`, name]);
    };
    branch('feature', { 'src/run.js': UNSAFE }, 1);
    branch('docs', { 'README.md': '# shop\n\nHow to run it.\n' }, 2);
    branch('prices', { 'src/prices.js': 'export const total = (a, b) => a + b;\n' }, 3);
    makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });

    t = await createTestApp({
      kind,
      reposDir,
      env: { SVC_POLL_MS: '50', OPENAI_API_KEY: 'test', OPENAI_BASE_URL: double.baseURL },
    });
    // One slot: a swarm that waited for its children inside its run would never let them run.
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    const projectId = await createProject(t, 'acme/shop');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    otherHeaders = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/other') };
    // The watcher records the pull requests; with automatic review off it starts no review itself.
    const off = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/projects/${projectId}/settings`,
      headers,
      payload: { 'svc.review.enabled': false },
    });
    expect(off.statusCode, off.body).toBe(200);
    const watcher = new LocalWatcher(t.services, { logger: pino({ level: 'silent' }) });
    const opened = await watcher.tick();
    expect(opened.errors).toEqual([]);

    // Pull request 3 is reviewed, then merged: the watcher counts the merge.
    const review = await post('/api/v1/reviews', { pr: 3, reviewers: ['security'] });
    expect(review.statusCode, review.body).toBe(202);
    mergedReviewId = review.json().id;
    await settleRuns(t);
    gitIn(repo, ['merge', '-q', '--no-ff', 'prices', '-m', 'merge prices']);
    const merged = await watcher.tick();
    expect(merged.triggered.map((x) => x.outcome)).toContain('merge_counted');
    await settleRuns(t);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  let reviewSwarmId: string;

  it('reviews every open pull request as its children and reports each one', async () => {
    reviewSwarmId = await startSwarm({
      goal: 'review_open_pull_requests',
      params: { reviewers: ['security'] },
    });
    const swarm = await swarmEnded(reviewSwarmId);
    expect(swarm.status).toBe('completed');
    expect(swarm.task_id).toBe(reviewSwarmId);
    // Two open pull requests: the merged one is not reviewed again.
    expect(swarm.children).toEqual({
      pending: 0,
      running: 0,
      completed: 2,
      failed: 0,
      canceled: 0,
      total: 2,
    });
    expect(swarm.child_task_ids).toHaveLength(2);
    for (const child of swarm.child_task_ids) {
      const task = (await get(`/api/v1/reviews/${child}`)).json();
      expect(task.run.status).toBe('completed');
    }
    const prs = swarm.result.pull_requests as Record<string, unknown>[];
    expect(prs.map((p) => p.pr)).toEqual([1, 2]);
    expect(prs[0]).toMatchObject({ run_status: 'completed', review_status: 'reviewed' });
    expect(prs[0]?.p0).toBeGreaterThanOrEqual(1);
    expect(prs[1]).toMatchObject({ run_status: 'completed', review_status: 'reviewed', p0: 0 });
    expect((swarm.result.open as { p0: number }).p0).toBe(prs[0]?.p0);
    // Rule reviewers report no price: the spend is unknown, not $0.
    expect(swarm.spend_usd).toBeNull();
    expect(swarm.cost_unknown_children).toBe(2);
    // The swarm's task is a task like any other.
    const task = (await get(`/api/v1/tasks/${reviewSwarmId}`)).json();
    expect(task.run.status).toBe('completed');
  });

  it('writes the swarm’s life on its timeline, each event once', async () => {
    const log = await timelineOf(reviewSwarmId);
    expect(log.map((e) => e.kind)).toEqual(['completed', 'started', 'created']);
    const created = log[2];
    expect(created?.actor).toMatch(/^key_/);
    expect(created?.payload).toMatchObject({ goal: 'review_open_pull_requests' });
    const started = log[1]?.payload.children as { task_id: string; pr: number }[];
    expect(started.map((c) => c.pr)).toEqual([1, 2]);
    expect(log[0]?.payload).toMatchObject({ children: { completed: 2, total: 2 }, spend_usd: null });
  });

  it('re-reviews the merged pull request on a candidate pin, measures it and counts its known spend', async () => {
    const id = await startSwarm({
      goal: 'rereview_merged',
      params: { count: 2, reviewer: { reviewer_id: 'general', model: 'openai/gpt-4.1-nano' } },
    });
    const swarm = await swarmEnded(id);
    expect(swarm.status).toBe('completed');
    expect(swarm.children.total).toBe(1);
    // Two asked for, one merged pull request known.
    expect(swarm.skipped.map((s) => s.reason)).toEqual(['fewer_merged']);
    const original = (await get(`/api/v1/reviews/${mergedReviewId}`)).json();
    const child = (await get(`/api/v1/reviews/${swarm.child_task_ids[0]}`)).json();
    // The same range the merged pull request's review read, as a range review (its own ledger).
    expect(child).toMatchObject({
      pr: null,
      base: original.run.result.review.base_sha,
      head: original.run.result.review.head_sha,
      reviewers: [{ reviewer_id: 'general', model: 'openai/gpt-4.1-nano' }],
    });
    expect(child.run.status).toBe('completed');
    expect(child.run.cost_usd).toBeGreaterThan(0);
    expect(swarm.spend_usd).toBeCloseTo(child.run.cost_usd, 9);
    expect(swarm.cost_unknown_children).toBe(0);
    expect(swarm.result).toMatchObject({
      reviewer_id: 'general',
      model: 'openai/gpt-4.1-nano',
      models_url: '/api/v1/reviewers/general/models',
      measured: { reviews: 1, completed: 1, failed: 0, findings: 0 },
    });
    const models = (await get('/api/v1/reviewers/general/models')).json().data as {
      model: string;
      runs: number;
      pinned: boolean;
    }[];
    expect(models.find((m) => m.model === 'openai/gpt-4.1-nano')).toMatchObject({ runs: 1, pinned: false });
    // Measured, not pinned: the governed pin is unchanged.
    expect(models.find((m) => m.pinned)?.model).toBe('openai/gpt-4o-mini');
  });

  it('runs the study pass, adopts the scorecard it queues and reports the new score', async () => {
    const id = await startSwarm({ goal: 'study_and_rescore' });
    const swarm = await swarmEnded(id);
    expect(swarm.status).toBe('completed');
    expect(swarm.children).toMatchObject({ completed: 2, total: 2 });
    const result = swarm.result as {
      study: { run_status: string; learnings_created: string[] };
      scorecard: { task_id: string; scorecard_id: string; score: number | null };
    };
    expect(result.study).toMatchObject({ run_status: 'completed', learnings_created: [] });
    expect(result.scorecard.scorecard_id).toMatch(/^scd_/);
    expect(swarm.child_task_ids).toContain(result.scorecard.task_id);
    const scorecard = (await get(`/api/v1/scorecards/${result.scorecard.scorecard_id}`)).json();
    expect(scorecard.score).toBe(result.scorecard.score);
  });

  it.each([
    ['swarms_cancel', (id: string) => `/api/v1/swarms/${id}/cancel`],
    ['tasks_cancel on its task', (id: string) => `/api/v1/tasks/${id}/cancel`],
  ])(
    'cancels a swarm whose children are still pending (%s): every child run ends canceled',
    async (_, cancelUrl) => {
      await worker.stop();
      // A worker that runs only swarms: the fan-out happens, the reviews wait in the queue.
      const swarmsOnly = new Engine(t.services.db, t.services.engine.limits, {}, pino({ level: 'silent' }));
      swarmsOnly.registerHandler('swarm', swarmHandler(swarmsOnly));
      const coordinator = new Worker(swarmsOnly, { concurrency: 1, sweeper: false });
      await coordinator.start();
      try {
        const id = await startSwarm({ goal: 'review_open_pull_requests' });
        const running = await waitFor(
          () => readSwarm(id),
          (s) => s.status === 'running',
          'the fan-out',
        );
        expect(running.children).toMatchObject({ pending: 2, total: 2 });
        expect(running.spend_usd).toBeNull();
        expect(running.cost_unknown_children).toBe(0);

        const canceled = await post(cancelUrl(id));
        expect(canceled.statusCode, canceled.body).toBe(200);
        expect(await readSwarm(id)).toMatchObject({
          status: 'canceled',
          children: { pending: 0, running: 0, canceled: 2, total: 2 },
        });
        for (const child of running.child_task_ids) {
          const task = (await get(`/api/v1/tasks/${child}`)).json();
          expect(task.run.status).toBe('canceled');
        }
        // Nothing of the swarm is left to run: no settle check waits either.
        const runs = (await get(`/api/v1/tasks/${id}/runs`)).json().data as { status: string }[];
        expect(runs.every((r) => ['completed', 'canceled'].includes(r.status))).toBe(true);
        const log = await timelineOf(id);
        expect(log[0]).toMatchObject({ kind: 'canceled', actor: expect.stringMatching(/^key_/) });
        const stopped = (log[0]?.payload.canceled_child_tasks ?? []) as string[];
        expect([...stopped].sort()).toEqual([...running.child_task_ids].sort());

        // Again: nothing changes, no second event.
        expect((await post(cancelUrl(id))).statusCode).toBe(200);
        expect((await timelineOf(id)).filter((e) => e.kind === 'canceled')).toHaveLength(1);
      } finally {
        await coordinator.stop();
        worker = new Worker(t.services.engine, { concurrency: 1 });
        await worker.start();
      }
    },
  );

  it('refuses to cancel a swarm that already completed', async () => {
    const res = await post(`/api/v1/swarms/${reviewSwarmId}/cancel`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('conflict');
    // As a task it has no active run: canceling it changes nothing.
    const asTask = await post(`/api/v1/tasks/${reviewSwarmId}/cancel`);
    expect(asTask.statusCode, asTask.body).toBe(200);
    expect(asTask.json().run.status).toBe('completed');
    expect((await readSwarm(reviewSwarmId)).status).toBe('completed');
  });

  it('keeps each project’s swarms to itself; a task that is not a swarm is not one', async () => {
    expect((await get(`/api/v1/swarms/${reviewSwarmId}`, otherHeaders)).statusCode).toBe(404);
    expect((await get('/api/v1/swarms', otherHeaders)).json().data).toEqual([]);
    const cancel = await t.app.inject({
      method: 'POST',
      url: `/api/v1/swarms/${reviewSwarmId}/cancel`,
      headers: otherHeaders,
    });
    expect(cancel.statusCode).toBe(404);
    const notSwarm = await get(`/api/v1/swarms/${mergedReviewId}`);
    expect(notSwarm.statusCode).toBe(404);
    expect(notSwarm.json().error.code).toBe('not_found');
  });

  it('lists the swarms newest first, a page at a time', async () => {
    const first = (await get('/api/v1/swarms?limit=3')).json();
    expect(first.data).toHaveLength(3);
    const second = (await get(`/api/v1/swarms?limit=3&cursor=${first.next_cursor}`)).json();
    expect(second.data).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    const all = [...first.data, ...second.data] as (Swarm & { created_at: string })[];
    expect(all.map((s) => s.goal)).toEqual([
      'review_open_pull_requests', // canceled through its task
      'review_open_pull_requests', // canceled through swarms_cancel
      'study_and_rescore',
      'rereview_merged',
      'review_open_pull_requests',
    ]);
    expect(all.at(-1)?.id).toBe(reviewSwarmId);
  });

  it('answers a bad request with 400 in the envelope and creates nothing', async () => {
    const before = (await get('/api/v1/swarms')).json().data.length;
    const bad: [unknown, string][] = [
      [{ goal: 'review_everything' }, 'goal'],
      [{ goal: 'rereview_merged' }, 'params'],
      [
        {
          goal: 'rereview_merged',
          params: { count: 0, reviewer: { reviewer_id: 'general', model: 'openai/x' } },
        },
        'params',
      ],
      [{ goal: 'rereview_merged', params: { count: 1, reviewer: { reviewer_id: 'general' } } }, 'params'],
      [{ goal: 'study_and_rescore', params: { fast: true } }, 'params'],
      [{ goal: 'review_open_pull_requests', extra: 1 }, ''],
      [{ goal: 'review_open_pull_requests', params: { delivery: 'email' } }, 'params'],
    ];
    for (const [payload, field] of bad) {
      const res = await post('/api/v1/swarms', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed', request_id: expect.any(String) });
      expect(res.json().error.message).toContain(field);
    }
    const unknown = await post('/api/v1/swarms', {
      goal: 'rereview_merged',
      params: { count: 1, reviewer: { reviewer_id: 'nobody', model: 'openai/gpt-4o-mini' } },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details).toMatchObject({ unknown_reviewers: ['nobody'] });
    const provider = await post('/api/v1/swarms', {
      goal: 'rereview_merged',
      params: { count: 1, reviewer: { reviewer_id: 'general', model: 'nowhere/model' } },
    });
    expect(provider.statusCode).toBe(400);
    expect((await get('/api/v1/swarms')).json().data).toHaveLength(before);
  });

  it('replays a create under the same Idempotency-Key and refuses a changed body under it', async () => {
    const key = { 'idempotency-key': `swarm-${kind}` };
    const body = { goal: 'study_and_rescore' };
    const first = await post('/api/v1/swarms', body, key);
    expect(first.statusCode).toBe(202);
    const again = await post('/api/v1/swarms', body, key);
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().id).toBe(first.json().id);
    const changed = await post('/api/v1/swarms', { goal: 'review_open_pull_requests' }, key);
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('idempotency_conflict');
    await swarmEnded(first.json().id);
  });
});
