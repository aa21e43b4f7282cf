/**
 * svc counts autofix rounds on a pull request: each verdict's fix prompt says which round it asks
 * for, and once two rounds are done the check and its prompt tell the agent to stop and ask a
 * person. On the local host (real git: `[autofix]` commits on the pull request's branch, round
 * comments in `comments.jsonl` as `svc comment` writes them) and on GitHub (the double: the
 * pull request's commits by compare, its issue comments), read back through the API.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AutomationDeps,
  onPullRequestEvent,
  type PullRequestEvent,
} from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { bearer, createProject, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { createGitHubTestApp } from '../helpers/github-app';
import { GitHubDouble } from '../helpers/github-double';
import { startLocalAutomation } from '../helpers/local-automation';
import { pullRequestEvent } from '../helpers/pull-request-event';
import { WEBHOOK_SECRET } from '../helpers/webhooks';

const FEATURE = {
  'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
  'src/log.js': 'export function log(x) {\n  debugger;\n  return x;\n}\n',
};
const NO_EVAL = { 'src/run.js': 'export function run(req) {\n  return JSON.parse(req.query.code);\n}\n' };
const UNRELATED = { 'src/notes.js': 'export const notes = [];\n' };

interface CheckAnswer {
  status: string;
  head_sha: string;
  summary: string;
  fix_prompt: string | null;
  autofix: {
    round: number | null;
    done: number;
    limit: number;
    limit_reached: boolean;
    commits: string[];
    round_comments: number[];
  } | null;
}

/** Commits `files` on `feature` with `message` and returns the new head. */
function commitOnFeature(repo: string, files: Record<string, string>, message: string): string {
  gitIn(repo, ['checkout', '-q', 'feature']);
  const sha = commitFiles(repo, files, message);
  gitIn(repo, ['checkout', '-q', 'main']);
  return sha;
}

function featureRepo(reposDir: string): string {
  const repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
  gitIn(repo, ['checkout', '-q', '-b', 'feature']);
  commitFiles(repo, FEATURE, 'Add the runner');
  gitIn(repo, ['checkout', '-q', 'main']);
  return repo;
}

async function readCheck(t: TestApp, headers: Record<string, string>): Promise<CheckAnswer> {
  const prs = await t.app.inject({ method: 'GET', url: '/api/v1/pull-requests?number=1', headers });
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/pull-requests/${prs.json().data[0].id}/check`,
    headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The three verdicts of two rounds, as both hosts must show them. */
function expectRoundOne(check: CheckAnswer) {
  expect(check.autofix).toEqual({
    round: 1,
    done: 0,
    limit: 2,
    limit_reached: false,
    commits: [],
    round_comments: [],
  });
  expect(check.fix_prompt).toContain('Autofix round: 1 of 2');
  expect(check.fix_prompt).toContain('titled "autofix round 1"');
  expect(check.summary).toContain('Autofix: round 1 of 2 is next (0 done).');
}

function expectRoundTwo(check: CheckAnswer, autofixCommit: string) {
  expect(check.autofix).toEqual({
    round: 2,
    done: 1,
    limit: 2,
    limit_reached: false,
    commits: [autofixCommit],
    round_comments: [1],
  });
  expect(check.fix_prompt).toContain('Autofix round: 2 of 2');
  expect(check.fix_prompt).toContain('This is the last round');
}

function expectLimitReached(check: CheckAnswer, autofixCommits: string[]) {
  expect(check.autofix).toEqual({
    round: null,
    done: 2,
    limit: 2,
    limit_reached: true,
    commits: autofixCommits,
    round_comments: [1, 2],
  });
  expect(check.fix_prompt).toContain('## Stop');
  expect(check.fix_prompt).toContain('ask a person to decide on the open findings below');
  expect(check.fix_prompt).not.toContain('## What to do');
  expect(check.summary).toMatch(/Autofix limit reached: 2 of 2 rounds done\. .*ask a person/);
}

describe('autofix rounds on the local host', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  let headers: Record<string, string>;

  const head = () => gitIn(repo, ['rev-parse', 'feature']).trim();
  const event = (action: PullRequestEvent['action']) => pullRequestEvent({ action, headSha: head() });
  /** The agent's round: its `[autofix]` commit and its round comment (`svc comment`). */
  async function round(n: number, files: Record<string, string>): Promise<string> {
    const sha = commitOnFeature(repo, files, `Round ${n} of the review's fixes [autofix]`);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    await host.addPersonComment('acme/api', {
      pullRequest: 1,
      body: `autofix round ${n}\n- fixed: see the commit\nverified: npm test`,
      author: 'coding-agent',
    });
    expect((await onPullRequestEvent(deps, event('synchronize'))).outcome).toBe('review_started');
    await settleRuns(t, { ignoreKinds: ['check_deadline'] });
    return sha;
  }

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = featureRepo(reposDir);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    ({ t, worker, headers, host, deps } = await startLocalAutomation(reposDir));
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('asks for round 1, then round 2 of 2, then tells the agent to stop and ask a person', {
    timeout: 180_000,
  }, async () => {
    expect((await onPullRequestEvent(deps, event('opened'))).outcome).toBe('review_started');
    await settleRuns(t, { ignoreKinds: ['check_deadline'] });
    expectRoundOne(await readCheck(t, headers));

    const first = await round(1, NO_EVAL);
    const second = await readCheck(t, headers);
    expect(second.head_sha).toBe(head());
    expectRoundTwo(second, first);

    // Round 2 leaves the debugger statement open: the rounds are spent, a person decides.
    const last = await round(2, UNRELATED);
    const spent = await readCheck(t, headers);
    expectLimitReached(spent, [first, last]);
    // The code host's own record of the check says the same.
    const posted = (await host.localRecords<{ head_sha: string; text: string | null }>('acme/api', 'checks'))
      .filter((c) => c.head_sha === head())
      .at(-1);
    expect(posted?.text).toBe(spent.fix_prompt);
  });
});

