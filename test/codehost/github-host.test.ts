/**
 * The GitHub code host against the GitHub double (test/helpers/github-double.ts), which checks
 * every request against GitHub's REST description: after each test, `double.rejections` must be
 * empty, so a request GitHub would refuse fails the test.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCodeHosts } from '../../src/codehost';
import { GitHubAppClient, type GitHubClientOptions } from '../../src/codehost/github/client';
import { type GitHubAppConfig, GitHubConfigError, loadGitHubConfig } from '../../src/codehost/github/config';
import { GitHubCodeHost, REVIEW_COMMENT_BATCH } from '../../src/codehost/github/github-host';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import { CodeHostError } from '../../src/codehost/types';
import type { DiffFile } from '../../src/core/review';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { GitHubDouble } from '../helpers/github-double';

const APP_ID = 4242;
const INSTALLATION = 100;
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
/** Small caps, so a test needs a handful of files, not hundreds, to reach them. */
const COMPARE_CAP = 7;
/** Fast: no write spacing, 5xx backoff in ms, a 3 s cap on rate-limit waits. */
const FAST: Partial<GitHubClientOptions> = {
  writeSpacingMs: 0,
  notificationSpacingMs: 0,
  serverErrorBackoffMs: 20,
  maxRateLimitWaitMs: 3_000,
};

let double: GitHubDouble;
let reposDir: string;
let api: string;
let config: GitHubAppConfig;
let client: GitHubAppClient;
let host: GitHubCodeHost;
let local: LocalCodeHost;
const sha: Record<string, string> = {};

async function codeHostError(promise: Promise<unknown>): Promise<CodeHostError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodeHostError);
  return error as CodeHostError;
}

beforeAll(async () => {
  double = await GitHubDouble.start({
    appId: APP_ID,
    publicKey,
    installations: [INSTALLATION, 200],
    compareFileCap: COMPARE_CAP,
  });
  reposDir = makeReposDir();
  local = new LocalCodeHost(reposDir);
  api = makeRepo(reposDir, 'acme/api', {
    'src/app.ts': 'export const a = 1;\nexport const b = 2;\n\nexport function f() {\n  return a + b;\n}\n',
    'src/old name.ts': 'export const renamed = true;\nexport const kept = 1;\nexport const more = 2;\n',
    'docs/gone.md': '# gone\n',
    'assets/logo.bin': Buffer.from([0, 1, 2, 3, 255, 0, 7]),
    'README.md': '# api\n',
  });
  sha.main0 = gitIn(api, ['rev-parse', 'HEAD']).trim();
  gitIn(api, ['checkout', '-q', '-b', 'feature']);
  gitIn(api, ['mv', 'src/old name.ts', 'src/new name.ts']);
  sha.feat1 = commitFiles(
    api,
    {
      'src/app.ts':
        'export const a = 1;\nexport const b = 3;\nexport const c = 4;\n\nexport function f() {\n  return a + b + c;\n}\n',
      'src/new name.ts': 'export const renamed = true;\nexport const kept = 1;\nexport const more = 3;\n',
      'docs/gone.md': null,
      'assets/logo.bin': Buffer.from([0, 9, 9, 3, 255, 0, 7, 8]),
      'src/ünïcode file.py': 'def f():\n    return 1',
      'src/empty.txt': '',
    },
    'feature work',
  );
  gitIn(api, ['checkout', '-q', 'main']);
  sha.main1 = commitFiles(api, { 'README.md': '# api\n\nmore\n' }, 'docs');
  // A branch touching more files than the compare cap.
  gitIn(api, ['checkout', '-q', '-b', 'wide', sha.main0 as string]);
  sha.wide = commitFiles(
    api,
    Object.fromEntries(
      Array.from({ length: COMPARE_CAP + 3 }, (_, i) => [`wide/f${i}.ts`, `export const v${i} = ${i};\n`]),
    ),
    'wide change',
  );
  gitIn(api, ['checkout', '-q', 'main']);
  await double.seedFromGit('acme', 'api', api, { installationId: INSTALLATION });
  double.addPullRequest('acme/api', {
    number: 7,
    title: 'Feature work',
    base: 'main',
    head: 'feature',
    user: 'mona',
  });
  double.addPullRequest('acme/api', { number: 8, title: 'Wide', base: 'main', head: 'wide' });

  config = { appId: APP_ID, privateKey, webhookSecret: 'secret', apiUrl: double.url };
  client = new GitHubAppClient(config, FAST);
  host = new GitHubCodeHost(INSTALLATION, client, { compareFileCap: COMPARE_CAP });
});

afterEach(() => {
  const rejections = [...double.rejections];
  double.resetLog();
  expect(rejections).toEqual([]);
});

afterAll(async () => {
  await double?.close();
  if (reposDir) rmSync(reposDir, { recursive: true, force: true });
});

