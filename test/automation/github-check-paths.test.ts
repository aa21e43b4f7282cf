/**
 * On GitHub, every pushed head of a watched pull request gets a `Service / Review` check that
 * concludes, whatever path the push takes: review off (the project's setting, `@service review
 * off`), a draft, a brake, and GitHub's "Re-run" on the check or its suite (a new review). A
 * trigger that changes nothing (reopened at a reviewed head) leaves `review_status` in step
 * with the check. Real example payloads from @octokit/webhooks-examples, signed, against the
 * GitHub double.
 */
import { generateKeyPairSync } from 'node:crypto';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadlineTimer } from '../../src/automation/deadline-timer';
import {
  SKIPPED_FILTERED_TITLE,
  SKIPPED_PROJECT_OFF_TITLE,
  SKIPPED_PULL_REQUEST_OFF_TITLE,
  STILL_REVIEWING_TITLE,
} from '../../src/core/checks';
import { Worker } from '../../src/engine/worker';
import { checkRuns, pullRequests, tasks, webhookDeliveries } from '../../src/storage/schema';
import { bearer, createProject, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { createGitHubTestApp } from '../helpers/github-app';
import { GitHubDouble } from '../helpers/github-double';
import { deliver, WEBHOOK_SECRET, webhookExamples } from '../helpers/webhooks';

const APP_ID = 31338;
const INSTALLATION = 778;
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

// biome-ignore lint/suspicious/noExplicitAny: example payloads are loosely shaped JSON
type Obj = Record<string, any>;

function example(event: string, action: string): Obj {
  const found = webhookExamples().find((e) => e.event === event && e.action === action);
  if (!found) throw new Error(`no example for ${event}.${action}`);
  return structuredClone(found.payload);
}

describe('GitHub: the check of every pushed head concludes', () => {
  let double: GitHubDouble;
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let headers: Record<string, string>;

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();
  const onRepo = (payload: Obj): Obj => ({
    ...payload,
    installation: { ...(payload.installation ?? {}), id: INSTALLATION },
    repository: {
      ...payload.repository,
      name: 'api',
      full_name: 'acme/api',
      owner: { ...payload.repository.owner, login: 'acme' },
    },
  });

  function pullRequestPayload(action: string, number: number, branch: string, draft = false): Obj {
    const payload = onRepo(example('pull_request', action));
    payload.number = number;
    payload.pull_request = {
      ...payload.pull_request,
      number,
      draft,
      state: 'open',
      merged: false,
      merged_at: null,
      title: `Change ${number}`,
      head: { ...payload.pull_request.head, ref: branch, sha: sha(branch) },
      base: { ...payload.pull_request.base, ref: 'main', sha: sha('main') },
    };
    return payload;
  }

  function commentPayload(number: number, body: string): Obj {
    const payload = onRepo(example('issue_comment', 'created'));
    payload.issue = {
      ...payload.issue,
      number,
      pull_request: { url: `https://api.github.com/repos/acme/api/pulls/${number}` },
    };
    payload.comment = { ...payload.comment, body, author_association: 'OWNER' };
    payload.sender = { ...payload.sender, type: 'User' };
    return payload;
  }

  async function send(event: string, payload: Obj) {
    const res = await deliver(t.app, { event, payload });
    expect(res.statusCode, res.body).toBe(202);
    await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
    const [delivery] = await t.services.db.orm
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, res.json().delivery_id));
    return delivery;
  }

  const checkOf = (head: string) =>
    double.checkRuns.find(
      (c) => c.repo === 'acme/api' && c.head_sha === head && c.name === 'Service / Review',
    );
  const reviewStatus = async (number: number) =>
    (await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, number)))[0]
      ?.reviewStatus;
  const reviewCount = async () =>
    (await t.services.db.orm.select().from(tasks).where(eq(tasks.kind, 'review'))).length;
  const settings = async (values: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/projects/${headers['project-id']}/settings`,
      headers,
      payload: values,
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  function branch(name: string, files: Record<string, string>) {
    gitIn(repo, ['checkout', '-q', '-b', name, 'main']);
    commitFiles(repo, files, name);
    gitIn(repo, ['checkout', '-q', 'main']);
  }

  beforeAll(async () => {
    double = await GitHubDouble.start({ appId: APP_ID, publicKey, installations: [INSTALLATION] });
    repo = makeRepo(makeReposDir(), 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    branch('feature', { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    branch('draft-change', { 'src/draft.js': 'export const draft = 1;\n' });
    branch('off-change', { 'src/off.js': 'export const off = 1;\n' });
    branch('paused-change', { 'src/paused.js': 'export const paused = 1;\n' });
    await double.seedFromGit('acme', 'api', repo, { installationId: INSTALLATION });
    double.addPullRequest('acme/api', { number: 1, title: 'Change 1', base: 'main', head: 'feature' });
    double.addPullRequest('acme/api', { number: 2, title: 'Change 2', base: 'main', head: 'draft-change' });
    double.addPullRequest('acme/api', { number: 3, title: 'Change 3', base: 'main', head: 'off-change' });
    double.addPullRequest('acme/api', { number: 4, title: 'Change 4', base: 'main', head: 'paused-change' });
    t = await createGitHubTestApp(double, { appId: APP_ID, privateKey, webhookSecret: WEBHOOK_SECRET });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    const installation = example('installation', 'created');
    installation.installation = {
      ...installation.installation,
      id: INSTALLATION,
      account: { ...installation.installation.account, login: 'acme' },
    };
    installation.repositories = [{ id: 1, name: 'api', full_name: 'acme/api', private: false }];
    expect((await send('installation', installation))?.status).toBe('processed');
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api', INSTALLATION) };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  it('reviews an opened pull request; reopened at the same head changes nothing and leaves the status reviewed', async () => {
    expect((await send('pull_request', pullRequestPayload('opened', 1, 'feature')))?.status).toBe(
      'processed',
    );
    expect(checkOf(sha('feature'))).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(await reviewStatus(1)).toBe('reviewed');
    const reviews = await reviewCount();
    for (const action of ['reopened', 'ready_for_review', 'opened']) {
      const again = await send('pull_request', pullRequestPayload(action, 1, 'feature'));
      expect(again?.status, action).toBe('processed');
      expect(await reviewStatus(1), action).toBe('reviewed');
    }
    expect(await reviewCount()).toBe(reviews);
  });

  it('"Re-run" on the check (check_run.rerequested, no pull request named) is a new review of that head', async () => {
    const check = checkOf(sha('feature'));
    const before = check?.history.length ?? 0;
    const reviews = await reviewCount();
    const payload = onRepo(example('check_run', 'rerequested'));
    // GitHub's example names another app's check; this one is svc's, on pull request 1's head.
    payload.check_run = {
      ...payload.check_run,
      id: check?.id,
      name: 'Service / Review',
      head_sha: sha('feature'),
    };
    const delivery = await send('check_run', payload);
    expect(delivery?.status, delivery?.reason ?? '').toBe('processed');
    expect(await reviewCount()).toBe(reviews + 1);
    // Queued again, then the verdict (a 'still reviewing' may come between if the deadline passes).
    const rerun = check?.history.slice(before) ?? [];
    expect(rerun[0]?.status).toBe('queued');
    expect(rerun.at(-1)).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(check).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(await reviewStatus(1)).toBe('reviewed');

    // Another app's check run asked again is not svc's to answer.
    const other = await send('check_run', { ...payload, check_run: { ...payload.check_run, name: 'lint' } });
    expect(other).toMatchObject({ status: 'ignored', reason: expect.stringMatching(/not svc's/) });
  });

  it('"Re-run all checks" (check_suite.rerequested) is a new review of each pull request it names', async () => {
    const reviews = await reviewCount();
    const payload = onRepo(example('check_suite', 'rerequested'));
    payload.check_suite = {
      ...payload.check_suite,
      head_sha: sha('feature'),
      pull_requests: [{ ...payload.check_suite.pull_requests[0], number: 1 }],
    };
    expect((await send('check_suite', payload))?.status).toBe('processed');
    expect(await reviewCount()).toBe(reviews + 1);
    expect(checkOf(sha('feature'))).toMatchObject({ status: 'completed', conclusion: 'action_required' });
  });

  it('a draft gets its check skipped with the spec title', async () => {
    expect((await send('pull_request', pullRequestPayload('opened', 2, 'draft-change', true)))?.status).toBe(
      'processed',
    );
    expect(checkOf(sha('draft-change'))).toMatchObject({
      status: 'completed',
      conclusion: 'skipped',
      output: expect.objectContaining({ title: SKIPPED_FILTERED_TITLE }),
    });
    expect(await reviewStatus(2)).toBe('skipped');
  });

  it('svc.review.enabled=false: the head gets a skipped check saying how to turn review back on', async () => {
    await settings({ 'svc.review.enabled': false });
    try {
      const delivery = await send('pull_request', pullRequestPayload('opened', 3, 'off-change'));
      expect(delivery?.status).toBe('processed');
      expect(checkOf(sha('off-change'))).toMatchObject({
        status: 'completed',
        conclusion: 'skipped',
        output: expect.objectContaining({ title: SKIPPED_PROJECT_OFF_TITLE }),
      });
      expect(checkOf(sha('off-change'))?.output?.title).toMatch(/svc\.review\.enabled/);
      expect(await reviewStatus(3)).toBe('skipped');
    } finally {
      await settings({ 'svc.review.enabled': true });
    }
  });

  it('@service review off: a pushed head gets a skipped check; @service review on reviews it', async () => {
    expect((await send('issue_comment', commentPayload(1, '@service review off generated')))?.status).toBe(
      'processed',
    );
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/more.js': 'export const more = 2;\n' }, 'more');
    gitIn(repo, ['checkout', '-q', 'main']);
    expect((await send('pull_request', pullRequestPayload('synchronize', 1, 'feature')))?.status).toBe(
      'processed',
    );
    expect(checkOf(sha('feature'))).toMatchObject({
      status: 'completed',
      conclusion: 'skipped',
      output: expect.objectContaining({ title: SKIPPED_PULL_REQUEST_OFF_TITLE }),
    });
    expect(await reviewStatus(1)).toBe('skipped');
    expect((await send('issue_comment', commentPayload(1, '@service review on')))?.status).toBe('processed');
    expect(checkOf(sha('feature'))).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(await reviewStatus(1)).toBe('reviewed');
  });

  it('the deadline timer concludes an overdue check on GitHub, and retries when GitHub refuses', async () => {
    const head = sha('feature');
    const check = checkOf(head);
    // The check of pull request 1's head as if its review were still queued and its deadline past.
    await t.services.db.orm
      .update(checkRuns)
      .set({
        status: 'queued',
        conclusion: null,
        title: 'Queued for review',
        deadlineAt: new Date(Date.now() - 1_000),
      })
      .where(eq(checkRuns.headSha, head));
    const timer = new DeadlineTimer(t.services, { logger: pino({ level: 'silent' }) });
    let refusing = true;
    double.failNext(100, {
      status: 502,
      message: 'Bad gateway',
      match: (r: { method: string; path: string }) =>
        refusing && r.method === 'PATCH' && /check-runs/.test(r.path),
    } as never);
    expect(await timer.tick()).toBe(0);
    expect(check?.output?.title).not.toBe(STILL_REVIEWING_TITLE);
    refusing = false;
    expect(await timer.tick()).toBe(1);
    expect(check).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(check?.output?.title).toBe(STILL_REVIEWING_TITLE);
    expect(await timer.tick()).toBe(0);
  });

  it('a paused project: the check completes skipped, naming the brake', async () => {
    await settings({ 'svc.brakes.paused': true });
    try {
      expect((await send('pull_request', pullRequestPayload('opened', 4, 'paused-change')))?.status).toBe(
        'processed',
      );
      const check = checkOf(sha('paused-change'));
      expect(check).toMatchObject({ status: 'completed', conclusion: 'skipped' });
      expect(check?.output?.title).toMatch(/paused \(svc\.brakes\.paused\)/);
      expect(await reviewStatus(4)).toBe('errored');
    } finally {
      await settings({ 'svc.brakes.paused': false });
    }
    expect(double.rejections).toEqual([]);
  });
});
