/** The local code host on real repositories: pull requests, ranges, files, and what it records. */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeHosts } from '../../src/codehost';
import { LocalCodeHost, type LocalPullRecord, unreadableReason } from '../../src/codehost/local/local-host';
import { CodeHostError } from '../../src/codehost/types';
import { commitAll, commitFiles, gitIn, makeBareClone, makeRepo, makeReposDir } from '../helpers/git';

let reposDir: string;
let host: LocalCodeHost;
let api: string;
/** Commits on acme/api: main0 ← fork ← (main1 on main) and (feat1 ← feat2 on feature). */
const sha: Record<string, string> = {};

const rev = (dir: string, ref: string) => gitIn(dir, ['rev-parse', ref]).trim();

/** Gives a directory tree to another owner (root only). */
function chownTree(dir: string, uid: number) {
  chownSync(dir, uid, uid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chownTree(path, uid);
    else chownSync(path, uid, uid);
  }
}

async function codeHostError(promise: Promise<unknown>): Promise<CodeHostError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodeHostError);
  return error as CodeHostError;
}

beforeAll(() => {
  reposDir = makeReposDir();
  host = new LocalCodeHost(reposDir);
  api = makeRepo(reposDir, 'acme/api', { 'src/app.ts': 'export const a = 1;\n', 'README.md': '# api\n' });
  sha.main0 = rev(api, 'HEAD');
  gitIn(api, ['checkout', '-q', '-b', 'feature']);
  sha.feat1 = commitFiles(api, { 'src/app.ts': 'export const a = 1;\nexport const b = 2;\n' }, 'add b');
  sha.feat2 = commitFiles(api, { 'src/new file.ts': 'export {};\n' }, 'Add the new file');
  gitIn(api, ['checkout', '-q', 'main']);
  sha.main1 = commitFiles(api, { 'README.md': '# api\n\nmore\n' }, 'docs');
  // PR 7: head and base refs; PR 8: head only (base = default branch).
  gitIn(api, ['update-ref', 'refs/pull/7/head', sha.feat2 as string]);
  gitIn(api, ['update-ref', 'refs/pull/7/base', sha.main0 as string]);
  gitIn(api, ['update-ref', 'refs/pull/8/head', sha.feat1 as string]);
});
afterAll(() => rmSync(reposDir, { recursive: true, force: true }));