describe('configuration', () => {
  it('is off with no GitHub variables, and names every missing or malformed one', () => {
    expect(loadGitHubConfig({})).toBeNull();
    const error = (() => {
      try {
        loadGitHubConfig({ GITHUB_APP_ID: 'abc', GITHUB_PRIVATE_KEY: 'not a key' });
      } catch (e) {
        return e;
      }
    })() as GitHubConfigError;
    expect(error).toBeInstanceOf(GitHubConfigError);
    expect(error.message).toMatch(/GITHUB_APP_ID must be a positive integer, got "abc"/);
    expect(error.message).toMatch(/GITHUB_PRIVATE_KEY is not a PEM private key/);
    expect(error.message).toMatch(/GITHUB_WEBHOOK_SECRET is not set/);
    // A webhook secret alone receives deliveries but does not turn the GitHub API on.
    expect(loadGitHubConfig({ GITHUB_WEBHOOK_SECRET: 'x' })).toBeNull();
    expect(() => loadGitHubConfig({ GITHUB_APP_ID: '7', GITHUB_WEBHOOK_SECRET: 'x' })).toThrow(
      /GITHUB_PRIVATE_KEY \(PEM text\) or GITHUB_PRIVATE_KEY_PATH/,
    );
    expect(() =>
      loadGitHubConfig({
        GITHUB_APP_ID: '1',
        GITHUB_PRIVATE_KEY: privateKey,
        GITHUB_WEBHOOK_SECRET: 'x',
        GITHUB_API_URL: 'ftp://x',
      }),
    ).toThrow(/GITHUB_API_URL must be an http\(s\) URL/);
  });

  it('reads the key with \\n escapes or from a file, and defaults the API URL', () => {
    const escaped = privateKey.trim().replace(/\n/g, '\\n');
    const fromEnv = loadGitHubConfig({
      GITHUB_APP_ID: '12',
      GITHUB_PRIVATE_KEY: escaped,
      GITHUB_WEBHOOK_SECRET: 's',
    });
    expect(fromEnv).toEqual({
      appId: 12,
      privateKey: privateKey.trim(),
      webhookSecret: 's',
      apiUrl: 'https://api.github.com',
    });
    const dir = mkdtempSync(join(tmpdir(), 'svc-key-'));
    try {
      writeFileSync(join(dir, 'app.pem'), privateKey);
      const fromFile = loadGitHubConfig({
        GITHUB_APP_ID: '12',
        GITHUB_PRIVATE_KEY_PATH: join(dir, 'app.pem'),
        GITHUB_WEBHOOK_SECRET: 's',
        GITHUB_API_URL: 'https://ghe.example/api/v3/',
      });
      expect(fromFile?.privateKey).toBe(privateKey.trim());
      expect(fromFile?.apiUrl).toBe('https://ghe.example/api/v3');
      expect(() =>
        loadGitHubConfig({
          GITHUB_APP_ID: '12',
          GITHUB_PRIVATE_KEY_PATH: join(dir, 'nope.pem'),
          GITHUB_WEBHOOK_SECRET: 's',
        }),
      ).toThrow(/GITHUB_PRIVATE_KEY_PATH .*nope\.pem cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('createCodeHosts serves GitHub for ids other than 1 only when configured', () => {
    const withGitHub = createCodeHosts({ reposDir, github: config, githubClient: FAST });
    expect(withGitHub.forInstallation(1)?.kind).toBe('local');
    expect(withGitHub.forInstallation(INSTALLATION)?.kind).toBe('github');
    expect(withGitHub.forInstallation(INSTALLATION)).toBe(withGitHub.forInstallation(INSTALLATION));
    expect(withGitHub.forInstallation(0)).toBeNull();
    const without = createCodeHosts({ reposDir, env: {} });
    expect(without.forInstallation(INSTALLATION)).toBeNull();
  });
});

describe('installation tokens', () => {
  it('are fetched once with the App JWT and reused by every call', async () => {
    const fresh = new GitHubCodeHost(INSTALLATION, new GitHubAppClient(config, FAST));
    await Promise.all([
      fresh.defaultBranch('acme/api'),
      fresh.defaultBranch('acme/api'),
      fresh.repositoryExists('acme/api'),
    ]);
    for (let i = 0; i < 5; i++) await fresh.readFile('acme/api', 'main', 'README.md');
    const tokenRequests = double.requestsTo('apps/create-installation-access-token');
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]?.auth).toBe('jwt');
    const others = double.requests.filter((r) => r.operationId !== 'apps/create-installation-access-token');
    expect(others).toHaveLength(8);
    expect(others.every((r) => r.auth === 'token')).toBe(true);
  });

  it('are renewed shortly before they expire', async () => {
    let now = Date.now();
    const clocked = new GitHubAppClient(config, {
      ...FAST,
      now: () => now,
      tokenRefreshMarginMs: 5 * 60_000,
    });
    const fresh = new GitHubCodeHost(INSTALLATION, clocked);
    await fresh.defaultBranch('acme/api');
    now += 50 * 60_000; // 10 minutes before expiry: still good
    await fresh.defaultBranch('acme/api');
    expect(double.requestsTo('apps/create-installation-access-token')).toHaveLength(1);
    now += 6 * 60_000; // 4 minutes before expiry: inside the margin
    await fresh.defaultBranch('acme/api');
    expect(double.requestsTo('apps/create-installation-access-token')).toHaveLength(2);
  });

  it('an installation GitHub does not know is unavailable, saying so', async () => {
    const stranger = new GitHubCodeHost(999, client);
    const error = await codeHostError(stranger.defaultBranch('acme/api'));
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(
      /installation token for GitHub installation 999: GitHub does not know this installation/,
    );
    double.rejections.length = 0; // the 404 was the point
  });

  it('a repository the installation cannot see is not found', async () => {
    const other = new GitHubCodeHost(200, client);
    expect(await other.repositoryExists('acme/api')).toBe(false);
    expect((await codeHostError(other.getPullRequest('acme/api', 7))).reason).toBe('not_found');
    double.rejections.length = 0;
  });
});

describe('reading', () => {
  it('repositories, default branch and tree', async () => {
    expect(await host.repositoryExists('acme/api')).toBe(true);
    expect(await host.repositoryExists('acme/missing')).toBe(false);
    expect(await host.repositoryExists('../etc')).toBe(false);
    expect(await host.defaultBranch('acme/api')).toBe('main');
    const tree = await host.readTree('acme/api');
    const localTree = await local.readTree('acme/api');
    expect(tree).toMatchObject({ ref: 'main', commit: sha.main1, truncated: false });
    expect(tree.files.sort((a, b) => a.path.localeCompare(b.path))).toEqual(
      localTree.files.sort((a, b) => a.path.localeCompare(b.path)),
    );
    double.rejections.length = 0; // acme/missing was a 404 on purpose
  });

  it('a pull request, with its merge base from compare', async () => {
    expect(await host.getPullRequest('acme/api', 7)).toEqual({
      number: 7,
      title: 'Feature work',
      baseRef: 'main',
      headRef: 'feature',
      baseSha: sha.main1,
      headSha: sha.feat1,
      mergeBaseSha: sha.main0,
      draft: false,
      author: 'mona',
    });
    expect((await codeHostError(host.getPullRequest('acme/api', 99))).reason).toBe('not_found');
    expect((await codeHostError(host.getPullRequest('acme/api', 0))).reason).toBe('invalid_input');
    double.rejections.length = 0;
  });

  it('a range resolves branches and commits; an unknown end is named', async () => {
    expect(await host.resolveRange('acme/api', 'main', 'feature')).toEqual(
      await local.resolveRange('acme/api', 'main', 'feature'),
    );
    expect(await host.resolveRange('acme/api', sha.main0 as string, 'heads/feature')).toMatchObject({
      baseSha: sha.main0,
      headSha: sha.feat1,
    });
    const error = await codeHostError(host.resolveRange('acme/api', 'main', 'nope'));
    expect(error.reason).toBe('not_found');
    expect(error.message).toBe(
      'range main..nope does not resolve in acme/api: head "nope" is not a branch, ref or commit',
    );
    double.rejections.length = 0; // GitHub's 422 for the unknown ref
  });

  it('files: text, binary, unicode paths, missing (null), and a bad ref', async () => {
    const files = await host.readFiles('acme/api', 'feature', [
      'src/app.ts',
      'assets/logo.bin',
      'src/ünïcode file.py',
      'docs/gone.md',
      'src',
    ]);
    const expected = await local.readFiles('acme/api', 'feature', [
      'src/app.ts',
      'assets/logo.bin',
      'src/ünïcode file.py',
    ]);
    expect(files.get('src/app.ts')).toEqual(expected.get('src/app.ts'));
    expect(files.get('assets/logo.bin')).toEqual(expected.get('assets/logo.bin'));
    expect(files.get('src/ünïcode file.py')?.toString()).toBe('def f():\n    return 1');
    expect(files.get('docs/gone.md')).toBeNull();
    expect(files.get('src')).toBeNull();
    expect(await host.readFile('acme/api', sha.main0 as string, 'docs/gone.md')).toEqual(
      Buffer.from('# gone\n'),
    );
    expect((await codeHostError(host.readFile('acme/api', 'no-such-ref', 'README.md'))).reason).toBe(
      'not_found',
    );
    expect((await codeHostError(host.readFile('acme/api', 'main', '../x'))).reason).toBe('invalid_input');
    double.rejections.length = 0; // 404s for the missing file and ref
  });
});

describe('diffs', () => {
  /** What both hosts must agree on (GitHub gives no file modes). */
  const comparable = (f: DiffFile) => ({ ...f, oldMode: null, newMode: null });

  it('parse compare patches into the same DiffFiles as the local host reads from git', async () => {
    const pr = await host.getPullRequest('acme/api', 7);
    const remote = await host.getDiff('acme/api', pr.mergeBaseSha as string, pr.headSha);
    const expected = await local.getDiff('acme/api', sha.main0 as string, sha.feat1 as string);
    expect(remote.base).toBe(sha.main0);
    expect(remote.head).toBe(sha.feat1);
    const byPath = (files: DiffFile[]) =>
      [...files].sort((a, b) => a.path.localeCompare(b.path)).map(comparable);
    expect(byPath(remote.files)).toEqual(byPath(expected.files));
    expect(remote.gaps).toEqual(expected.gaps);
    const kinds = Object.fromEntries(remote.files.map((f) => [f.path, f.change]));
    expect(kinds).toEqual({
      'assets/logo.bin': 'modified',
      'docs/gone.md': 'deleted',
      'src/app.ts': 'modified',
      'src/empty.txt': 'added',
      'src/new name.ts': 'renamed',
      'src/ünïcode file.py': 'added',
    });
    expect(remote.files.find((f) => f.path === 'assets/logo.bin')?.skipped?.code).toBe('binary_file');
    expect(remote.files.find((f) => f.path === 'src/app.ts')?.changedLines).toEqual([
      { start: 2, end: 3 },
      { start: 6, end: 6 },
    ]);
  });

  it('names files over the limits as file_too_large, like the local host', async () => {
    const limits = { maxFileChangedLines: 2 };
    const remote = await host.getDiff('acme/api', sha.main0 as string, sha.feat1 as string, limits);
    const expected = await local.getDiff('acme/api', sha.main0 as string, sha.feat1 as string, limits);
    expect(remote.files.find((f) => f.path === 'src/app.ts')?.skipped?.code).toBe('file_too_large');
    expect(remote.gaps.map((g) => g.code)).toEqual(expected.gaps.map((g) => g.code));
    expect(remote.files.map((f) => f.skipped?.code ?? null).sort()).toEqual(
      expected.files.map((f) => f.skipped?.code ?? null).sort(),
    );
  });

  it('a compare at the file cap is a diff_truncated gap, unless the pull request lists the rest', async () => {
    const pr = await host.getPullRequest('acme/api', 8);
    const capped = await host.getDiff('acme/api', pr.mergeBaseSha as string, pr.headSha);
    expect(capped.files).toHaveLength(COMPARE_CAP);
    expect(capped.gaps.map((g) => g.code)).toEqual(['diff_truncated']);
    double.resetLog();
    const full = await host.getDiff('acme/api', pr.mergeBaseSha as string, pr.headSha, undefined, {
      pullRequest: 8,
    });
    expect(full.files).toHaveLength(COMPARE_CAP + 3);
    expect(full.gaps).toEqual([]);
    expect(double.requestsTo('pulls/list-files').map((r) => r.query)).toEqual([
      { per_page: '100', page: '1' },
    ]);
  });
});

describe('writing', () => {
  it('a check is created, then updated by id, with the output mapped', async () => {
    const created = await host.postCheck('acme/api', {
      name: 'Service / Review',
      headSha: sha.feat1 as string,
      status: 'in_progress',
      title: 'Reviewing',
      summary: 'Started',
    });
    const updated = await host.postCheck('acme/api', {
      id: created.id,
      name: 'Service / Review',
      headSha: sha.feat1 as string,
      status: 'completed',
      conclusion: 'action_required',
      title: '1 P0 open',
      summary: 'Found a P0',
      text: 'fix prompt',
    });
    expect(updated.id).toBe(created.id);
    expect(created.url).toMatch(/^https:\/\/github\.com\/acme\/api\/runs\/\d+$/);
    const run = double.checkRuns.find((c) => String(c.id) === created.id);
    expect(run?.history).toEqual([
      { status: 'in_progress', conclusion: null, title: 'Reviewing', summary: 'Started' },
      { status: 'completed', conclusion: 'action_required', title: '1 P0 open', summary: 'Found a P0' },
    ]);
    expect(run?.output?.text).toBe('fix prompt');
    const bad = await codeHostError(
      host.postCheck('acme/api', {
        name: 'x',
        headSha: sha.feat1 as string,
        status: 'completed',
        title: 't',
        summary: 's',
      }),
    );
    expect(bad.reason).toBe('invalid_input');
    expect(double.requestsTo('checks/create')).toHaveLength(1);
  });

  it('a summary comment is posted and edited in place', async () => {
    const posted = await host.postComment('acme/api', { pullRequest: 7, body: 'Summary v1' });
    const edited = await host.postComment('acme/api', { id: posted.id, pullRequest: 7, body: 'Summary v2' });
    expect(edited.id).toBe(posted.id);
    const comment = double.issueComments.find((c) => String(c.id) === posted.id);
    expect(comment).toMatchObject({ issue_number: 7, body: 'Summary v2', edits: ['Summary v1'] });
    expect(posted.url).toMatch(/#issuecomment-\d+$/);
  });

  it('inline comments go out as reviews of at most 50, with ids in order; replies thread', async () => {
    const comments = Array.from({ length: REVIEW_COMMENT_BATCH * 2 + 3 }, (_, i) => ({
      path: 'src/app.ts',
      line: i % 2 === 0 ? 3 : 6,
      ...(i % 4 === 0 ? { startLine: 2 } : {}),
      body: `finding ${i}`,
    }));
    const posted = await host.postReview('acme/api', {
      pullRequest: 7,
      commitSha: sha.feat1 as string,
      body: 'svc found 103 things',
      comments,
    });
    expect(posted.reviews).toHaveLength(3);
    expect(double.requestsTo('pulls/create-review')).toHaveLength(3);
    const reviews = double.reviews.filter((r) => posted.reviews.some((p) => p.id === String(r.id)));
    expect(reviews.map((r) => r.comment_ids.length)).toEqual([50, 50, 3]);
    expect(reviews.every((r) => r.event === 'COMMENT')).toBe(true);
    expect(posted.comments).toHaveLength(comments.length);
    posted.comments.forEach((c, i) => {
      const record = double.reviewComments.find((r) => String(r.id) === c.id);
      expect(record?.body).toBe(`finding ${i}`);
    });
    const first = double.reviewComments.find((r) => String(r.id) === posted.comments[0]?.id);
    expect(first).toMatchObject({ line: 3, start_line: 2, side: 'RIGHT', commit_id: sha.feat1 });

    const reply = await host.postComment('acme/api', {
      pullRequest: 7,
      body: 'wontfix: intended',
      inReplyTo: posted.comments[0]?.id as string,
    });
    expect(double.reviewComments.find((r) => String(r.id) === reply.id)?.in_reply_to_id).toBe(
      Number(posted.comments[0]?.id),
    );

    const single = await host.postComment('acme/api', {
      pullRequest: 7,
      body: 'one inline',
      path: 'src/app.ts',
      line: 2,
      endLine: 3,
      commitSha: sha.feat1 as string,
    });
    expect(double.reviewComments.find((r) => String(r.id) === single.id)).toMatchObject({
      start_line: 2,
      line: 3,
    });
  });

  it('a review whose comments cannot be read back is still reported, each comment under its id', async () => {
    double.resetLog();
    double.serverErrorNext(10, { match: (r) => r.operationId === 'pulls/list-comments-for-review' });
    const posted = await host.postReview('acme/api', {
      pullRequest: 7,
      commitSha: sha.feat1 as string,
      body: 'svc found 2 things',
      comments: [
        { path: 'src/app.ts', line: 3, body: 'first' },
        { path: 'src/app.ts', line: 6, body: 'second' },
      ],
    });
    // Posted once, not failed: the caller records both, so a re-run does not post them again.
    expect(double.requestsTo('pulls/create-review')).toHaveLength(1);
    expect(posted.comments).toEqual([
      { id: posted.id, url: null },
      { id: posted.id, url: null },
    ]);
    const readBacks = double.requestsTo('pulls/list-comments-for-review');
    expect(readBacks.length).toBeGreaterThan(0);
    expect(readBacks.every((r) => r.status === 502)).toBe(true);
    double.resetLog();
  });

  it("a line outside the diff is GitHub's 422: invalid_input with GitHub's message", async () => {
    const error = await codeHostError(
      host.postReview('acme/api', {
        pullRequest: 7,
        commitSha: sha.feat1 as string,
        body: 'x',
        comments: [{ path: 'README.md', line: 1, body: 'not in this pull request' }],
      }),
    );
    expect(error.reason).toBe('invalid_input');
    expect(error.message).toMatch(/422.*Path could not be resolved/);
    expect(double.rejections).toHaveLength(1);
    double.rejections.length = 0;
  });

  it('a draft pull request is opened from an existing branch', async () => {
    gitIn(api, ['branch', 'svc/plan-1', sha.feat1 as string]);
    const opened = await host.openDraftPullRequest('acme/api', {
      title: 'Plan 1',
      body: 'plan',
      baseRef: 'main',
      headRef: 'svc/plan-1',
    });
    expect(opened.url).toBe(`https://github.com/acme/api/pull/${opened.number}`);
    expect(opened.id).toBe(String(opened.number));
    expect(await host.getPullRequest('acme/api', opened.number)).toMatchObject({
      draft: true,
      title: 'Plan 1',
      headRef: 'svc/plan-1',
    });
    const missing = await codeHostError(
      host.openDraftPullRequest('acme/api', { title: 't', body: 'b', baseRef: 'main', headRef: 'no-branch' }),
    );
    expect(missing.reason).toBe('invalid_input');
    expect(missing.message).toMatch(/Validation Failed: head invalid/);
    double.rejections.length = 0;
  });
});

describe('commits on new branches', () => {
  const show = (ref: string, format: string) => gitIn(api, ['show', '-s', `--format=${format}`, ref]).trim();

  it('one commit on base with the files, through a tree with inline content, on a new branch', async () => {
    // A base with an executable file, off main, so other tests' branches are untouched.
    gitIn(api, ['checkout', '-q', '-b', 'tools', sha.main1 as string]);
    writeFileSync(join(api, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
    const base = commitFiles(api, {}, 'add run.sh');
    gitIn(api, ['checkout', '-q', 'main']);
    const { commit } = await host.commitToNewBranch('acme/api', {
      branch: 'svc/quick-1',
      baseSha: base,
      message: 'Fix the P1 in src/app.ts',
      files: [
        { path: 'src/app.ts', content: 'export const a = 2;\r\n' },
        { path: 'src/deep/new ü.ts', content: 'export {};\n' },
        { path: 'run.sh', content: '#!/bin/sh\necho fixed\n' },
      ],
    });
    expect(gitIn(api, ['rev-parse', 'refs/heads/svc/quick-1']).trim()).toBe(commit);
    expect(show(commit, '%P')).toBe(base);
    expect(show(commit, '%B')).toBe('Fix the P1 in src/app.ts');
    expect(show(commit, '%an')).toBe('svc-test[bot]');
    expect(gitIn(api, ['cat-file', 'blob', `${commit}:src/app.ts`])).toBe('export const a = 2;\r\n');
    expect(gitIn(api, ['cat-file', 'blob', `${commit}:src/deep/new ü.ts`])).toBe('export {};\n');
    expect(
      gitIn(api, ['-c', 'core.quotepath=off', 'diff', '--name-status', base, commit]).trim().split('\n'),
    ).toEqual(['M\trun.sh', 'M\tsrc/app.ts', 'A\tsrc/deep/new ü.ts']);
    expect(gitIn(api, ['ls-tree', commit, '--', 'run.sh']).split(' ')[0]).toBe('100755');
    // The blobs travel inside the one tree write; the base tree is its base.
    const [tree] = double.requestsTo('git/create-tree');
    expect(tree?.body).toMatchObject({
      base_tree: gitIn(api, ['rev-parse', `${base}^{tree}`]).trim(),
      tree: expect.arrayContaining([
        { path: 'run.sh', mode: '100755', type: 'blob', content: '#!/bin/sh\necho fixed\n' },
      ]),
    });
    // Three writes in all, whatever the number of files: no blob is written on its own.
    expect(
      double.requests
        .filter((r) => r.method !== 'GET' && !r.path.startsWith('/app'))
        .map((r) => r.operationId),
    ).toEqual(['git/create-tree', 'git/create-commit', 'git/create-ref']);
  });

  it('refuses a branch that exists: invalid_input, and the branch stays where it was', async () => {
    const error = await codeHostError(
      host.commitToNewBranch('acme/api', {
        branch: 'feature',
        baseSha: sha.main1 as string,
        message: 'm',
        files: [{ path: 'a.txt', content: 'a\n' }],
      }),
    );
    expect(error.reason).toBe('invalid_input');
    expect(error.message).toMatch(/branch feature of acme\/api: .*422.*Reference already exists/);
    expect(gitIn(api, ['rev-parse', 'refs/heads/feature']).trim()).toBe(sha.feat1);
    double.rejections.length = 0;
  });

  it('with no files is an empty commit on the same tree; a draft pull request opens from it', async () => {
    const { commit } = await host.commitToNewBranch('acme/api', {
      branch: 'svc/plan-2',
      baseSha: sha.main1 as string,
      message: 'Plan 2',
      files: [],
    });
    expect(show(commit, '%P %T')).toBe(`${sha.main1} ${show(sha.main1 as string, '%T')}`);
    expect(double.requestsTo('git/create-tree')).toEqual([]);
    const opened = await host.openDraftPullRequest('acme/api', {
      title: 'Plan 2',
      body: 'the plan',
      baseRef: 'main',
      headRef: 'svc/plan-2',
    });
    expect(await host.getPullRequest('acme/api', opened.number)).toMatchObject({
      draft: true,
      headRef: 'svc/plan-2',
      headSha: commit,
      baseSha: sha.main1,
    });
  });

  it('an unknown base is not_found; bad names and paths are refused before any request', async () => {
    const input = { branch: 'svc/x', baseSha: 'f'.repeat(40), message: 'm', files: [] };
    const unknown = await codeHostError(host.commitToNewBranch('acme/api', input));
    expect(unknown.reason).toBe('not_found');
    expect(unknown.message).toContain(`base commit ${'f'.repeat(40)} of acme/api`);
    double.resetLog();
    for (const change of [
      { branch: 'a..b' },
      { baseSha: 'main' },
      { files: [{ path: '.git/config', content: 'x' }] },
      { files: [{ path: '../x', content: 'x' }] },
    ]) {
      const error = await codeHostError(host.commitToNewBranch('acme/api', { ...input, ...change }));
      expect(error.reason).toBe('invalid_input');
    }
    expect(double.requests).toEqual([]);
    // A directory of the base tree is found by reading it, before anything is written.
    const dir = await codeHostError(
      host.commitToNewBranch('acme/api', {
        ...input,
        baseSha: sha.main1 as string,
        files: [{ path: 'src', content: 'x' }],
      }),
    );
    expect(dir.message).toMatch(/"src": it is a directory/);
    expect(double.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('required status checks', () => {
  afterEach(() => {
    double.setAdministrationPermission(INSTALLATION, 'write');
    for (const branch of ['main', 'feature', 'svc/plan-1'])
      double.setBranchProtection('acme/api', branch, null);
  });

  it('reads [] when nothing is required, the names when some are, null when GitHub will not say', async () => {
    expect(await host.requiredStatusChecks('acme/api', 'main')).toEqual([]);
    double.setBranchProtection('acme/api', 'main', { contexts: null });
    expect(await host.requiredStatusChecks('acme/api', 'main')).toEqual([]);
    double.setBranchProtection('acme/api', 'svc/plan-1', {
      contexts: ['lint'],
      checks: [{ context: 'ci / test', app_id: 15368 }],
    });
    expect(await host.requiredStatusChecks('acme/api', 'svc/plan-1')).toEqual(['ci / test', 'lint']);
    double.setAdministrationPermission(INSTALLATION, 'none');
    expect(await host.requiredStatusChecks('acme/api', 'svc/plan-1')).toBeNull();
    double.setAdministrationPermission(INSTALLATION, 'write');
    // A 403 that is a rate limit is not a missing permission: it is unavailable, not "cannot tell".
    double.rateLimitNext(1, { resetInSeconds: 3600 });
    expect((await codeHostError(host.requiredStatusChecks('acme/api', 'svc/plan-1'))).reason).toBe(
      'unavailable',
    );
    const missing = await codeHostError(host.requiredStatusChecks('acme/api', 'no-such-branch'));
    expect(missing.reason).toBe('not_found');
    expect(missing.message).toMatch(/Branch not found/);
    expect(double.rejections).toEqual([]);
  });

  it('adds a check while keeping the others, their apps and the rest of the rule; once', async () => {
    await host.postCheck('acme/api', {
      name: 'Service / Review',
      headSha: sha.main1 as string,
      status: 'queued',
      title: 't',
      summary: 's',
    });
    double.setBranchProtection('acme/api', 'main', {
      contexts: ['lint'],
      checks: [{ context: 'ci / test', app_id: 15368 }],
      strict: true,
      settings: { enforce_admins: true },
    });
    await host.requireStatusCheck('acme/api', 'main', 'Service / Review');
    expect(double.branchProtection('acme/api', 'main')).toEqual({
      requiredStatusChecks: {
        strict: true,
        checks: [
          { context: 'ci / test', app_id: 15368 },
          { context: 'lint', app_id: null },
          // Named without an app: GitHub pins it to the App that reported it (svc's).
          { context: 'Service / Review', app_id: APP_ID },
        ],
      },
      settings: { enforce_admins: true },
    });
    expect(double.requestsTo('repos/update-branch-protection')).toEqual([]);
    expect(await host.requiredStatusChecks('acme/api', 'main')).toEqual([
      'ci / test',
      'lint',
      'Service / Review',
    ]);
    await host.requireStatusCheck('acme/api', 'main', 'Service / Review');
    expect(double.requestsTo('repos/update-status-check-protection')).toHaveLength(1);
  });

  it('protects an unprotected branch with only that check', async () => {
    await host.requireStatusCheck('acme/api', 'svc/plan-1', 'Service / Review');
    expect(double.branchProtection('acme/api', 'svc/plan-1')?.requiredStatusChecks).toMatchObject({
      strict: false,
      checks: [{ context: 'Service / Review' }],
    });
    expect(double.requestsTo('repos/update-branch-protection')[0]?.body).toEqual({
      required_status_checks: { strict: false, contexts: ['Service / Review'] },
      enforce_admins: null,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    expect(await host.requiredStatusChecks('acme/api', 'svc/plan-1')).toEqual(['Service / Review']);
  });

  it('refuses a rule without status checks, and a missing permission, changing nothing', async () => {
    double.setBranchProtection('acme/api', 'main', { contexts: null, settings: { enforce_admins: true } });
    const off = await codeHostError(host.requireStatusCheck('acme/api', 'main', 'Service / Review'));
    expect(off.reason).toBe('failed');
    expect(off.message).toMatch(/requires no status checks.*Require status checks to pass/);
    expect(double.branchProtection('acme/api', 'main')).toEqual({
      requiredStatusChecks: null,
      settings: { enforce_admins: true },
    });
    double.setBranchProtection('acme/api', 'feature', { contexts: ['lint'] });
    for (const level of ['read', 'none'] as const) {
      double.setAdministrationPermission(INSTALLATION, level);
      const denied = await codeHostError(host.requireStatusCheck('acme/api', 'feature', 'Service / Review'));
      expect(denied.reason).toBe('failed');
      expect(denied.message).toMatch(/403: Resource not accessible by integration.*"administration: write"/);
    }
    expect(double.branchProtection('acme/api', 'feature')?.requiredStatusChecks?.checks).toEqual([
      { context: 'lint', app_id: null },
    ]);
    expect(double.requests.filter((r) => r.method !== 'GET' && r.status < 400)).toEqual([]);
    expect(double.rejections).toEqual([]);
  });
});

describe('the local host speaks the same CodeHost', () => {
  it('records a review and its comments in comments.jsonl, and edits a summary by id', async () => {
    gitIn(api, ['update-ref', 'refs/pull/7/head', sha.feat1 as string]);
    const review = await local.postReview('acme/api', {
      pullRequest: 7,
      commitSha: sha.feat1 as string,
      body: 'svc review',
      comments: [
        { path: 'src/app.ts', line: 3, startLine: 2, body: 'a' },
        { path: 'src/app.ts', line: 6, body: 'b' },
      ],
    });
    expect(review.reviews).toEqual([{ id: review.id, url: null }]);
    const summary = await local.postComment('acme/api', { pullRequest: 7, body: 'v1' });
    await local.postComment('acme/api', { id: summary.id, pullRequest: 7, body: 'v2' });
    const records = await local.localRecords<Record<string, unknown>>('acme/api', 'comments');
    expect(
      records.filter((r) => r.review_id === review.id).map((r) => [r.id, r.line, r.end_line, r.body]),
    ).toEqual([
      [review.comments[0]?.id, 2, 3, 'a'],
      [review.comments[1]?.id, 6, 6, 'b'],
    ]);
    expect(records.filter((r) => r.id === summary.id).map((r) => r.body)).toEqual(['v1', 'v2']);
    expect(
      (await codeHostError(local.postComment('acme/api', { id: 'nope', pullRequest: 7, body: 'x' }))).reason,
    ).toBe('not_found');
  });
});

describe('rate limits and failures', () => {
  it('a secondary limit is waited out for as long as retry-after says, then retried once', async () => {
    await host.defaultBranch('acme/api'); // token in hand
    double.resetLog();
    double.secondaryLimitNext(1, { retryAfterSeconds: 1 });
    const started = Date.now();
    expect(await host.defaultBranch('acme/api')).toBe('main');
    const [first, second] = double.requests;
    expect(double.requests.map((r) => r.status)).toEqual([403, 200]);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('a 429 secondary limit is handled the same way', async () => {
    double.secondaryLimitNext(1, { retryAfterSeconds: 1, status: 429 });
    expect(await host.defaultBranch('acme/api')).toBe('main');
    expect(double.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('a primary limit waits until x-ratelimit-reset; exhausted, it is unavailable with the reset time', async () => {
    double.rateLimitNext(1, { resetInSeconds: 1 });
    expect(await host.defaultBranch('acme/api')).toBe('main');
    const [first, second] = double.requests;
    expect(double.requests.map((r) => r.status)).toEqual([403, 200]);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(900);
    double.resetLog();

    double.rateLimitNext(10, { resetInSeconds: 0 });
    const error = await codeHostError(host.defaultBranch('acme/api'));
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(/rate limit exhausted after retries .*resets at \d{4}-\d\d-\d\dT/);
    expect(double.requests).toHaveLength(3); // the request and two retries, no more
  });

  it('a wait longer than the cap is not sat out: one request, then unavailable', async () => {
    double.secondaryLimitNext(1, { retryAfterSeconds: 600 });
    const started = Date.now();
    const error = await codeHostError(host.defaultBranch('acme/api'));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(/GitHub asks to wait 600 s/);
    expect(double.requests).toHaveLength(1);
  });

  it('5xx is retried a bounded number of times', async () => {
    double.serverErrorNext(2);
    expect(await host.defaultBranch('acme/api')).toBe('main');
    expect(double.requests.map((r) => r.status)).toEqual([502, 502, 200]);
    double.resetLog();
    double.serverErrorNext(10, { status: 503 });
    const error = await codeHostError(host.defaultBranch('acme/api'));
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(/GitHub is unavailable \(503/);
    expect(double.requests).toHaveLength(3);
  });

  it('401 and 403 are token or permission problems, named; never retried', async () => {
    double.failNext(1, { status: 403, message: 'Resource not accessible by integration' });
    const forbidden = await codeHostError(
      host.postCheck('acme/api', {
        name: 'x',
        headSha: sha.feat1 as string,
        status: 'queued',
        title: 't',
        summary: 's',
      }),
    );
    expect(forbidden.reason).toBe('unavailable');
    expect(forbidden.message).toMatch(/denied permission \(403: Resource not accessible by integration\)/);
    double.failNext(1, { status: 401, message: 'Bad credentials' });
    const unauthorized = await codeHostError(host.defaultBranch('acme/api'));
    expect(unauthorized.reason).toBe('unavailable');
    expect(unauthorized.message).toMatch(/rejected the installation token \(401: Bad credentials\)/);
    expect(double.requests.map((r) => r.status)).toEqual([403, 401]);
  });
});
