/**
 * The git layer's second wall: a value that starts with `-`, passed where git takes a revision, is
 * read by git as a revision (and fails as an unknown one), never obeyed as an option. Each case
 * first shows, with a plain git call, that the same value without `--end-of-options` is obeyed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { countCommits, mergeBase } from '../../src/cli/repository';
import { GitFailure } from '../../src/codehost/local/git';
import { gitDiff } from '../../src/codehost/local/git-read';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import { DEFAULT_DIFF_LIMITS } from '../../src/codehost/types';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

let reposDir: string;
let repo: string;
let first: string;
let second: string;
let canary: string;

beforeEach(() => {
  reposDir = makeReposDir();
  repo = makeRepo(reposDir, 'acme/opts', { 'a.txt': 'a\n' });
  first = gitIn(repo, ['rev-parse', 'HEAD']).trim();
  second = commitFiles(repo, { 'a.txt': 'b\n' });
  canary = join(mkdtempSync(join(tmpdir(), 'svc-canary-')), 'pwned');
});

/** Runs git as a careless caller would, ignoring how it ends; only the canary matters. */
const carelessGit = (args: string[]) => {
  try {
    execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  } catch {}
};

describe('a revision that starts with "-"', () => {
  it('is a revision to git diff, not --output', async () => {
    carelessGit(['diff', `--output=${canary}`, first, second]);
    expect(existsSync(canary)).toBe(true); // git obeys it without the wall

    const other = `${canary}-2`;
    const error = await gitDiff(repo, `--output=${other}`, second, DEFAULT_DIFF_LIMITS).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitFailure);
    expect((error as GitFailure).stderr).toMatch(/bad revision '--output=|unknown revision/);
    expect(existsSync(other)).toBe(false);
    // The second end too.
    const late = await gitDiff(repo, first, `--output=${other}`, DEFAULT_DIFF_LIMITS).catch(
      (e: unknown) => e,
    );
    expect(late).toBeInstanceOf(GitFailure);
    expect(existsSync(other)).toBe(false);
  });

  it('is a revision to merge-base and rev-list (svc review)', async () => {
    // Without the wall, `merge-base --independent <commit>` answers the commit itself.
    expect(
      execFileSync('git', ['merge-base', '--independent', second], { cwd: repo }).toString().trim(),
    ).toBe(second);
    expect(await mergeBase(repo, '--independent', second)).toBeNull();
    expect(await mergeBase(repo, first, second)).toBe(first);
    // `--all..<commit>` is a revision git cannot find, not the --all option.
    await expect(countCommits(repo, '--all', second)).rejects.toThrow(/bad revision '--all\.\./);
    expect(await countCommits(repo, first, second)).toBe(1);
  });
});

describe('the local host', () => {
  it('refuses option-like and revision-syntax refs before git runs', async () => {
    const host = new LocalCodeHost(reposDir);
    for (const bad of [`--output=${canary}-host`, '-h', 'main~1', 'a..b', 'main@{1}', 'x.lock'])
      await expect(host.resolveRange('acme/opts', bad, 'main'), bad).rejects.toMatchObject({
        reason: 'invalid_input',
      });
    expect(existsSync(`${canary}-host`)).toBe(false);
    expect(await host.resolveRange('acme/opts', 'main', second.slice(0, 10))).toMatchObject({
      baseSha: second,
      headSha: second,
    });
  });

  it('never reads a repository outside SVC_REPOS_DIR', async () => {
    // SVC_REPOS_DIR is reposDir/inner; real repositories sit beside it and above it.
    const host = new LocalCodeHost(join(reposDir, 'inner'));
    makeRepo(reposDir, 'inner/acme/in', { 'x.txt': 'x\n' });
    makeRepo(reposDir, 'evil', { 'x.txt': 'x\n' });
    expect(await host.lookup('acme/in')).toEqual({ dir: join(reposDir, 'inner', 'acme', 'in') });
    // `../evil` joins to reposDir/evil, a real repository: only the name grammar stands between.
    for (const name of [
      '../evil',
      '../acme',
      '..//evil',
      '../../tmp',
      'acme/..',
      '/etc/passwd',
      '../inner/acme/in',
    ])
      expect(await host.lookup(name), name).toBeNull();
    expect(await host.repositoryExists('../evil')).toBe(false);
  });
});