describe('repositories', () => {
  it('finds work trees, bare repositories and repo.git; refuses names that escape the dir', async () => {
    makeBareClone(reposDir, api, 'acme/bare.git');
    makeBareClone(reposDir, api, 'acme/plainbare');
    expect(await host.repositoryExists('acme/api')).toBe(true);
    expect(await host.repositoryExists('acme/bare')).toBe(true);
    expect(await host.repositoryExists('acme/plainbare')).toBe(true);
    expect(await host.repositoryExists('acme/missing')).toBe(false);
    for (const bad of ['../acme', 'acme/..', 'acme/../api', '/etc/passwd', 'acme', 'a/b/c', '']) {
      expect(await host.repositoryExists(bad)).toBe(false);
    }
  });

  it('a missing repository is not_found on every operation', async () => {
    // Started one at a time: a rejection waiting for its turn would be reported as unhandled.
    const calls: (() => Promise<unknown>)[] = [
      () => host.defaultBranch('acme/nope'),
      () => host.getPullRequest('acme/nope', 1),
      () => host.resolveRange('acme/nope', 'main', 'feature'),
      () => host.getDiff('acme/nope', 'main', 'feature'),
      () => host.readFile('acme/nope', 'main', 'a.txt'),
      () => host.readTree('acme/nope'),
      () =>
        host.commitToNewBranch('acme/nope', {
          branch: 'b',
          baseSha: 'a'.repeat(40),
          message: 'm',
          files: [],
        }),
      () => host.requiredStatusChecks('acme/nope', 'main'),
      () => host.requireStatusCheck('acme/nope', 'main', 'c'),
    ];
    for (const call of calls) {
      const error = await codeHostError(call());
      expect(error.reason).toBe('not_found');
      expect(error.message).toContain('acme/nope');
    }
  });

  it('a directory git cannot open is unreadable, by name and with the remedy that fits, not missing', async () => {
    mkdirSync(join(reposDir, 'acme', 'plain'), { recursive: true });
    writeFileSync(join(reposDir, 'acme', 'plain', 'notes.txt'), 'not a repository\n');
    const plain = await codeHostError(host.repositoryExists('acme/plain'));
    expect(plain.reason).toBe('unreadable');
    expect(plain.message).toContain('not a git repository');
    expect(plain.message).toContain('git clone --mirror');
    expect(plain.message).not.toContain('SVC_REPOS_DIR');
    const diff = await codeHostError(host.getDiff('acme/plain', 'main', 'feature'));
    expect(diff.reason).toBe('unreadable');
    // A sound repo.git beside the plain directory is the repository.
    makeBareClone(reposDir, api, 'acme/plain.git');
    expect(await host.repositoryExists('acme/plain')).toBe(true);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a repository owned by another user names git’s ownership refusal and safe.directory',
    async () => {
      const theirs = makeRepo(reposDir, 'acme/theirs', { 'a.txt': 'a\n' });
      chownTree(theirs, 65534);
      // No global configuration that might already trust every directory.
      const global = process.env.GIT_CONFIG_GLOBAL;
      process.env.GIT_CONFIG_GLOBAL = '/dev/null';
      try {
        const error = await codeHostError(host.readTree('acme/theirs'));
        expect(error.reason).toBe('unreadable');
        expect(error.message).toContain('dubious ownership');
        expect(error.message).toContain(`git config --global --add safe.directory ${theirs}`);
      } finally {
        if (global === undefined) delete process.env.GIT_CONFIG_GLOBAL;
        else process.env.GIT_CONFIG_GLOBAL = global;
        chownTree(theirs, 0);
      }
    },
  );

  it('tells permission, ownership and other refusals apart', () => {
    const dir = '/srv/repos/acme/x';
    expect(
      unreadableReason('acme/x', dir, { stderr: "fatal: cannot chdir to '/srv': Permission denied" }),
    ).toMatch(/not allowed to read it .*read and execute permission/);
    expect(
      unreadableReason('acme/x', dir, { stderr: 'fatal: not a git repository (or any parent)' }),
    ).toContain('not a git repository');
    expect(unreadableReason('acme/x', dir, { stderr: 'fatal: bad config line 1 in file config' })).toBe(
      `repository acme/x at ${dir} cannot be read by git (fatal: bad config line 1 in file config). Check it with: git -C ${dir} status`,
    );
  });

  it('default branch: what the repository declares, never the branch checked out in a work tree', async () => {
    expect(await host.defaultBranch('acme/api')).toBe('main');
    const other = makeRepo(reposDir, 'acme/trunk', { 'a.txt': 'a\n' });
    gitIn(other, ['branch', '-m', 'main', 'trunk']);
    gitIn(other, ['checkout', '-q', '-b', 'topic']);
    // Only checked-out branches name trunk or topic: nothing declares one.
    let error = await codeHostError(host.defaultBranch('acme/trunk'));
    expect(error.reason).toBe('not_found');
    expect(error.message).toMatch(/declares no default branch.*never counts/);
    // main or master, when one exists, is the guess.
    gitIn(other, ['branch', 'master', 'trunk']);
    expect(await host.defaultBranch('acme/trunk')).toBe('master');
    // init.defaultBranch declares it (a branch that exists), over the guess.
    gitIn(other, ['config', 'init.defaultBranch', 'trunk']);
    expect(await host.defaultBranch('acme/trunk')).toBe('trunk');
    // origin/HEAD declares it over init.defaultBranch; origin's branch counts without a local one.
    gitIn(other, ['update-ref', 'refs/remotes/origin/develop', 'trunk']);
    gitIn(other, ['symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/develop']);
    expect(await host.defaultBranch('acme/trunk')).toBe('develop');
    // A bare repository's HEAD is its declaration; the checked-out topic in the work tree never was.
    const bare = makeBareClone(reposDir, other, 'acme/trunk-mirror.git');
    gitIn(bare, ['symbolic-ref', 'HEAD', 'refs/heads/trunk']);
    expect(await host.defaultBranch('acme/trunk-mirror')).toBe('trunk');
    gitIn(other, ['branch', '-D', 'master']);
    gitIn(other, ['config', '--unset', 'init.defaultBranch']);
    gitIn(other, ['symbolic-ref', '-d', 'refs/remotes/origin/HEAD']);
    error = await codeHostError(host.defaultBranch('acme/trunk'));
    expect(error.reason).toBe('not_found');
  });

  it("the project's setting names the default branch over anything the repository declares", async () => {
    const repo = makeRepo(reposDir, 'acme/configured', { 'a.txt': 'a\n' });
    gitIn(repo, ['branch', 'develop']);
    const configured = new LocalCodeHost(reposDir, {
      configuredDefaultBranch: async (name) => (name === 'acme/configured' ? 'develop' : null),
    });
    expect(await configured.defaultBranch('acme/configured')).toBe('develop');
    // A setting naming no existing branch declares nothing: the repository's own answer stands.
    const missing = new LocalCodeHost(reposDir, { configuredDefaultBranch: async () => 'gone' });
    expect(await missing.defaultBranch('acme/configured')).toBe('main');
  });
});

describe('pull requests', () => {
  it('with refs/pull/N/base: that base, and the merge base for the diff', async () => {
    const pr = await host.getPullRequest('acme/api', 7);
    expect(pr).toEqual({
      number: 7,
      // Its first commit's subject (of 'add b', 'Add the new file'): no record names a title.
      title: 'add b',
      baseRef: 'refs/pull/7/base',
      headRef: 'refs/pull/7/head',
      baseSha: sha.main0,
      headSha: sha.feat2,
      mergeBaseSha: sha.main0,
      draft: false,
      author: 'svc test',
    });
  });

  it('opened by creating its ref: titled by its first commit, a title new pushes do not change', async () => {
    const repo = makeRepo(reposDir, 'acme/titles', { 'a.txt': 'a\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'topic']);
    commitFiles(repo, { 'b.txt': 'b\n' }, 'Start the topic');
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/head', 'refs/heads/topic']);
    const opened = await host.getPullRequest('acme/titles', 1);
    expect(opened.title).toBe('Start the topic');
    gitIn(repo, ['checkout', '-q', 'topic']);
    const pushed = commitFiles(repo, { 'c.txt': 'c\n' }, 'Address the review');
    const later = await host.getPullRequest('acme/titles', 1);
    expect(later).toMatchObject({ headSha: pushed, title: 'Start the topic' });
  });

  it('without refs/pull/N/base: the default branch, diffed from the merge base as GitHub shows it', async () => {
    const pr = await host.getPullRequest('acme/api', 8);
    expect(pr).toMatchObject({
      number: 8,
      title: 'add b',
      baseRef: 'main',
      baseSha: sha.main1,
      headSha: sha.feat1,
      mergeBaseSha: sha.main0,
    });
    const diff = await host.getDiff('acme/api', pr.mergeBaseSha as string, pr.headSha);
    // Only the pull request's change, not main's README edit made after the fork.
    expect(diff.files.map((f) => [f.path, f.changedLines])).toEqual([['src/app.ts', [{ start: 2, end: 2 }]]]);
    const twoPoint = await host.getDiff('acme/api', pr.baseSha, pr.headSha);
    expect(twoPoint.files.map((f) => f.path)).toEqual(['README.md', 'src/app.ts']);
  });

  it('a missing pull request is not_found, naming the ref', async () => {
    const error = await codeHostError(host.getPullRequest('acme/api', 70));
    expect(error.reason).toBe('not_found');
    // Where svc looked, and how a local pull request is opened.
    expect(error.message).toBe(
      `pull request 70 not found in acme/api: no refs/pull/70/head in ${join(reposDir, 'acme/api')} ` +
        `(SVC_REPOS_DIR is ${reposDir}); open it there with \`git symbolic-ref refs/pull/70/head refs/heads/<branch>\``,
    );
    await expect(host.requirePullRequest('acme/api', 70)).rejects.toThrow(error.message);
    await expect(host.requirePullRequest('acme/api', 7)).resolves.toBeUndefined();
    expect((await codeHostError(host.getPullRequest('acme/api', 0))).reason).toBe('invalid_input');
    expect((await codeHostError(host.getPullRequest('acme/api', 1.5))).reason).toBe('invalid_input');
  });

  it('with the pull request branch checked out: still based on the declared default branch', async () => {
    const repo = makeRepo(reposDir, 'acme/editing', { 'src/app.ts': 'export const a = 1;\n' });
    const main = rev(repo, 'main');
    gitIn(repo, ['checkout', '-q', '-b', 'fix']);
    const head = commitFiles(repo, { 'src/app.ts': 'export const a = 2;\n' }, 'fix a');
    gitIn(repo, ['symbolic-ref', 'refs/pull/4/head', 'refs/heads/fix']);
    // The person stays on the branch they are editing.
    const pr = await host.getPullRequest('acme/editing', 4);
    expect(pr).toMatchObject({ baseRef: 'main', baseSha: main, headSha: head, mergeBaseSha: main });
    const diff = await host.getDiff('acme/editing', pr.mergeBaseSha as string, pr.headSha);
    expect(diff.files.map((f) => f.path)).toEqual(['src/app.ts']);
    // The repository's tree is the default branch's, not the checked-out one's.
    expect(await host.readTree('acme/editing')).toMatchObject({ ref: 'main', commit: main });
  });

  it('in a bare repository', async () => {
    const bare = join(reposDir, 'acme/bare.git');
    if (!existsSync(bare)) makeBareClone(reposDir, api, 'acme/bare.git');
    gitIn(bare, ['update-ref', 'refs/pull/3/head', sha.feat2 as string]);
    const pr = await host.getPullRequest('acme/bare', 3);
    expect(pr).toMatchObject({
      baseRef: 'main',
      baseSha: sha.main1,
      headSha: sha.feat2,
      mergeBaseSha: sha.main0,
    });
    const diff = await host.getDiff('acme/bare', pr.mergeBaseSha as string, pr.headSha);
    expect(diff.files.map((f) => [f.path, f.change, f.changedLines])).toEqual([
      ['src/app.ts', 'modified', [{ start: 2, end: 2 }]],
      ['src/new file.ts', 'added', [{ start: 1, end: 1 }]],
    ]);
    expect((await host.readFile('acme/bare', pr.headSha, 'src/new file.ts'))?.toString()).toBe(
      'export {};\n',
    );
  });
});

describe('ranges', () => {
  it('by branch names and by commit ids (full and abbreviated)', async () => {
    const byName = await host.resolveRange('acme/api', 'main', 'feature');
    expect(byName).toEqual({
      base: 'main',
      head: 'feature',
      baseSha: sha.main1,
      headSha: sha.feat2,
      mergeBaseSha: sha.main0,
    });
    const byId = await host.resolveRange('acme/api', sha.main0 as string, (sha.feat1 as string).slice(0, 10));
    expect(byId).toMatchObject({ baseSha: sha.main0, headSha: sha.feat1, mergeBaseSha: sha.main0 });
    const diff = await host.getDiff('acme/api', 'main', 'feature');
    expect(diff.base).toBe(sha.main1);
    expect(diff.head).toBe(sha.feat2);
  });

  it('a range that does not resolve is not_found naming which end', async () => {
    const head = await codeHostError(host.resolveRange('acme/api', 'main', 'no-such-branch'));
    expect(head.reason).toBe('not_found');
    expect(head.message).toContain('head "no-such-branch"');
    expect(head.message).not.toContain('base "main"');
    const base = await codeHostError(host.resolveRange('acme/api', 'deadbeef', 'main'));
    expect(base.message).toContain('base "deadbeef"');
    const both = await codeHostError(host.getDiff('acme/api', 'x1', 'x2'));
    expect(both.message).toContain('base "x1" and head "x2" are not');
  });

  it('refs that git could read as options are invalid input', async () => {
    for (const bad of ['--output=/tmp/x', '-p', '', 'a\nb']) {
      const error = await codeHostError(host.resolveRange('acme/api', bad, 'main'));
      expect(error.reason).toBe('invalid_input');
    }
    expect(existsSync('/tmp/x')).toBe(false);
  });
});

describe('files', () => {
  it('reads a file at a ref; null when absent or a directory', async () => {
    expect((await host.readFile('acme/api', 'feature', 'src/app.ts'))?.toString()).toBe(
      'export const a = 1;\nexport const b = 2;\n',
    );
    expect((await host.readFile('acme/api', 'main', 'src/app.ts'))?.toString()).toBe('export const a = 1;\n');
    expect(await host.readFile('acme/api', 'main', 'src/new file.ts')).toBeNull();
    expect(await host.readFile('acme/api', 'main', 'src')).toBeNull();
    expect((await codeHostError(host.readFile('acme/api', 'nope', 'src/app.ts'))).reason).toBe('not_found');
  });

  it('refuses path traversal and absolute paths', async () => {
    for (const bad of ['../x', 'src/../../x', '/etc/passwd', './src/app.ts', 'src//app.ts', '', 'src/']) {
      const error = await codeHostError(host.readFile('acme/api', 'main', bad));
      expect(error.reason).toBe('invalid_input');
    }
  });

  it('reads many files through one batch: bytes exact, binary and odd names included', async () => {
    const repo = makeRepo(reposDir, 'acme/files', { 'a.txt': 'a\n' });
    const names = ['a.txt', 'sp ace/ü.md', 'bin.dat', 'line\nbreak.txt', 'empty', ' lead.txt'];
    const head = commitFiles(repo, {
      'sp ace/ü.md': 'unicode ✓\n',
      'bin.dat': Buffer.from([0, 255, 10, 13, 0]),
      'line\nbreak.txt': 'nl\n',
      empty: '',
      ' lead.txt': 'lead\n',
    });
    const got = await host.readFiles('acme/files', head, [...names, 'missing.txt', 'sp ace']);
    expect(got.get('a.txt')?.toString()).toBe('a\n');
    expect(got.get('sp ace/ü.md')?.toString()).toBe('unicode ✓\n');
    expect(got.get('bin.dat')).toEqual(Buffer.from([0, 255, 10, 13, 0]));
    expect(got.get('line\nbreak.txt')?.toString()).toBe('nl\n');
    expect(got.get('empty')).toEqual(Buffer.alloc(0));
    expect(got.get(' lead.txt')?.toString()).toBe('lead\n');
    expect(got.get('missing.txt')).toBeNull();
    expect(got.get('sp ace')).toBeNull();
    expect(got.size).toBe(names.length + 2);
  });

  it('reads 1,000 files in one call', async () => {
    const repo = makeRepo(reposDir, 'acme/many', { 'seed.txt': 's\n' });
    const files = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`d/f${i}.ts`, `export const v = ${i};\n`]),
    );
    const head = commitFiles(repo, files);
    const got = await host.readFiles('acme/many', head, Object.keys(files));
    expect(got.size).toBe(1000);
    expect(got.get('d/f999.ts')?.toString()).toBe('export const v = 999;\n');
  });
});

