/**
 * A throwaway git repository holding two versions of a published package as two commits, so
 * the range between them is reviewed exactly as svc reviews a branch: real `git diff`, real
 * blobs. The package folders are used as work trees in turn (nothing is copied); nested
 * node_modules (a version's own dependencies) are not part of the package's source.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Fixed identity and dates: the same versions give the same commit ids on every run. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'svc eval',
  GIT_AUTHOR_EMAIL: 'eval@svc.invalid',
  GIT_COMMITTER_NAME: 'svc eval',
  GIT_COMMITTER_EMAIL: 'eval@svc.invalid',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const GIT_OPTIONS = [
  '-c',
  'core.autocrlf=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'commit.gpgsign=false',
];

async function git(dir: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', [...GIT_OPTIONS, ...args], {
    cwd: dir,
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Commits everything under `tree` (ignore files inside it included, node_modules excluded). */
async function commitTree(repo: string, tree: string, message: string): Promise<string> {
  await git(repo, [
    `--work-tree=${tree}`,
    'add',
    '--all',
    '--force',
    '--',
    '.',
    ':(exclude,glob)**/node_modules/**',
  ]);
  await git(repo, [`--work-tree=${tree}`, 'commit', '--quiet', '--allow-empty', '-m', message]);
  return (await git(repo, ['rev-parse', 'HEAD'])).trim();
}

export interface RangeRepository {
  dir: string;
  baseSha: string;
  headSha: string;
}

/** `<reposDir>/<owner>/<name>`: base commit = `baseTree`'s files, head commit = `headTree`'s. */
export async function buildRangeRepository(
  reposDir: string,
  fullName: string,
  baseTree: string,
  headTree: string,
  labels: { base: string; head: string },
): Promise<RangeRepository> {
  const dir = join(reposDir, fullName);
  await mkdir(dir, { recursive: true });
  await git(dir, ['init', '--quiet', '--initial-branch=main']);
  const baseSha = await commitTree(dir, baseTree, labels.base);
  const headSha = await commitTree(dir, headTree, labels.head);
  return { dir, baseSha, headSha };
}
