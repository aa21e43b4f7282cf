/**
 * Automation without GitHub: the watcher over the local host's repositories. The pure part
 * (two snapshots of refs → events) on its own; then real repositories, the real app and a
 * worker: a pull request ref appearing is reviewed (its check recorded in the git dir), a new
 * head is one new review, nothing changed triggers nothing, `svc comment` commands run, a
 * fast-forward of the base counts the merge, a plan pushed to the default branch becomes a plan,
 * and a restart (with or without the state file) triggers nothing twice. Last, `svc serve --watch`
 * and `svc watch` as real processes.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  diffRefs,
  keepUnseen,
  LocalWatcher,
  type PullObservation,
  personComments,
  type RefsObservation,
  type RefsSeen,
  type TickReport,
  watchIntervalMs,
} from '../../src/automation/local-watch';
import { type AutomationDeps, onPullRequestEvent } from '../../src/automation/triggers';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { findings, plans, projects, pullRequests, tasks } from '../../src/storage/schema';
import { createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { freePort } from '../helpers/net';

const run = promisify(execFile);
const SVC = join(process.cwd(), 'bin', 'svc.mjs');
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const M = 'd'.repeat(40);
const M2 = 'e'.repeat(40);

const pull = (over: Partial<PullObservation> = {}): PullObservation => ({
  head: A,
  base: M,
  contained: false,
  draft: false,
  reviewed: false,
  ...over,
});
const observed = (pulls: Record<string, PullObservation>, tip = M): RefsObservation => ({
  defaultBranch: 'main',
  defaultTip: tip,
  pulls,
});
/** What the state is after observing `now` (from nothing). */
const seenAfter = (now: RefsObservation, seen: RefsSeen | null = null) => diffRefs(seen, now).next;
const actions = (seen: RefsSeen | null, now: RefsObservation) =>
  diffRefs(seen, now).events.map((e) =>
    e.kind === 'push' ? `push ${e.before?.[0] ?? 'null'}→${e.after[0]}` : `${e.action} #${e.number}`,
  );