describe('writing back: local records, never a pretend post', () => {
  it('postCheck appends to <git-dir>/svc/checks.jsonl; an update reuses the id', async () => {
    const head = sha.feat2 as string;
    const posted = await host.postCheck('acme/api', {
      name: 'Service / Review',
      headSha: head,
      status: 'in_progress',
      title: 'Reviewing',
      summary: 'started',
    });
    expect(posted.url).toBeNull();
    expect(posted.id).toMatch(/^local-check-/);
    const updated = await host.postCheck('acme/api', {
      id: posted.id,
      name: 'Service / Review',
      headSha: head,
      status: 'completed',
      conclusion: 'neutral',
      title: 'No findings',
      summary: 'done',
      text: 'fix prompt',
    });
    expect(updated.id).toBe(posted.id);
    const file = join(api, '.git/svc/checks.jsonl');
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      id: posted.id,
      status: 'completed',
      conclusion: 'neutral',
      head_sha: head,
    });
    expect(await host.localRecords('acme/api', 'checks')).toEqual(lines);

    expect(
      (
        await codeHostError(
          host.postCheck('acme/api', {
            name: 'x',
            headSha: head,
            status: 'completed',
            title: 't',
            summary: 's',
          }),
        )
      ).reason,
    ).toBe('invalid_input');
    expect(
      (
        await codeHostError(
          host.postCheck('acme/api', {
            id: 'local-check-nope',
            name: 'x',
            headSha: head,
            status: 'queued',
            title: 't',
            summary: 's',
          }),
        )
      ).reason,
    ).toBe('not_found');
  });

  it('postComment appends to comments.jsonl; needs the pull request, and a line for inline comments', async () => {
    const summary = await host.postComment('acme/api', { pullRequest: 7, body: 'Summary' });
    const inline = await host.postComment('acme/api', {
      pullRequest: 7,
      body: 'P1: bug',
      path: 'src/app.ts',
      line: 2,
      commitSha: sha.feat2 as string,
    });
    await host.postComment('acme/api', { pullRequest: 7, body: 'wontfix: fine', inReplyTo: inline.id });
    const records = await host.localRecords<{ id: string; path: string | null; line: number | null }>(
      'acme/api',
      'comments',
    );
    expect(records.map((r) => [r.id, r.path, r.line])).toEqual([
      [summary.id, null, null],
      [inline.id, 'src/app.ts', 2],
      [expect.stringMatching(/^local-comment-/), null, null],
    ]);
    expect(
      (await codeHostError(host.postComment('acme/api', { pullRequest: 99, body: 'x' }))).message,
    ).toMatch(/^pull request 99 not found in acme\/api: no refs\/pull\/99\/head in /);
    expect(
      (await codeHostError(host.postComment('acme/api', { pullRequest: 7, body: 'x', path: 'a.ts' }))).reason,
    ).toBe('invalid_input');
    expect(
      (
        await codeHostError(
          host.postComment('acme/api', { pullRequest: 7, body: 'x', path: '../a.ts', line: 1 }),
        )
      ).reason,
    ).toBe('invalid_input');
  });

  it('openDraftPullRequest opens local pull request N that follows its branches', async () => {
    const repo = makeRepo(reposDir, 'acme/drafts', { 'a.ts': 'a\n' });
    gitIn(repo, ['update-ref', 'refs/pull/4/head', rev(repo, 'HEAD')]);
    gitIn(repo, ['checkout', '-q', '-b', 'svc/fix-1']);
    const fix1 = commitFiles(repo, { 'a.ts': 'a\nfixed\n' }, 'fix');
    gitIn(repo, ['checkout', '-q', 'main']);
    const opened = await host.openDraftPullRequest('acme/drafts', {
      title: 'Fix P1 in a.ts',
      body: 'body',
      baseRef: 'main',
      headRef: 'svc/fix-1',
    });
    expect(opened).toEqual({ id: '5', number: 5, url: null });
    const pr = await host.getPullRequest('acme/drafts', 5);
    expect(pr).toMatchObject({
      number: 5,
      title: 'Fix P1 in a.ts',
      draft: true,
      baseRef: 'main',
      headRef: 'svc/fix-1',
      headSha: fix1,
      mergeBaseSha: rev(repo, 'main'),
    });
    // A later commit on the branch is part of the pull request, as on a code host.
    gitIn(repo, ['checkout', '-q', 'svc/fix-1']);
    const fix2 = commitFiles(repo, { 'b.ts': 'b\n' }, 'more');
    expect((await host.getPullRequest('acme/drafts', 5)).headSha).toBe(fix2);
    const records = await host.localRecords<LocalPullRecord>('acme/drafts', 'pulls');
    expect(records).toEqual([
      expect.objectContaining({ number: 5, draft: true, baseRef: 'main', headRef: 'svc/fix-1' }),
    ]);
    const missing = await codeHostError(
      host.openDraftPullRequest('acme/drafts', { title: 't', body: 'b', baseRef: 'main', headRef: 'nope' }),
    );
    expect(missing.reason).toBe('not_found');
    expect(missing.message).toContain('head branch nope');
  });
});

