/** src/review/diff.ts over the local host: pull request and range diffs, and what reviews ask of them. */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import { diffText, pullRequestDiff, rangeDiff, reviewableFiles, summarizeDiff } from '../../src/review/diff';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

let reposDir: string;
let host: LocalCodeHost;
let fork: string;

beforeAll(() => {
  reposDir = makeReposDir();
  host = new LocalCodeHost(reposDir);
  const dir = makeRepo(reposDir, 'acme/web', {
    'app.ts': 'a\nb\nc\n',
    'old.py': 'x = 1\n',
    'logo.png': '\0\x01',
  });
  fork = gitIn(dir, ['rev-parse', 'HEAD']).trim();
  gitIn(dir, ['checkout', '-q', '-b', 'feature']);
  const head = commitFiles(dir, {
    'app.ts': 'a\nB\nc\nd\n',
    'old.py': null,
    'logo.png': '\0\x02',
    'lib/util.js': 'export const u = 1;\n',
  });
  gitIn(dir, ['checkout', '-q', 'main']);
  commitFiles(dir, { 'main-only.ts': 'm\n' });
  gitIn(dir, ['update-ref', 'refs/pull/1/head', head]);
  // An orphan branch: no shared history with main.
  gitIn(dir, ['checkout', '-q', '--orphan', 'orphan']);
  commitFiles(dir, { 'app.ts': 'z\n' }, 'orphan');
  gitIn(dir, ['checkout', '-q', 'main']);
});
afterAll(() => rmSync(reposDir, { recursive: true, force: true }));

describe('review diffs', () => {
  it('a pull request is diffed from the merge base', async () => {
    const { pullRequest, diff } = await pullRequestDiff(host, 'acme/web', 1);
    expect(diff.base).toBe(fork);
    expect(pullRequest.mergeBaseSha).toBe(fork);
    expect(diff.files.map((f) => f.path).sort()).toEqual(['app.ts', 'lib/util.js', 'logo.png', 'old.py']);
    expect(
      reviewableFiles(diff)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['app.ts', 'lib/util.js']);
    expect(summarizeDiff(diff)).toEqual({
      files: 4,
      additions: 3,
      deletions: 2,
      changedLines: 3,
      reviewableFiles: 2,
      languages: { typescript: 1, javascript: 1, python: 1 },
      skipped: { binary_file: 1 },
    });
    const app = diff.files.find((f) => f.path === 'app.ts');
    expect(app && diffText(app, 2, 4)).toBe('B\nc\nd');
    expect(app && diffText(app, 9)).toBeNull();
  });

  it('a range: from the merge base by default, or two-point', async () => {
    const three = await rangeDiff(host, 'acme/web', 'main', 'feature');
    expect(three.diff.files.map((f) => f.path)).not.toContain('main-only.ts');
    const two = await rangeDiff(host, 'acme/web', 'main', 'feature', { from: 'base' });
    expect(two.diff.files.find((f) => f.path === 'main-only.ts')?.change).toBe('deleted');
  });

  it('unrelated histories: diffed against the base tip, with a no_merge_base gap', async () => {
    const { range, diff } = await rangeDiff(host, 'acme/web', 'main', 'orphan');
    expect(range.mergeBaseSha).toBeNull();
    expect(diff.gaps.map((g) => g.code)).toEqual(['no_merge_base']);
  });
});