describe('diffRefs: two snapshots of refs → events', () => {
  it('first start: an open pull request without a check is opened; the default branch replays nothing', () => {
    expect(actions(null, observed({ 1: pull(), 2: pull({ head: B, reviewed: true }) }))).toEqual([
      'opened #1',
    ]);
    expect(seenAfter(observed({ 1: pull() }))).toEqual({
      defaultBranch: 'main',
      defaultTip: M,
      pulls: { 1: { head: A, base: M, phase: 'open', draft: false, contained: false } },
    });
  });

  it('a moved head is synchronize, an unchanged one nothing, a draft turning ready ready_for_review', () => {
    const seen = seenAfter(observed({ 1: pull(), 2: pull({ draft: true }) }));
    expect(actions(seen, observed({ 1: pull(), 2: pull({ draft: true }) }))).toEqual([]);
    expect(actions(seen, observed({ 1: pull({ head: B }), 2: pull() }))).toEqual([
      'synchronize #1',
      'ready_for_review #2',
    ]);
  });

  it('a base moving to contain the head is merged once, and a merged pull request stays quiet', () => {
    const seen = seenAfter(observed({ 1: pull() }));
    const merged = diffRefs(seen, observed({ 1: pull({ base: M2, contained: true }) }, M2));
    expect(merged.events).toEqual([
      { kind: 'pull_request', action: 'closed', number: 1, headSha: A, merged: true },
      { kind: 'push', branch: 'main', before: M, after: M2 },
    ]);
    expect(actions(merged.next, observed({ 1: pull({ base: M2, contained: true }) }, M2))).toEqual([]);
    expect(actions(merged.next, observed({ 1: pull({ head: M2, base: M2, contained: true }) }, M2))).toEqual(
      [],
    );
  });

  it('a head reset or rebased into an unmoved base merges nothing, and its next commit is reviewed', () => {
    const seen = seenAfter(observed({ 1: pull() }));
    const reset = diffRefs(seen, observed({ 1: pull({ head: M, contained: true }) }));
    expect(reset.events).toEqual([]);
    expect(reset.next.pulls[1]).toMatchObject({ phase: 'open', contained: true });
    // The base moving on afterwards takes nothing of it in: still not a merge.
    expect(actions(reset.next, observed({ 1: pull({ head: M, base: M2, contained: true }) }, M2))).toEqual([
      'push d→e',
    ]);
    expect(actions(reset.next, observed({ 1: pull({ head: C }) }))).toEqual(['synchronize #1']);
  });

  it('a pull request counted merged in error reopens when its head moves on to commits its base lacks', () => {
    // As the watcher that took the checked-out branch for the default branch left it.
    const wronglyMerged: RefsSeen = {
      defaultBranch: 'main',
      defaultTip: M,
      pulls: { 1: { head: A, base: A, phase: 'merged', draft: false } },
    };
    expect(actions(wronglyMerged, observed({ 1: pull() }))).toEqual([]);
    const reopened = diffRefs(wronglyMerged, observed({ 1: pull({ head: B }) }));
    expect(reopened.events).toEqual([
      { kind: 'pull_request', action: 'reopened', number: 1, headSha: B, merged: false },
    ]);
    expect(reopened.next.pulls[1]).toMatchObject({ phase: 'open', contained: false });
    expect(actions(reopened.next, observed({ 1: pull({ head: B }) }))).toEqual([]);
  });

  it('a pull request with nothing its base lacks waits, and opens with its first commit', () => {
    const seen = seenAfter(observed({ 3: pull({ head: M, contained: true }) }));
    expect(seen.pulls[3]?.phase).toBe('waiting');
    expect(actions(seen, observed({ 3: pull({ head: M, contained: true }) }))).toEqual([]);
    expect(actions(seen, observed({ 3: pull({ head: C }) }))).toEqual(['opened #3']);
  });

  it('the default branch moving is a push; a renamed branch is not; an empty repository getting commits is', () => {
    const seen = seenAfter(observed({}));
    expect(actions(seen, observed({}, M2))).toEqual(['push d→e']);
    expect(actions(seen, { defaultBranch: 'trunk', defaultTip: M2, pulls: {} })).toEqual([]);
    const empty = seenAfter({ defaultBranch: null, defaultTip: null, pulls: {} });
    expect(actions(empty, observed({}))).toEqual(['push null→d']);
  });

  it('a pull request whose ref is gone is forgotten', () => {
    const seen = seenAfter(observed({ 1: pull() }));
    expect(diffRefs(seen, observed({})).next.pulls).toEqual({});
  });

  it('keepUnseen puts back what a failed event was about, so the next tick tries again', () => {
    const seen = seenAfter(observed({ 1: pull() }));
    const { events, next } = diffRefs(seen, observed({ 1: pull({ head: B }), 2: pull() }, M2));
    for (const event of events) keepUnseen(next, seen, event);
    expect(next).toEqual(seen);
    expect(actions(next, observed({ 1: pull({ head: B }), 2: pull() }, M2))).toEqual([
      'synchronize #1',
      'opened #2',
      'push d→e',
    ]);
  });

  it("personComments reads complete lines, only people's comments, and leaves a half-written line", () => {
    const lines = [
      { id: 'svc-1', pull_request: 1, body: '## svc review', in_reply_to: null },
      { id: 'p-1', pull_request: 1, body: '@service review status', in_reply_to: null, author: 'alice' },
      { id: 'p-2', pull_request: 1, body: 'wontfix: ok', in_reply_to: 'svc-1', author: 'bob' },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('');
    const torn = '{"id":"p-3","pull_request":1,"body":"@serv';
    const { comments, consumed } = personComments(Buffer.from(`${lines}not json\n${torn}`));
    expect(comments.map((c) => [c.id, c.author, c.in_reply_to])).toEqual([
      ['p-1', 'alice', null],
      ['p-2', 'bob', 'svc-1'],
    ]);
    expect(consumed).toBe(Buffer.byteLength(`${lines}not json\n`));
  });

  it('reads the interval from SVC_WATCH_INTERVAL_MS, 2 s by default, and refuses nonsense', () => {
    expect(watchIntervalMs({})).toBe(2000);
    expect(watchIntervalMs({ SVC_WATCH_INTERVAL_MS: '250' })).toBe(250);
    expect(() => watchIntervalMs({ SVC_WATCH_INTERVAL_MS: 'soon' })).toThrow(/SVC_WATCH_INTERVAL_MS/);
  });
});

type CheckRecord = { id: string; head_sha: string; status: string; conclusion: string | null; title: string };
type CommentRecord = { id: string; body: string; path: string | null; in_reply_to: string | null };

describe('the watcher on the local host', () => {
  let t: TestApp;
  let worker: Worker;
  let reposDir: string;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  let watcher: LocalWatcher;
  const logger = pino({ level: 'silent' });

  const head = (ref = 'feature') => gitIn(repo, ['rev-parse', ref]).trim();
  const latestChecks = async () => [
    ...new Map(
      (await host.localRecords<CheckRecord>('acme/api', 'checks')).map((c) => [c.id, c] as const),
    ).values(),
  ];
  const comments = () => host.localRecords<CommentRecord>('acme/api', 'comments');
  const tasksOf = async (kind: string) =>
    (await t.services.db.orm.select().from(tasks)).filter((x) => x.kind === kind);
  const summary = (report: TickReport) =>
    report.triggered.map(({ event, outcome }) =>
      event.kind === 'pull_request'
        ? `${event.action} #${event.number}: ${outcome}`
        : event.kind === 'push'
          ? `push ${event.branch}: ${outcome}`
          : `${event.reply ? 'reply' : 'comment'} #${event.number}: ${outcome}`,
    );
  const svcComment = (args: string[]) =>
    run(process.execPath, [SVC, 'comment', 'acme/api', ...args, '--repos', reposDir, '--author', 'alice'], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });

  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });

  beforeAll(async () => {
    reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', {
      'src/app.js': 'export const ok = 1;\n',
      // History of the default branch: a plan committed before the watcher ever ran.
      'docs/plans/old.md': '# Old\n\n## Goal\nSomething done long ago.\n',
    });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, {
      'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
      'src/log.js': 'export function log(x) {\n  debugger;\n  return x;\n}\n',
    });
    gitIn(repo, ['checkout', '-q', 'main']);
    // Pull request 1, opened before the first start; symbolic, so it follows the branch.
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/head', 'refs/heads/feature']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/base', 'refs/heads/main']);
    // A repository that is not a project, with a pull request of its own: never looked at.
    const other = makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });
    gitIn(other, ['update-ref', 'refs/pull/1/head', 'main']);
    // A project whose repository disappears: reported by name, the others still watched.
    makeRepo(reposDir, 'acme/a-gone', { 'a.js': 'export const a = 1;\n' });

    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    await createProject(t, 'acme/api');
    await createProject(t, 'acme/a-gone');
    rmSync(join(reposDir, 'acme/a-gone'), { recursive: true, force: true });
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
    watcher = new LocalWatcher(deps, { logger });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('first start: reviews the open pull request, replays no history, skips non-projects, names a broken repository', async () => {
    const report = await watcher.tick();
    expect(report.repos).toEqual(['acme/a-gone', 'acme/api']);
    expect(report.errors).toEqual([{ repo: 'acme/a-gone', message: expect.stringMatching(/acme\/a-gone/) }]);
    expect(summary(report)).toEqual(['opened #1: review_started']);
    expect(await tasksOf('review')).toHaveLength(1);
    await settle();
    const [check] = (await latestChecks()).filter((c) => c.head_sha === head());
    expect(check).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(await t.services.db.orm.select().from(plans)).toEqual([]);
    expect(existsSync(join(repo, '.git/svc/watch.json'))).toBe(true);
    expect(existsSync(join(reposDir, 'acme/other/.git/svc'))).toBe(false);
  });

  it('a tick with no change triggers nothing', async () => {
    const before = (await t.services.db.orm.select().from(tasks)).length;
    expect(summary(await watcher.tick())).toEqual([]);
    expect((await t.services.db.orm.select().from(tasks)).length).toBe(before);
  });

  it('a new commit on the pull request head is one new review (synchronize)', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/log.js': 'export function log(x) {\n  return x;\n}\n' }, 'remove debugger');
    gitIn(repo, ['checkout', '-q', 'main']);
    expect(summary(await watcher.tick())).toEqual(['synchronize #1: review_started']);
    expect(await tasksOf('review')).toHaveLength(2);
    await settle();
    const [check] = (await latestChecks()).filter((c) => c.head_sha === head());
    expect(check).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(summary(await watcher.tick())).toEqual([]);
    expect(await tasksOf('review')).toHaveLength(2);
  });

  it('svc comment writes a comment the watcher runs as a command; svc answering runs nothing', async () => {
    const status = await svcComment(['1', '@service review status']);
    expect(status.stdout.trim()).toMatch(/^local-comment-/);
    const evalComment = (await comments()).find((c) => c.path === 'src/run.js');
    expect(evalComment).toBeDefined();
    await svcComment(['1', 'wontfix: only admins reach this handler', '--reply-to', evalComment?.id ?? '']);
    const refused = await svcComment(['7', '@service']).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr).toMatch(/pull request 7 not found/);

    expect(summary(await watcher.tick())).toEqual(['comment #1: replied', 'reply #1: dismissed']);
    const all = await comments();
    expect(all.some((c) => /^Review status: \*\*reviewed\*\*/.test(c.body))).toBe(true);
    expect(all.some((c) => c.in_reply_to === evalComment?.id && /^Dismissed/.test(c.body))).toBe(true);
    const [dismissed] = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'security/code-injection'));
    expect(dismissed).toMatchObject({
      status: 'dismissed',
      dismissedReason: 'only admins reach this handler',
    });
    // svc's own replies are in the same file; they are not commands.
    expect(summary(await watcher.tick())).toEqual([]);
  });

  it('restart: a new watcher on the same state triggers nothing; without the state, nothing is replayed', async () => {
    const before = (await t.services.db.orm.select().from(tasks)).length;
    const commentsBefore = (await comments()).length;
    expect(summary(await new LocalWatcher(deps, { logger }).tick())).toEqual([]);
    // A lost state file is a first start: the reviewed head, the branch and the comments stay quiet.
    rmSync(join(repo, '.git/svc/watch.json'));
    expect(summary(await new LocalWatcher(deps, { logger }).tick())).toEqual([]);
    expect(existsSync(join(repo, '.git/svc/watch.json'))).toBe(true);
    expect((await t.services.db.orm.select().from(tasks)).length).toBe(before);
    expect((await comments()).length).toBe(commentsBefore);
  });

  it('merging (a fast-forward of the base to the head) counts the merge once', async () => {
    gitIn(repo, ['merge', '-q', '--ff-only', 'feature']);
    const report = await watcher.tick();
    expect(summary(report)).toEqual(['closed #1: merge_counted', 'push main: ignored']);
    const [project] = await t.services.db.orm
      .select()
      .from(projects)
      .where(eq(projects.repoFullName, 'acme/api'));
    expect(project?.mergesSinceStudy).toBe(1);
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    expect(pr).toMatchObject({ state: 'merged', mergedAt: expect.any(Date) });
    expect(summary(await watcher.tick())).toEqual([]);
    expect(summary(await new LocalWatcher(deps, { logger }).tick())).toEqual([]);
  });

  it('a plan document pushed to the default branch becomes a plan with its plan-review task', async () => {
    commitFiles(
      repo,
      {
        'docs/plans/search.md':
          '# Search\n\n## Goal\nFind things fast.\n\n## Steps\n1. Index\n\n## Risks\nNone.\n',
      },
      'plan',
    );
    expect(summary(await watcher.tick())).toEqual(['push main: plans_found']);
    const reviews = await tasksOf('plan_review');
    expect(reviews).toHaveLength(1);
    await settle();
    const all = await t.services.db.orm.select().from(plans);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({
      repoArtifactPath: 'docs/plans/search.md',
      reviewTaskId: reviews[0]?.id,
      status: 'reviewed',
    });
    expect(summary(await watcher.tick())).toEqual([]);
  });

  it('the poll loop notices a new pull request on its own, and stops cleanly', async () => {
    gitIn(repo, ['checkout', '-q', '-b', 'second']);
    commitFiles(repo, { 'src/second.js': 'export const second = 2;\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/2/head', 'refs/heads/second']);
    const looping = new LocalWatcher(deps, { logger, intervalMs: 50 });
    looping.start();
    try {
      for (let i = 0; i < 400; i++) {
        if ((await tasksOf('review')).some((x) => x.title.includes('#2 '))) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await looping.stop();
    }
    expect((await tasksOf('review')).filter((x) => x.title.includes('#2 '))).toHaveLength(1);
    // Stopped: a pull request opened now is not noticed.
    gitIn(repo, ['symbolic-ref', 'refs/pull/3/head', 'refs/heads/second']);
    gitIn(repo, ['checkout', '-q', 'second']);
    commitFiles(repo, { 'src/third.js': 'export const third = 3;\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    const reviews = (await tasksOf('review')).length;
    await new Promise((r) => setTimeout(r, 300));
    expect((await tasksOf('review')).length).toBe(reviews);
    await settle();
  });
});

describe('the watcher on a work tree people edit in', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  let watcher: LocalWatcher;
  const logger = pino({ level: 'silent' });
  const rev = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();
  const summary = async () =>
    (await watcher.tick()).triggered.map(({ event, outcome }) =>
      event.kind === 'pull_request' ? `${event.action} #${event.number}: ${outcome}` : `${event.kind}`,
    );
  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
  const pullRequest = async (number: number) =>
    (await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, number)))[0];
  const merges = async () =>
    (await t.services.db.orm.select().from(projects).where(eq(projects.repoFullName, 'acme/edit')))[0]
      ?.mergesSinceStudy;
  const checkOf = async (sha: string) =>
    [
      ...new Map(
        (await host.localRecords<CheckRecord>('acme/edit', 'checks')).map((c) => [c.id, c] as const),
      ).values(),
    ].find((c) => c.head_sha === sha);

  beforeAll(async () => {
    const reposDir = makeReposDir();
    // A work tree with no origin and no init.defaultBranch: main is the default branch by name.
    repo = makeRepo(reposDir, 'acme/edit', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'fix']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    // Pull request 10 has no refs/pull/10/base: its base is the default branch.
    gitIn(repo, ['symbolic-ref', 'refs/pull/10/head', 'refs/heads/fix']);
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    await createProject(t, 'acme/edit');
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
    watcher = new LocalWatcher(deps, { logger });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('with the pull request branch checked out: reviewed against main, finding the defect; never merged by checkout or reset', async () => {
    // `fix` stays checked out, as while editing it.
    expect(await summary()).toEqual(['opened #10: review_started']);
    await settle();
    expect(await checkOf(rev('fix'))).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    expect(await summary()).toEqual([]);
    // The branch reset onto main (its head now in the default branch, which did not move).
    gitIn(repo, ['reset', '-q', '--hard', 'main']);
    expect(await summary()).toEqual([]);
    expect(await pullRequest(10)).toMatchObject({ state: 'open', mergedAt: null });
    expect(await merges()).toBe(0);
    // Its next commit is a new head to review.
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.body);\n}\n' });
    expect(await summary()).toEqual(['synchronize #10: review_started']);
    await settle();
    // Merging it for real (main moves to take the head in) is counted, once.
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['merge', '-q', '--ff-only', 'fix']);
    expect(await summary()).toEqual(['closed #10: merge_counted', 'push']);
    expect(await pullRequest(10)).toMatchObject({ state: 'merged', mergedAt: expect.any(Date) });
    expect(await merges()).toBe(1);
    expect(await summary()).toEqual([]);
  });

  it('a pull request counted merged in error reopens on its next push, and its merge no longer counts', async () => {
    gitIn(repo, ['checkout', '-q', '-b', 'wip']);
    commitFiles(repo, { 'src/wip.js': 'export const wip = 1;\n' });
    gitIn(repo, ['symbolic-ref', 'refs/pull/11/head', 'refs/heads/wip']);
    expect(await summary()).toEqual(['opened #11: review_started']);
    await settle();
    // What the watcher that took the checked-out branch for the default branch did: merged, counted.
    const stateFile = join(repo, '.git/svc/watch.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    state.refs.pulls['11'] = { head: rev('wip'), base: rev('wip'), phase: 'merged', draft: false };
    writeFileSync(stateFile, JSON.stringify(state));
    await onPullRequestEvent(deps, {
      action: 'closed',
      installationId: 1,
      repo: 'acme/edit',
      number: 11,
      title: 'wip',
      draft: false,
      merged: true,
      headRef: 'wip',
      headSha: rev('wip'),
      baseRef: 'wip',
      author: null,
    });
    expect(await merges()).toBe(2);
    expect(await summary()).toEqual([]);
    commitFiles(repo, { 'src/wip.js': 'export const wip = 2;\n' });
    expect(await summary()).toEqual(['reopened #11: review_started']);
    expect(await pullRequest(11)).toMatchObject({ state: 'open', mergedAt: null });
    expect(await merges()).toBe(1);
    await settle();
    expect(await checkOf(rev('wip'))).toMatchObject({ status: 'completed' });
    expect(await summary()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The wiring, as a user runs it.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function start(args: string[], env: Record<string, string>): { child: ChildProcess; stderr: () => string } {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  const child = spawn(process.execPath, [SVC, ...args], { env: { ...base, LOG_LEVEL: 'warn', ...env } });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return { child, stderr: () => stderr };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, stderr: () => string) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => null);
    if (value) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not happen: ${stderr()}`);
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/** Two `svc` processes on a fresh embedded database (~7 s to initialise alone); the limit only stops a hang. */
describe('svc serve --watch and svc watch', { timeout: 240_000 }, () => {
  it('review a local pull request with no call but creating the project, and stop cleanly', async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    const key = 'svc_ws_watch-process-test-0123456789';
    const env = {
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-watch-')),
      SVC_REPOS_DIR: reposDir,
      SVC_BOOTSTRAP_KEY: key,
      SVC_WATCH_INTERVAL_MS: '200',
      SVC_POLL_MS: '100',
    };
    const localHost = new LocalCodeHost(reposDir);
    const completedCheck = (sha: string) => async () =>
      (await localHost.localRecords<CheckRecord>('acme/api', 'checks')).find(
        // The review's own completion (a slow one may first complete `neutral`, "Still reviewing").
        (c) => c.head_sha === sha && c.status === 'completed' && c.title.startsWith('Reviewed'),
      );

    const port = await freePort();
    const served = start(['serve', '--watch', '--port', String(port)], env);
    const url = `http://127.0.0.1:${port}`;
    await until('serve answering', async () => (await fetch(`${url}/healthz`)).ok, served.stderr);
    const created = await fetch(`${url}/api/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'api', repository: { full_name: 'acme/api', installation_id: 1 } }),
    });
    expect(created.status).toBe(201);
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/head', 'refs/heads/feature']);
    const first = await until(
      'the review of #1',
      completedCheck(gitIn(repo, ['rev-parse', 'feature']).trim()),
      served.stderr,
    );
    expect(first.conclusion).toBe('action_required');
    expect(await stop(served.child)).toBe(0);

    // The same database and repositories under `svc watch` (watcher and worker, no HTTP): it
    // picks up where serve left off.
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return req.query.code;\n}\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    const watching = start(['watch'], env);
    const second = await until(
      'the review of the new head',
      completedCheck(gitIn(repo, ['rev-parse', 'feature']).trim()),
      watching.stderr,
    );
    expect(second.conclusion).toBe('success');
    expect(await stop(watching.child)).toBe(0);
    const checks = await localHost.localRecords<CheckRecord>('acme/api', 'checks');
    // One check per head: nothing was triggered twice across the two processes.
    expect(new Set(checks.map((c) => c.id)).size).toBe(2);
  });
});