describe('commits on new branches', () => {
  let repo: string;
  let base: string;
  const show = (ref: string, format: string) => gitIn(repo, ['show', '-s', `--format=${format}`, ref]).trim();
  const branches = () =>
    gitIn(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/']).trim().split('\n');

  beforeAll(() => {
    repo = makeRepo(reposDir, 'acme/quick', {
      'src/app.ts': 'export const a = 1;\n',
      'README.md': '# quick\n',
      'bin/run.sh': '#!/bin/sh\necho run\n',
    });
    chmodSync(join(repo, 'bin/run.sh'), 0o755);
    base = commitAll(repo, 'make run.sh executable');
  });

  it('writes the files as one commit on base, by svc, without git config or touching the work tree', async () => {
    const status = gitIn(repo, ['status', '--porcelain']);
    // No global or system config: the identity must come from svc itself.
    const saved = { global: process.env.GIT_CONFIG_GLOBAL, nosystem: process.env.GIT_CONFIG_NOSYSTEM };
    process.env.GIT_CONFIG_GLOBAL = '/dev/null';
    process.env.GIT_CONFIG_NOSYSTEM = '1';
    let commit: string;
    try {
      ({ commit } = await host.commitToNewBranch('acme/quick', {
        branch: 'svc/fix-1',
        baseSha: base,
        message: 'Fix the P1 in src/app.ts\n\nFinding 3fa9c1.',
        files: [
          { path: 'src/app.ts', content: 'export const a = 2;\r\n' },
          { path: 'src/deep/new file ü.ts', content: 'export {};\n' },
          { path: 'bin/run.sh', content: '#!/bin/sh\necho fixed\n' },
        ],
      }));
    } finally {
      if (saved.global === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved.global;
      if (saved.nosystem === undefined) delete process.env.GIT_CONFIG_NOSYSTEM;
      else process.env.GIT_CONFIG_NOSYSTEM = saved.nosystem;
    }
    expect(rev(repo, 'refs/heads/svc/fix-1')).toBe(commit);
    expect(show(commit, '%P')).toBe(base);
    expect(show(commit, '%an <%ae>|%cn <%ce>')).toBe('svc <svc@localhost>|svc <svc@localhost>');
    expect(show(commit, '%B')).toBe('Fix the P1 in src/app.ts\n\nFinding 3fa9c1.');
    // Bytes exactly as given (no end-of-line conversion), new folders made, the rest kept.
    expect(gitIn(repo, ['cat-file', 'blob', `${commit}:src/app.ts`])).toBe('export const a = 2;\r\n');
    expect(gitIn(repo, ['cat-file', 'blob', `${commit}:src/deep/new file ü.ts`])).toBe('export {};\n');
    expect(
      gitIn(repo, ['-c', 'core.quotepath=off', 'diff', '--name-status', base, commit]).trim().split('\n'),
    ).toEqual(['M\tbin/run.sh', 'M\tsrc/app.ts', 'A\tsrc/deep/new file ü.ts']);
    // An executable stays executable.
    expect(
      gitIn(repo, ['ls-tree', commit, '--', 'bin/run.sh', 'src/app.ts'])
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual(['100755', '100644', '']);
    expect(rev(repo, 'HEAD')).toBe(base);
    expect(gitIn(repo, ['status', '--porcelain'])).toBe(status);
  });

  it('refuses a branch that exists, or that another branch is in the way of, and leaves it', async () => {
    gitIn(repo, ['branch', 'taken', base]);
    gitIn(repo, ['branch', 'quick', base]);
    gitIn(repo, ['branch', 'folder/inside', base]);
    const input = { baseSha: base, message: 'm', files: [{ path: 'a.txt', content: 'a\n' }] };
    const before = branches();
    for (const [branch, why] of [
      ['taken', /taken in acme\/quick: the branch already exists/],
      ['main', /the branch already exists/],
      ['quick/x', /branch quick exists, and a branch name cannot also be a folder of branches/],
      ['folder', /branch folder\/inside exists, so folder is a folder of branches/],
    ] as const) {
      const error = await codeHostError(host.commitToNewBranch('acme/quick', { ...input, branch }));
      expect(error.reason).toBe('invalid_input');
      expect(error.message).toMatch(why);
    }
    expect(branches()).toEqual(before);
    expect(rev(repo, 'taken')).toBe(base);
  });

  it('with no files is an empty commit (same tree), from which a draft pull request opens', async () => {
    const { commit } = await host.commitToNewBranch('acme/quick', {
      branch: 'svc/plan-2',
      baseSha: base,
      message: 'Plan 2',
      files: [],
    });
    expect(show(commit, '%P %T')).toBe(`${base} ${rev(repo, `${base}^{tree}`)}`);
    const opened = await host.openDraftPullRequest('acme/quick', {
      title: 'Plan 2',
      body: 'the plan',
      baseRef: 'main',
      headRef: 'svc/plan-2',
    });
    expect(await host.getPullRequest('acme/quick', opened.number)).toMatchObject({
      draft: true,
      headRef: 'svc/plan-2',
      headSha: commit,
      baseSha: base,
      mergeBaseSha: base,
    });
  });

  it('works in a bare repository', async () => {
    const bare = makeBareClone(reposDir, repo, 'acme/quick-bare.git');
    const { commit } = await host.commitToNewBranch('acme/quick-bare', {
      branch: 'svc/bare',
      baseSha: base,
      message: 'bare',
      files: [{ path: 'README.md', content: '# bare\n' }],
    });
    expect(rev(bare, 'refs/heads/svc/bare')).toBe(commit);
    expect(gitIn(bare, ['cat-file', 'blob', `${commit}:README.md`])).toBe('# bare\n');
  });

  it('refuses bad branch names, paths and bases before writing anything', async () => {
    const objects = gitIn(repo, ['count-objects', '-v']);
    const before = branches();
    const attempt = (change: Partial<Parameters<LocalCodeHost['commitToNewBranch']>[1]>) =>
      codeHostError(
        host.commitToNewBranch('acme/quick', {
          branch: 'svc/ok',
          baseSha: base,
          message: 'm',
          files: [{ path: 'ok.txt', content: 'ok\n' }],
          ...change,
        }),
      );
    for (const branch of [
      'a..b',
      '-x',
      'a b',
      'x.lock',
      'HEAD',
      'a/',
      '/a',
      'a//b',
      '.hidden',
      'a@{1}',
      'a:b',
      '',
    ])
      expect((await attempt({ branch })).reason, branch).toBe('invalid_input');
    for (const path of ['../x', '/etc/passwd', '.git/config', 'a/.GIT/x', 'a//b', 'a/./b', ''])
      expect((await attempt({ files: [{ path, content: 'x' }] })).reason, path).toBe('invalid_input');
    const twice = await attempt({
      files: [
        { path: 'a', content: '1' },
        { path: 'a', content: '2' },
      ],
    });
    expect(twice.message).toMatch(/given twice/);
    const nested = await attempt({
      files: [
        { path: 'a', content: '1' },
        { path: 'a/b', content: '2' },
      ],
    });
    expect(nested.message).toMatch(/lies under "a"/);
    // Against the base tree: a directory, or a file where a directory would have to be.
    expect((await attempt({ files: [{ path: 'src', content: 'x' }] })).message).toMatch(
      /"src": it is a directory/,
    );
    expect((await attempt({ files: [{ path: 'README.md/x', content: 'x' }] })).message).toMatch(
      /"README.md" is a file, not a directory/,
    );
    expect((await attempt({ baseSha: 'main' })).reason).toBe('invalid_input');
    const unknown = await attempt({ baseSha: 'f'.repeat(40) });
    expect(unknown.reason).toBe('not_found');
    expect(unknown.message).toContain(`base commit ${'f'.repeat(40)} not found in acme/quick`);
    expect(branches()).toEqual(before);
    expect(gitIn(repo, ['count-objects', '-v'])).toBe(objects);
  });
});

describe('branch protection', () => {
  it('there is none locally: required checks cannot be told (null) and cannot be required', async () => {
    expect(await host.requiredStatusChecks('acme/api', 'main')).toBeNull();
    const error = await codeHostError(host.requireStatusCheck('acme/api', 'main', 'Service / Review'));
    expect(error.reason).toBe('unsupported');
    expect(error.message).toMatch(/no branch protection/);
  });
});

describe('wiring', () => {
  it('installation 1 is the local host over the repos dir', () => {
    const hosts = createCodeHosts({ reposDir });
    expect(hosts.forInstallation(1)?.kind).toBe('local');
    expect(hosts.forInstallation(2)).toBeNull();
  });
});