describe('autofix rounds on GitHub', () => {
  const APP_ID = 31338;
  const INSTALLATION = 778;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  let double: GitHubDouble;
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let deps: AutomationDeps;
  let headers: Record<string, string>;

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();
  const event = (action: PullRequestEvent['action']) =>
    pullRequestEvent({ action, installationId: INSTALLATION, headSha: sha('feature') });
  async function round(n: number, files: Record<string, string>): Promise<string> {
    const commit = commitOnFeature(repo, files, `[autofix] round ${n}`);
    double.addIssueComment('acme/api', 1, `## Autofix round ${n}\nverified: npm test`, 'coding-agent[bot]');
    expect((await onPullRequestEvent(deps, event('synchronize'))).outcome).toBe('review_started');
    await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
    return commit;
  }

  beforeAll(async () => {
    double = await GitHubDouble.start({ appId: APP_ID, publicKey, installations: [INSTALLATION] });
    repo = featureRepo(makeReposDir());
    await double.seedFromGit('acme', 'api', repo, { installationId: INSTALLATION });
    double.addPullRequest('acme/api', { number: 1, title: 'Add the runner', base: 'main', head: 'feature' });
    t = await createGitHubTestApp(double, { appId: APP_ID, privateKey, webhookSecret: WEBHOOK_SECRET });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    headers = {
      ...bearer(t.workspaceKey),
      'project-id': await createProject(t, 'acme/api', INSTALLATION),
    };
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await double?.close();
  });

  it("counts the pull request's [autofix] commits and round comments, and stops after two", {
    timeout: 180_000,
  }, async () => {
    expect((await onPullRequestEvent(deps, event('opened'))).outcome).toBe('review_started');
    await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
    expectRoundOne(await readCheck(t, headers));

    const first = await round(1, NO_EVAL);
    expectRoundTwo(await readCheck(t, headers), first);

    const last = await round(2, UNRELATED);
    const spent = await readCheck(t, headers);
    expectLimitReached(spent, [first, last]);
    // GitHub shows the check with the same prompt, and svc read the comments GitHub's way.
    const check = double.checkRuns.filter((c) => c.head_sha === sha('feature')).at(-1);
    expect(check?.output?.text).toBe(spent.fix_prompt);
    expect(double.requestsTo('issues/list-comments').length).toBeGreaterThan(0);
    expect(double.rejections).toEqual([]);
  });
});
