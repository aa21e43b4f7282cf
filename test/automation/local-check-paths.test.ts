/**
 * On the local host (the same automation as GitHub's, its checks recorded in the git dir), every
 * pushed head of a watched pull request gets a `Service / Review` check that concludes: review
 * off by the project's setting or by `@service review off` (skipped, saying how to turn it back
 * on), a draft (the spec's title), and a trigger at an already-reviewed head leaves
 * `review_status` as its check says instead of `trigger`.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommentEvent, onPullRequestComment } from '../../src/automation/conversation';
import {
  type AutomationDeps,
  onPullRequestEvent,
  type PullRequestEvent,
} from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import {
  SKIPPED_FILTERED_TITLE,
  SKIPPED_PROJECT_OFF_TITLE,
  SKIPPED_PULL_REQUEST_OFF_TITLE,
} from '../../src/core/checks';
import type { Worker } from '../../src/engine/worker';
import { pullRequests } from '../../src/storage/schema';
import { settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { startLocalAutomation } from '../helpers/local-automation';

type CheckRecord = { id: string; head_sha: string; status: string; conclusion: string | null; title: string };

describe('local host: the check of every pushed head concludes', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  let headers: Record<string, string>;

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();
  const event = (number: number, branch: string, over: Partial<PullRequestEvent> = {}): PullRequestEvent => ({
    action: 'opened',
    installationId: 1,
    repo: 'acme/api',
    number,
    title: `Change ${number}`,
    draft: false,
    merged: false,
    headRef: branch,
    headSha: sha(branch),
    baseRef: 'main',
    author: 'octocat',
    ...over,
  });
  const comment = (number: number, body: string): CommentEvent => ({
    installationId: 1,
    repo: 'acme/api',
    number,
    body,
    commentId: `c-${number}-${body}`,
    senderType: 'User',
    senderLogin: 'octocat',
    inReplyTo: null,
    authorAssociation: 'OWNER',
  });
  /** The latest record of the check of `head`. */
  const checkOf = async (head: string) =>
    (await host.localRecords<CheckRecord>('acme/api', 'checks')).filter((c) => c.head_sha === head).at(-1);
  const reviewStatus = async (number: number) =>
    (await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, number)))[0]
      ?.reviewStatus;
  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
  function branch(name: string, files: Record<string, string>) {
    gitIn(repo, ['checkout', '-q', '-b', name, 'main']);
    commitFiles(repo, files, name);
    gitIn(repo, ['checkout', '-q', 'main']);
  }

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    branch('feature', { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    branch('off-change', { 'src/off.js': 'export const off = 1;\n' });
    branch('draft-change', { 'src/draft.js': 'export const draft = 1;\n' });
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/head', 'refs/heads/feature']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/2/head', 'refs/heads/off-change']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/3/head', 'refs/heads/draft-change']);
    ({ t, worker, headers, host, deps } = await startLocalAutomation(reposDir));
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('a redelivered or reopened trigger at a reviewed head leaves review_status as the check says', async () => {
    expect((await onPullRequestEvent(deps, event(1, 'feature'))).outcome).toBe('review_started');
    await settle();
    expect(await checkOf(sha('feature'))).toMatchObject({
      status: 'completed',
      conclusion: 'action_required',
    });
    for (const action of ['opened', 'reopened', 'ready_for_review']) {
      expect((await onPullRequestEvent(deps, event(1, 'feature', { action }))).outcome).toBe('deduplicated');
      expect(await reviewStatus(1), action).toBe('reviewed');
    }
  });

  it('svc.review.enabled=false: the head is skipped, the title naming the setting', async () => {
    const set = (enabled: boolean) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/projects/${headers['project-id']}/settings`,
        headers,
        payload: { 'svc.review.enabled': enabled },
      });
    expect((await set(false)).statusCode).toBe(200);
    try {
      expect((await onPullRequestEvent(deps, event(2, 'off-change'))).outcome).toBe('skipped');
      expect(await checkOf(sha('off-change'))).toMatchObject({
        status: 'completed',
        conclusion: 'skipped',
        title: SKIPPED_PROJECT_OFF_TITLE,
      });
      expect(await reviewStatus(2)).toBe('skipped');
    } finally {
      await set(true);
    }
  });

  it('@service review off: the next push is skipped with how to turn it on; review on reviews it', async () => {
    expect((await onPullRequestComment(deps, comment(1, '@service review off vendored'))).outcome).toBe(
      'replied',
    );
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/more.js': 'export const more = 2;\n' }, 'more');
    gitIn(repo, ['checkout', '-q', 'main']);
    const off = await onPullRequestEvent(deps, event(1, 'feature', { action: 'synchronize' }));
    expect(off).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/vendored/) });
    expect(await checkOf(sha('feature'))).toMatchObject({
      status: 'completed',
      conclusion: 'skipped',
      title: SKIPPED_PULL_REQUEST_OFF_TITLE,
    });
    expect(await reviewStatus(1)).toBe('skipped');
    expect((await onPullRequestComment(deps, comment(1, '@service review on'))).outcome).toBe(
      'review_started',
    );
    await settle();
    expect(await checkOf(sha('feature'))).toMatchObject({
      status: 'completed',
      conclusion: 'action_required',
    });
    expect(await reviewStatus(1)).toBe('reviewed');
  });

  it('a draft is skipped with the spec title', async () => {
    expect((await onPullRequestEvent(deps, event(3, 'draft-change', { draft: true }))).outcome).toBe(
      'skipped',
    );
    expect(await checkOf(sha('draft-change'))).toMatchObject({
      status: 'completed',
      conclusion: 'skipped',
      title: SKIPPED_FILTERED_TITLE,
    });
    expect(await reviewStatus(3)).toBe('skipped');
  });

  it('GET /reviews lists the API-created reviews; automatic and swarm reviews only when asked', async () => {
    const list = async (query = '') => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/reviews${query}`, headers });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { id: string; origin: string; pr: number | null }[];
    };
    expect(await list()).toEqual([]);
    const automatic = await list('?origin=automatic');
    expect(automatic.length).toBeGreaterThanOrEqual(2);
    expect(automatic.every((r) => r.origin === 'automatic')).toBe(true);

    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 1, reviewers: ['security'] },
    });
    expect(created.statusCode, created.body).toBe(202);
    const swarm = await t.app.inject({
      method: 'POST',
      url: '/api/v1/swarms',
      headers,
      payload: { goal: 'review_open_pull_requests', params: { reviewers: ['security'] } },
    });
    expect(swarm.statusCode, swarm.body).toBe(202);
    await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 1200 });

    expect((await list()).map((r) => [r.id, r.origin])).toEqual([[created.json().id, 'api']]);
    const children = await list('?origin=swarm');
    expect(children.length).toBeGreaterThanOrEqual(1);
    expect(children.every((r) => r.origin === 'swarm')).toBe(true);
    const all = await list('?origin=all&limit=200');
    expect(all).toHaveLength(1 + automatic.length + children.length);
    const refused = await t.app.inject({ method: 'GET', url: '/api/v1/reviews?origin=robots', headers });
    expect(refused.statusCode).toBe(400);
  });
});
