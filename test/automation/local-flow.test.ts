/**
 * The pull request automation on the local git host (its checks and comments are recorded in
 * the repository's git dir): a push triggers a review, the check moves through its states,
 * findings are posted inline once, the summary is edited in place, `wontfix` recomputes the
 * check, a fixing push marks the finding fixed, and commands answer in the pull request.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CommentEvent,
  onFindingThreadReply,
  onPullRequestComment,
} from '../../src/automation/conversation';
import { onPush } from '../../src/automation/plans';
import {
  type AutomationDeps,
  onPullRequestEvent,
  type PullRequestEvent,
} from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { SKIPPED_FILTERED_TITLE } from '../../src/core/checks';
import type { Worker } from '../../src/engine/worker';
import { checkRuns, findings, plans, projects, tasks } from '../../src/storage/schema';
import { settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { startLocalAutomation } from '../helpers/local-automation';
import { pullRequestEvent } from '../helpers/pull-request-event';

type CheckRecord = {
  id: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  title: string;
  summary: string;
  text: string | null;
};
type CommentRecord = {
  id: string;
  body: string;
  path: string | null;
  line: number | null;
  in_reply_to: string | null;
  review?: boolean;
};

describe('pull request automation on the local host', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  let headers: Record<string, string>;

  const head = () => gitIn(repo, ['rev-parse', 'feature']).trim();
  const event = (over: Partial<PullRequestEvent> = {}): PullRequestEvent =>
    pullRequestEvent({ headSha: head(), ...over });
  const comment = (body: string, over: Partial<CommentEvent> = {}): CommentEvent => ({
    installationId: 1,
    repo: 'acme/api',
    number: 1,
    body,
    commentId: `c${Math.random()}`,
    senderType: 'User',
    senderLogin: 'octocat',
    inReplyTo: null,
    authorAssociation: 'OWNER',
    ...over,
  });
  const checks = () => host.localRecords<CheckRecord>('acme/api', 'checks');
  const comments = () => host.localRecords<CommentRecord>('acme/api', 'comments');
  /** The latest state of each check, by id. */
  const latestChecks = async () => [...new Map((await checks()).map((c) => [c.id, c])).values()];

  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'] });

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, {
      'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
      'src/log.js': 'export function log(x) {\n  debugger;\n  return x;\n}\n',
    });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    ({ t, worker, headers, host, deps } = await startLocalAutomation(reposDir));
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  let evalCommentId: string;

  it('reviews an opened pull request: check queued → in_progress → action_required, findings inline, one summary', async () => {
    const result = await onPullRequestEvent(deps, event());
    expect(result.outcome).toBe('review_started');
    await settle();
    const history = (await checks()).filter((c) => c.head_sha === head());
    expect(history.map((c) => c.status)).toEqual(['queued', 'in_progress', 'completed']);
    const final = history.at(-1);
    expect(final).toMatchObject({ conclusion: 'action_required', title: 'Reviewed: 1 P0, 1 P2 open' });
    expect(final?.text).toContain('wontfix: <reason>');
    const posted = await comments();
    const inline = posted.filter((c) => c.path);
    expect(inline.map((c) => `${c.path}:${c.line}`).sort()).toEqual(['src/log.js:2', 'src/run.js:2']);
    evalCommentId = inline.find((c) => c.path === 'src/run.js')?.id ?? '';
    expect(posted.filter((c) => c.body.startsWith('## svc review'))).toHaveLength(1);
    const prs = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=1', headers });
    expect(prs.json().data[0]).toMatchObject({ review_status: 'reviewed' });

    // An agent reads the same check, fix prompt included, through the API (no .git/svc needed).
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/v1/pull-requests/${prs.json().data[0].id}/check`,
      headers,
    });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      object: 'pull_request_check',
      pull_request_id: prs.json().data[0].id,
      name: 'Service / Review',
      head_sha: head(),
      status: 'completed',
      conclusion: 'action_required',
      title: 'Reviewed: 1 P0, 1 P2 open',
      summary: final?.summary,
      fix_prompt: final?.text,
      autofix: expect.objectContaining({ round: 1, done: 0, limit: 2, limit_reached: false }),
      deadline_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const none = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests/pr_nope/check', headers });
    expect(none.statusCode).toBe(404);
  });

  it('does not review the same head twice unless forced, and never re-posts an open finding', async () => {
    const again = await onPullRequestEvent(deps, event({ action: 'synchronize' }));
    expect(again.outcome).toBe('deduplicated');
    const forced = await onPullRequestComment(deps, comment('@service review force'));
    expect(forced.outcome).toBe('review_started');
    await settle();
    const inline = (await comments()).filter((c) => c.path);
    expect(inline).toHaveLength(2);
    // The summary was edited in place: the same id, a newer body.
    const summaries = (await comments()).filter((c) => c.body.startsWith('## svc review'));
    expect(new Set(summaries.map((s) => s.id)).size).toBe(1);
  });

  it('wontfix on the finding thread dismisses it and recomputes the check without a new run', async () => {
    const runsBefore = (await t.services.db.orm.select().from(tasks)).length;
    const result = await onFindingThreadReply(
      deps,
      comment('wontfix: only admins reach this handler', { inReplyTo: evalCommentId }),
    );
    expect(result.outcome).toBe('dismissed');
    expect((await t.services.db.orm.select().from(tasks)).length).toBe(runsBefore);
    const [check] = (await latestChecks()).filter((c) => c.head_sha === head());
    expect(check).toMatchObject({ status: 'completed', conclusion: 'success', title: 'Reviewed: 1 P2 open' });
    const [dismissed] = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'security/code-injection'));
    expect(dismissed).toMatchObject({
      status: 'dismissed',
      dismissedReason: 'only admins reach this handler',
    });
    expect((await comments()).some((c) => c.in_reply_to === evalCommentId && /Dismissed/.test(c.body))).toBe(
      true,
    );
  });

  it('a push that removes the debug statement marks it fixed and the new head is clean', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/log.js': 'export function log(x) {\n  return x;\n}\n' }, 'remove debugger');
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    expect((await onPullRequestEvent(deps, event({ action: 'synchronize' }))).outcome).toBe('review_started');
    await settle();
    const [check] = (await latestChecks()).filter((c) => c.head_sha === head());
    expect(check).toMatchObject({ conclusion: 'success', title: 'Reviewed: no open findings' });
    const debug = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'correctness/debug-statement'));
    expect(debug[0]?.status).toBe('fixed');
  });

  it('skips drafts and release pull requests with the spec title, and never reviews them', async () => {
    gitIn(repo, ['update-ref', 'refs/pull/2/head', 'feature']);
    const draft = await onPullRequestEvent(deps, event({ number: 2, draft: true }));
    expect(draft).toMatchObject({ outcome: 'skipped', reason: 'draft pull request' });
    gitIn(repo, ['update-ref', 'refs/pull/3/head', 'feature']);
    const release = await onPullRequestEvent(deps, event({ number: 3, title: 'Release 1.2.0' }));
    expect(release.outcome).toBe('skipped');
    const skipped = (await latestChecks()).filter((c) => c.conclusion === 'skipped');
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    expect(skipped.every((c) => c.title === SKIPPED_FILTERED_TITLE)).toBe(true);
  });

  it('answers commands in the pull request and ignores bots, svc included', async () => {
    expect((await onPullRequestComment(deps, comment('@service'))).outcome).toBe('replied');
    expect((await comments()).at(-1)?.body).toMatch(/@service review off/);
    expect((await onPullRequestComment(deps, comment('@service review off generated code'))).outcome).toBe(
      'replied',
    );
    const off = await onPullRequestEvent(deps, event({ action: 'synchronize' }));
    expect(off).toMatchObject({ outcome: 'ignored', reason: expect.stringMatching(/generated code/) });
    expect((await onPullRequestComment(deps, comment('@service review status'))).outcome).toBe('replied');
    expect((await comments()).at(-1)?.body).toMatch(/Automatic review: off \(generated code\)/);
    const bot = await onPullRequestComment(
      deps,
      comment('@service review now', { senderType: 'Bot', senderLogin: 'svc[bot]' }),
    );
    expect(bot.outcome).toBe('ignored');
    // Anyone may comment on a public pull request; only collaborators command svc.
    const repliesBefore = (await comments()).length;
    for (const authorAssociation of ['CONTRIBUTOR', 'FIRST_TIME_CONTRIBUTOR', 'NONE', null]) {
      const stranger = await onPullRequestComment(
        deps,
        comment('@service review on', { senderLogin: 'passer-by', authorAssociation }),
      );
      expect(stranger).toMatchObject({
        outcome: 'ignored',
        reason: expect.stringMatching(/only owners, members and collaborators/),
      });
    }
    expect((await comments()).length).toBe(repliesBefore);
    const stillOff = await onPullRequestEvent(deps, event({ action: 'synchronize' }));
    expect(stillOff).toMatchObject({ outcome: 'ignored', reason: expect.stringMatching(/generated code/) });
    expect(
      (await onPullRequestComment(deps, comment('@service review status', { authorAssociation: 'MEMBER' })))
        .outcome,
    ).toBe('replied');
    expect((await onPullRequestComment(deps, comment('@service review on'))).outcome).toBe('replied');
    expect((await comments()).at(-1)?.body).toMatch(/Not reviewing: head .* was already reviewed/);
  });

  it('fix this on a finding without a replacement fails the fix task by name', async () => {
    const [debugComment] = (await comments()).filter((c) => c.path === 'src/log.js');
    const tasksBefore = (await t.services.db.orm.select().from(tasks)).length;
    const stranger = await onFindingThreadReply(
      deps,
      comment('fix this', { inReplyTo: debugComment?.id ?? null, authorAssociation: 'CONTRIBUTOR' }),
    );
    expect(stranger.outcome).toBe('ignored');
    expect((await t.services.db.orm.select().from(tasks)).length).toBe(tasksBefore);
    const result = await onFindingThreadReply(
      deps,
      comment('fix this', { inReplyTo: debugComment?.id ?? null }),
    );
    expect(result.outcome).toBe('fix_started');
    await settle();
    const run = await t.services.engine.latestRun(result.taskId ?? '');
    expect(run?.status).toBe('failed');
    expect(run?.error?.code).toBe('tool_failed');
  });

  it("completes a slow review's check neutral at its deadline", async () => {
    const [row] = await t.services.db.orm.select().from(checkRuns).limit(1);
    // A queued check whose review has not landed, and its deadline run falling due now.
    await t.services.db.orm
      .update(checkRuns)
      .set({ status: 'queued', conclusion: null })
      .where(eq(checkRuns.id, row?.id ?? ''));
    const { task } = await t.services.engine.createTask({
      workspaceId: t.workspaceId,
      projectId: row?.projectId ?? '',
      kind: 'check_deadline',
      title: 'deadline',
      input: { pull_request_id: row?.pullRequestId, head_sha: row?.headSha },
    });
    for (let i = 0; i < 100 && (await t.services.engine.latestRun(task.id))?.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const [check] = (await latestChecks()).filter((c) => c.id === row?.externalId);
    expect(check).toMatchObject({
      status: 'completed',
      conclusion: 'neutral',
      title: expect.stringMatching(/^Still reviewing/),
    });
  });

  it('turns a new plan document on the default branch into one plan with one plan-review run', async () => {
    commitFiles(
      repo,
      {
        'docs/plans/search.md':
          '# Search\n\n## Goal\nFind things fast.\n\n## Steps\n1. Index\n\n## Risks\nNone.\n',
      },
      'plan',
    );
    const after = gitIn(repo, ['rev-parse', 'main']).trim();
    const push = {
      installationId: 1,
      repo: 'acme/api',
      ref: 'refs/heads/main',
      after,
      defaultBranch: 'main',
      paths: ['docs/plans/search.md', 'src/app.js'],
    };
    const first = await onPush(deps, push);
    expect(first.plans).toHaveLength(1);
    const second = await onPush(deps, push);
    expect(second.plans).toHaveLength(0);
    await settle();
    const [plan] = await t.services.db.orm.select().from(plans);
    expect(plan).toMatchObject({
      status: 'reviewed',
      sourceKind: 'repo',
      repoArtifactPath: 'docs/plans/search.md',
      targetOutcome: 'Find things fast.',
    });
  });

  it('records a pull request closed without merging as closed, reopened as open, and counts no merge', async () => {
    gitIn(repo, ['update-ref', 'refs/pull/40/head', 'feature']);
    const stateOf = async () =>
      (await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=40', headers })).json().data[0]
        ?.state;
    const merges = async () =>
      (await t.services.db.orm.select({ n: projects.mergesSinceStudy }).from(projects))[0]?.n;
    await onPullRequestEvent(deps, event({ number: 40, action: 'labeled' }));
    expect(await stateOf()).toBe('open');
    const mergesBefore = await merges();
    const closed = await onPullRequestEvent(deps, event({ number: 40, action: 'closed' }));
    expect(closed).toMatchObject({ outcome: 'ignored', reason: 'closed without merging' });
    expect(await stateOf()).toBe('closed');
    expect(await merges()).toBe(mergesBefore);
    // GitHub keeps sending events about a closed pull request (labels, edits): it stays closed.
    await onPullRequestEvent(deps, event({ number: 40, action: 'labeled', closed: true }));
    expect(await stateOf()).toBe('closed');
    const reopened = await onPullRequestEvent(deps, event({ number: 40, action: 'reopened' }));
    expect(reopened.outcome).toBe('review_started');
    expect(await stateOf()).toBe('open');
    await settle();
  });

  it('starts a study pass on the tenth merge', async () => {
    let last: Awaited<ReturnType<typeof onPullRequestEvent>> | undefined;
    for (let n = 10; n < 20; n++) {
      gitIn(repo, ['update-ref', `refs/pull/${n}/head`, 'feature']);
      last = await onPullRequestEvent(deps, event({ number: n, action: 'closed', merged: true }));
    }
    expect(last?.outcome).toBe('study_started');
    await settle();
    const run = await t.services.engine.latestRun(last && 'taskId' in last ? (last.taskId ?? '') : '');
    expect(run?.status).toBe('completed');
  });

  it("completes a paused project's check skipped, naming the brake, instead of leaving it queued", async () => {
    gitIn(repo, ['checkout', '-q', '-b', 'paused-change', 'main']);
    commitFiles(repo, { 'src/paused.js': 'export const paused = 1;\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/30/head', 'paused-change']);
    const pausedHead = gitIn(repo, ['rev-parse', 'paused-change']).trim();
    const projectId = headers['project-id'] ?? '';
    const pause = (paused: boolean) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/projects/${projectId}/settings`,
        headers,
        payload: { 'svc.brakes.paused': paused },
      });
    expect((await pause(true)).statusCode).toBe(200);
    try {
      const result = await onPullRequestEvent(
        deps,
        event({ number: 30, headRef: 'paused-change', headSha: pausedHead }),
      );
      expect(result.outcome).toBe('review_started');
      await settle();
      const history = (await checks()).filter((c) => c.head_sha === pausedHead);
      expect(history.map((c) => c.status)).toEqual(['queued', 'completed']);
      expect(history.at(-1)).toMatchObject({
        conclusion: 'skipped',
        title: 'Skipped: the project is paused (svc.brakes.paused) — @service review now once it is lifted',
      });
      expect((history.at(-1) as CheckRecord & { summary: string }).summary).toContain('project_paused');
      const prs = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=30', headers });
      expect(prs.json().data[0]).toMatchObject({ review_status: 'errored' });
    } finally {
      await pause(false);
    }
  });
});
