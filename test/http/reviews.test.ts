/**
 * Reviews end to end over the API, on a real git repository with pull request refs: create,
 * run on a worker, read findings, re-run without duplicates, push a fix, edit the
 * configuration under If-Match, and every kind of bad input.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { answers, type OpenAIDouble, startOpenAIDouble } from '../helpers/openai-double';

const UNSAFE = [
  "import { exec } from 'node:child_process';",
  '',
  'export function run(req) {',
  '  const code = req.query.code;',
  '  return eval(code);',
  '}',
  '',
].join('\n');

describe('reviews', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let projectId: string;
  let double: OpenAIDouble;
  let headers: Record<string, string>;

  /** Points refs/pull/N/head at the branch's tip, as a push to the pull request would. */
  const openPullRequest = (n: number, branch: string) => {
    gitIn(repo, ['update-ref', `refs/pull/${n}/head`, branch]);
  };

  async function waitForReview(id: string) {
    for (let i = 0; i < 300; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${id}`, headers });
      const body = res.json();
      if (['completed', 'failed', 'canceled'].includes(body.run?.status)) return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`review ${id} did not finish`);
  }

  async function create(payload: Record<string, unknown>) {
    return t.app.inject({ method: 'POST', url: '/api/v1/reviews', headers, payload });
  }

  beforeAll(async () => {
    double = await startOpenAIDouble({ apiKey: null });
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/shop', {
      'src/app.js': 'export const ok = 1;\n',
      'README.md': '# shop\n',
    });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, { 'src/run.js': UNSAFE }, 'add run');
    gitIn(repo, ['checkout', '-q', 'main']);
    openPullRequest(1, 'feature');
    gitIn(repo, ['checkout', '-q', '-b', 'docs']);
    commitFiles(repo, { 'README.md': '# shop\n\nHow to run it.\n' }, 'docs');
    gitIn(repo, ['checkout', '-q', 'main']);
    openPullRequest(2, 'docs');

    t = await createTestApp({
      reposDir,
      env: { SVC_POLL_MS: '50', SVC_LLM_COMPAT_URL: double.baseURL, SVC_LLM_COMPAT_API_KEY: 'test' },
    });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    projectId = await createProject(t, 'acme/shop');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  let reviewId: string;
  let evalFindingId: string;

  it('creates a review that starts at once and finds the injected eval on its changed line', async () => {
    const res = await create({ pr: 1, reviewers: ['security', 'correctness', 'secrets'] });
    expect(res.statusCode).toBe(202);
    const ack = res.json();
    expect(ack).toEqual({
      id: expect.stringMatching(/^tsk_/),
      run_id: expect.stringMatching(/^run_/),
      status_url: `/api/v1/tasks/${ack.id}/status`,
    });
    reviewId = ack.id;
    const review = await waitForReview(reviewId);
    expect(review.run.status).toBe('completed');
    const evalFinding = review.findings.find((f: { rule: string }) => f.rule === 'security/code-injection');
    expect(evalFinding).toMatchObject({
      severity: 'P0',
      path: 'src/run.js',
      line: 5,
      status: 'open',
      task_id: reviewId,
    });
    expect(evalFinding.body.length).toBeGreaterThan(40);
    evalFindingId = evalFinding.id;
    expect(review.findings_truncated).toBe(false);

    const status = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${reviewId}/status`, headers });
    const skills = status.json().skills as { skill_id: string; source: string; executed_hash: string }[];
    expect(skills.map((s) => s.skill_id).sort()).toEqual(['correctness', 'secrets', 'security']);
    expect(skills.every((s) => s.source === 'catalog' && /^[0-9a-f]{64}$/.test(s.executed_hash))).toBe(true);
  });

  it('re-runs against the current head without duplicating open findings', async () => {
    const rerun = await t.app.inject({ method: 'POST', url: `/api/v1/reviews/${reviewId}/runs`, headers });
    expect(rerun.statusCode).toBe(202);
    expect(rerun.json().id).toBe(reviewId);
    const review = await waitForReview(reviewId);
    expect(review.run.id).toBe(rerun.json().run_id);
    const evals = review.findings.filter((f: { rule: string }) => f.rule === 'security/code-injection');
    expect(evals.map((f: { id: string }) => f.id)).toEqual([evalFindingId]);
  });

  let laterReviewId: string;
  it('keeps what each review reported when a later review of the same pull request reports it too', async () => {
    const later = await create({ pr: 1, reviewers: ['security'] });
    laterReviewId = later.json().id;
    const second = await waitForReview(laterReviewId);
    expect(second.findings.map((f: { id: string }) => f.id)).toContain(evalFindingId);
    // The finding now follows the later review, yet the earlier review still lists what it found.
    const first = (await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, headers })).json();
    expect(first.findings.map((f: { id: string }) => f.id)).toContain(evalFindingId);
  });

  it('marks the finding fixed when a push removes the code', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(
      repo,
      { 'src/run.js': UNSAFE.replace('return eval(code);', 'return JSON.parse(code);') },
      'fix',
    );
    gitIn(repo, ['checkout', '-q', 'main']);
    openPullRequest(1, 'feature');
    await t.app.inject({ method: 'POST', url: `/api/v1/reviews/${reviewId}/runs`, headers });
    const review = await waitForReview(reviewId);
    expect(review.run.status).toBe('completed');
    expect(review.findings.some((f: { rule: string }) => f.rule === 'security/code-injection')).toBe(false);
    const rows = await t.services.db.orm.query.findings.findMany();
    expect(rows.find((r) => r.id === evalFindingId)).toMatchObject({ status: 'fixed' });
  });

  it('answers [] for a clean review, never null once done', async () => {
    const res = await create({ pr: 2 });
    const review = await waitForReview(res.json().id);
    expect(review.run.status).toBe('completed');
    expect(review.findings).toEqual([]);
    expect(review.reviewers).toBeNull();
    // The planner said why it chose what it chose.
    const task = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${res.json().id}`, headers });
    expect(task.json().run.result.review.plan.chosen_by).toBe('planner');
  });

  it('delivers to the code host when asked: the check and a summary on the pull request', async () => {
    const res = await create({ pr: 2, reviewers: ['secrets'], delivery: 'codehost' });
    const review = await waitForReview(res.json().id);
    expect(review.run.status).toBe('completed');
    const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const checks = await host.localRecords<{ status: string; conclusion: string | null }>(
      'acme/shop',
      'checks',
    );
    expect(checks.at(-1)).toMatchObject({ status: 'completed', conclusion: 'success' });
    const comments = await host.localRecords<{ body: string; pull_request: number }>('acme/shop', 'comments');
    expect(comments.some((c) => c.pull_request === 2 && c.body.startsWith('## svc review'))).toBe(true);
  });

  it("names a file it could read only in part on the check's summary", async () => {
    // An interface the TypeScript grammar cannot read (call signatures without semicolons, then a
    // generic one): two of its lines are left out, and the check says so next to its verdict.
    gitIn(repo, ['checkout', '-q', '-b', 'spawn', 'main']);
    commitFiles(
      repo,
      {
        'src/spawn.ts': [
          "import { exec } from 'node:child_process';",
          '',
          'export interface Run {',
          '  (file: string): Promise<string>',
          '  <O extends object>(file: string, options: O): Promise<string>',
          '}',
          '',
          "export const list = () => exec('ls');",
          '',
        ].join('\n'),
      },
      'spawn types',
    );
    gitIn(repo, ['checkout', '-q', 'main']);
    openPullRequest(3, 'spawn');
    const review = await waitForReview(
      (await create({ pr: 3, reviewers: ['security'], delivery: 'codehost' })).json().id,
    );
    expect(review.run.status).toBe('completed');
    expect(review.run.gaps.map((g: { code: string }) => g.code)).toContain('files_not_analyzed');
    const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const checks = await host.localRecords<{ status: string; summary: string }>('acme/shop', 'checks');
    expect(checks.at(-1)?.summary).toContain(
      'Not analyzed (files_not_analyzed): `src/spawn.ts` (25%, not parseable as typescript)',
    );
  });

  it('reviews a commit range', async () => {
    const base = gitIn(repo, ['rev-parse', 'main']).trim();
    const head = gitIn(repo, ['rev-parse', 'feature~1']).trim();
    const res = await create({ base, head, reviewers: ['security'] });
    expect(res.statusCode).toBe(202);
    const review = await waitForReview(res.json().id);
    expect(review.findings.map((f: { rule: string }) => f.rule)).toContain('security/code-injection');
  });

  it('runs a model reviewer through an OpenAI-compatible provider and merges its findings with the rules', async () => {
    double.enqueue(
      answers.findings([
        {
          severity: 'P1',
          path: 'src/run.js',
          line: 5,
          end_line: 5,
          title: 'eval of request input',
          body: 'The query string reaches eval; parse the value instead.',
          category: 'security',
          suggestion: null,
        },
      ]),
    );
    // Project guidance and current learnings reach the model; a forgotten learning does not.
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/projects/${projectId}/settings`,
      headers,
      payload: { 'svc.review.guidance': 'Handlers must validate input with zod.' },
    });
    for (const payload of [
      { learning: 'The run module is called by the admin console only.', why: 'from a wontfix' },
      {
        learning: 'Old fact that expired.',
        why: 'test',
        forgets_at: new Date(Date.now() + 500).toISOString(),
      },
    ]) {
      const learned = await t.app.inject({ method: 'POST', url: '/api/v1/learnings', headers, payload });
      expect(learned.statusCode).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 600));
    const base = gitIn(repo, ['rev-parse', 'main']).trim();
    const head = gitIn(repo, ['rev-parse', 'feature~1']).trim();
    const res = await create({ base, head, reviewers: ['security', 'general@compat/llama3.1'] });
    const review = await waitForReview(res.json().id);
    expect(review.run.status).toBe('completed');
    const merged = review.findings.filter(
      (f: { path: string; line: number }) => f.path === 'src/run.js' && f.line === 5,
    );
    expect(
      merged,
      JSON.stringify(
        merged.map((f: Record<string, unknown>) => [f.rule, f.category, f.line, f.end_line, f.reviewers]),
      ),
    ).toHaveLength(1);
    expect(merged[0].severity).toBe('P0');
    expect(merged[0].reviewers.sort()).toEqual(['general', 'security']);
    const status = await t.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${res.json().id}/status?include=cost`,
      headers,
    });
    expect(status.json().usage_line_items.length).toBeGreaterThan(0);
    expect(double.rejections).toEqual([]);
    const system = JSON.stringify(double.chatRequests().at(-1)?.messages[0]);
    expect(system).toContain('Handlers must validate input with zod.');
    expect(system).toContain('The run module is called by the admin console only.');
    expect(system).not.toContain('Old fact that expired.');
    // The repository knowledge the planner read reaches the model too.
    const knowledge = (await t.app.inject({ method: 'GET', url: '/api/v1/repo-knowledge', headers })).json()
      .data[0];
    expect(knowledge.content.conventions.source_roots).toContain('src/');
    expect(system).toContain('## Repository knowledge');
    expect(system).toContain('Sources live in: src/');
  });

  it('continues without learnings when they cannot be loaded, and says so as a gap', async () => {
    await t.services.db.rows(sql`ALTER TABLE learnings RENAME TO learnings_unreadable`);
    try {
      const res = await create({ pr: 2, reviewers: ['security'] });
      const review = await waitForReview(res.json().id);
      expect(review.run.status).toBe('completed');
      expect(review.run.gaps.map((g: { code: string }) => g.code)).toContain('learnings_unavailable');
    } finally {
      await t.services.db.rows(sql`ALTER TABLE learnings_unreadable RENAME TO learnings`);
    }
  });

  it('fails a model reviewer by name when its provider is not configured', async () => {
    const res = await create({ pr: 1, reviewers: ['general@openai/gpt-4o-mini'] });
    const review = await waitForReview(res.json().id);
    expect(review.run.status).toBe('failed');
    expect(review.run.error.code).toBe('provider_auth_failed');
    expect(review.findings).toBeNull();
  });

  it.each([
    [{ pr: 1, reviewers: ['nope'] }, 400, /unknown reviewer/],
    [{ pr: 1, reviewers: ['general@martian/x'] }, 400, /unknown model provider/],
    [{ pr: 1, reviewers: ['security@openai/gpt-4o'] }, 400, /builtin\/rules/],
    [{ reviewers: ['security'] }, 400, /pr/],
    [{ pr: 1, delivery: 'email' }, 400, /delivery/],
  ])('rejects %j with %i', async (payload, status, message) => {
    const res = await create(payload);
    expect(res.statusCode).toBe(status);
    expect(JSON.stringify(res.json().error)).toMatch(message);
  });

  it('refuses a pull request the local host does not have, naming where it looked, and plans no run', async () => {
    const before = await t.services.db.orm.select().from(tasks);
    const res = await create({ pr: 99 });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'not_found' });
    expect(res.json().error.message).toMatch(
      /pull request 99 not found in acme\/shop: no refs\/pull\/99\/head in .*acme\/shop.* \(SVC_REPOS_DIR is /,
    );
    expect(await t.services.db.orm.select().from(tasks)).toHaveLength(before.length);
  });

  it.each([[{ base: 'deadbeef', head: 'cafebabe' }, /deadbeef/]])(
    'acknowledges %j, then fails its run by name with the code host’s message',
    async (payload, message) => {
      // The acknowledgement validates the request, not the target: resolving it is the run's first step.
      const res = await create(payload);
      expect(res.statusCode).toBe(202);
      const review = await waitForReview(res.json().id);
      expect(review.run.status).toBe('failed');
      expect(review.run.error.code).toBe('tool_failed');
      expect(review.run.error.message).toMatch(message);
      expect(review.findings).toBeNull();
      const transcript = await t.app.inject({
        method: 'GET',
        url: `/api/v1/tasks/${review.id}/messages`,
        headers,
      });
      expect(JSON.stringify(transcript.json())).toContain('tool_failed');
    },
  );

  it('edits the configuration only under If-Match; a run executes the revision it was created with', async () => {
    const res = await create({ pr: 2, reviewers: ['secrets'] });
    const id = res.json().id;
    const first = await waitForReview(id);
    expect(first.revision).toBe(1);
    const url = `/api/v1/reviews/${id}`;
    const missing = await t.app.inject({
      method: 'PATCH',
      url,
      headers,
      payload: { reviewers: ['security'] },
    });
    expect(missing.statusCode).toBe(428);
    const stale = await t.app.inject({
      method: 'PATCH',
      url,
      headers: { ...headers, 'if-match': '"7"' },
      payload: { reviewers: ['security'] },
    });
    expect(stale.statusCode).toBe(412);
    const ok = await t.app.inject({
      method: 'PATCH',
      url,
      headers: { ...headers, 'if-match': '"1"' },
      payload: { reviewers: ['security'] },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect(ok.json().reviewers).toEqual([
      { key: 'security', reviewer_id: 'security', model: null, skill_revision_id: null },
    ]);
    // The finished run keeps its revision; the next one executes the new configuration.
    const runs = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/runs`, headers });
    expect(runs.json().data).toHaveLength(1);
    const add = await t.app.inject({
      method: 'POST',
      url: `${url}/reviewers`,
      headers: { ...headers, 'if-match': '"2"' },
      payload: { reviewer_id: 'general', model: 'compat/llama3.1' },
    });
    expect(add.statusCode).toBe(201);
    expect(add.json().reviewers.map((r: { key: string }) => r.key)).toEqual(['security', 'general']);
    const update = await t.app.inject({
      method: 'PATCH',
      url: `${url}/reviewers/general`,
      headers: { ...headers, 'if-match': '"3"' },
      payload: { model: 'compat/qwen2.5' },
    });
    expect(update.json().reviewers[1].model).toBe('compat/qwen2.5');
    const remove = await t.app.inject({
      method: 'DELETE',
      url: `${url}/reviewers/general`,
      headers: { ...headers, 'if-match': '"4"' },
    });
    expect(remove.json()).toMatchObject({ revision: 5, reviewers: [{ key: 'security' }] });
    const gone = await t.app.inject({
      method: 'DELETE',
      url: `${url}/reviewers/general`,
      headers: { ...headers, 'if-match': '"5"' },
    });
    expect(gone.statusCode).toBe(404);
    const rerun = await t.app.inject({ method: 'POST', url: `${url}/runs`, headers });
    const second = await waitForReview(id);
    expect(second.run.id).toBe(rerun.json().run_id);
    const task = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/status`, headers });
    expect(task.json().skills.map((s: { skill_id: string }) => s.skill_id)).toEqual(['security']);
  });

  it('stamps the pull request row with its review state, and serves the ledger collections', async () => {
    const prs = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=1', headers });
    expect(prs.statusCode).toBe(200);
    const [pr] = prs.json().data;
    const review = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, headers });
    expect(pr).toMatchObject({
      object: 'pull_request',
      number: 1,
      // The latest review of pull request 1 failed (its model provider is not configured).
      review_status: 'errored',
      last_reviewed_at: expect.any(String),
      head_ref: expect.any(String),
    });
    // last_review_run_id names the last review that completed.
    expect(pr.last_review_run_id).toMatch(/^run_/);
    const clean = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=2', headers });
    expect(clean.json().data[0].review_status).toBe('reviewed');
    const one = await t.app.inject({ method: 'GET', url: `/api/v1/pull-requests/${pr.id}`, headers });
    expect(one.json().id).toBe(pr.id);

    const fixed = await t.app.inject({
      method: 'GET',
      url: `/api/v1/findings?status=fixed&pull_request_id=${pr.id}`,
      headers,
    });
    expect(fixed.json().data.map((f: { id: string }) => f.id)).toContain(evalFindingId);
    // `all` means what the CLI's --status all means: every status, as when the filter is omitted.
    const listed = async (query: string) =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/v1/findings?pull_request_id=${pr.id}${query}`,
          headers,
        })
      )
        .json()
        .data.map((f: { id: string; status: string }) => `${f.id} ${f.status}`);
    const every = await listed('&status=all');
    expect(every).toEqual(await listed(''));
    const byStatus = [
      ...(await listed('&status=open')),
      ...(await listed('&status=fixed')),
      ...(await listed('&status=dismissed')),
    ];
    expect([...every].sort()).toEqual(byStatus.sort());
    expect(every).toContain(`${evalFindingId} fixed`);
    const finding = await t.app.inject({ method: 'GET', url: `/api/v1/findings/${evalFindingId}`, headers });
    // task_id names the review that reported it last (the later one), not the one that saw it fixed.
    expect(finding.json()).toMatchObject({ status: 'fixed', severity: 'P0', task_id: laterReviewId });

    const results = await t.app.inject({
      method: 'GET',
      url: `/api/v1/review-results?task_id=${reviewId}`,
      headers,
    });
    expect(results.json().data.length).toBe(3);
    const [latest] = results.json().data;
    expect(latest).toMatchObject({ task_id: reviewId, run_id: review.json().run.id, pull_request_id: pr.id });
    expect(latest.lineup.map((l: { reviewer_id: string }) => l.reviewer_id).sort()).toEqual([
      'correctness',
      'secrets',
      'security',
    ]);
    const result = await t.app.inject({ method: 'GET', url: `/api/v1/review-results/${latest.id}`, headers });
    expect(result.json().counts.fixed).toBeGreaterThanOrEqual(0);

    for (const url of [
      `/api/v1/findings/fnd_nope`,
      `/api/v1/pull-requests/pr_nope`,
      `/api/v1/review-results/rvr_nope`,
    ]) {
      expect((await t.app.inject({ method: 'GET', url, headers })).statusCode).toBe(404);
    }
  });

  it('inlines at most one page of findings and says when there are more', async () => {
    gitIn(repo, ['checkout', '-q', '-b', 'many', 'main']);
    // A `debugger` in each of 120 files: one file's 120 would be one finding (one idiom, every place listed).
    const files = Object.fromEntries(
      Array.from({ length: 120 }, (_, i) => [
        `src/many/f${i}.js`,
        `export function f${i}() {\n  debugger;\n}\n`,
      ]),
    );
    commitFiles(repo, files, 'many');
    gitIn(repo, ['checkout', '-q', 'main']);
    openPullRequest(5, 'many');
    const res = await create({ pr: 5, reviewers: ['correctness'] });
    const review = await waitForReview(res.json().id);
    expect(review.run.status).toBe('completed');
    expect(review.findings).toHaveLength(100);
    expect(review.findings_truncated).toBe(true);
    const all = await t.app.inject({
      method: 'GET',
      url: `/api/v1/findings?task_id=${res.json().id}&limit=200`,
      headers,
    });
    expect(all.json().data).toHaveLength(120);
  });

  it('lists the API-created reviews, newest first', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/reviews?limit=2', headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toHaveLength(2);
    expect(res.json().next_cursor).not.toBeNull();
    const next = await t.app.inject({
      method: 'GET',
      url: `/api/v1/reviews?limit=50&cursor=${res.json().next_cursor}`,
      headers,
    });
    const ids = [...res.json().data, ...next.json().data].map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(reviewId);
  });
});
