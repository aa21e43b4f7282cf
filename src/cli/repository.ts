/**
 * The repository `svc review` runs in, and the range it reviews when given no flags: the current
 * branch against its merge base with the default branch (read as the local host reads it: origin/HEAD,
 * init.defaultBranch, else main or master), plus uncommitted changes when asked.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveDefaultBranch } from '../codehost/local/default-branch';
import { git, gitBuffer, gitOrNull } from '../codehost/local/git';
import { usageError } from './exit-codes';

export interface Repository {
  /** Where git commands run: the work tree's top, or the git dir of a bare repository. */
  dir: string;
  /** The git dir shared by all work trees (`.git`): where the ledger lives. */
  commonDir: string;
  bare: boolean;
}

export async function openRepository(start: string): Promise<Repository> {
  const out = await gitOrNull(start, [
    'rev-parse',
    '--is-bare-repository',
    '--absolute-git-dir',
    '--git-common-dir',
  ]);
  if (out === null) throw usageError(`${start} is not inside a git repository`);
  const [bare, gitDir = '', common = ''] = out.split('\n').map((l) => l.trim());
  const isBare = bare === 'true';
  const dir = isBare ? gitDir : (await git(start, ['rev-parse', '--show-toplevel'])).trim();
  return { dir, commonDir: resolve(start, common), bare: isBare };
}

/** The commits several refs name (null for one that names none), with one git process. */
export async function commitsOf(dir: string, refs: string[]): Promise<(string | null)[]> {
  // `cat-file --batch-check` reads one name per line: a ref with a line break names nothing.
  const safe = refs.map((ref) => (/[\n\r]/.test(ref) || ref === '' ? 'svc-invalid-ref' : ref));
  const out = await gitBuffer(
    dir,
    ['cat-file', '--batch-check'],
    safe.map((ref) => `${ref}^{commit}\n`).join(''),
  ).catch(() => null);
  const lines = out?.toString('utf8').split('\n') ?? [];
  return refs.map((_, i) => /^([0-9a-f]{40,64}) commit \d+$/.exec(lines[i] ?? '')?.[1] ?? null);
}

export async function commitOf(dir: string, ref: string): Promise<string | null> {
  return (await commitsOf(dir, [ref]))[0] ?? null;
}

/** The checked-out branch's name, or null when HEAD is detached. */
export async function currentBranch(dir: string): Promise<string | null> {
  return (await gitOrNull(dir, ['symbolic-ref', '-q', '--short', 'HEAD']))?.trim() || null;
}

export interface DefaultBranch {
  /** What to compare against: `origin/main` or `main`. */
  ref: string;
  /** The branch's own name: `main`. */
  name: string;
}

/**
 * The default branch as the local code host reads it (./codehost/local/default-branch.ts): a bare
 * repository's HEAD, refs/remotes/origin/HEAD, init.defaultBranch, then an existing main or master;
 * never the checked-out branch. One order for `svc review` and `svc serve`, so both compare a branch
 * with the same base. Null when none exists.
 */
export async function defaultBranch(dir: string): Promise<DefaultBranch | null> {
  const found = await resolveDefaultBranch(dir);
  if (!found) return null;
  const ref = found.ref.startsWith('refs/remotes/') ? found.ref.slice('refs/remotes/'.length) : found.name;
  return { ref, name: found.name };
}

export async function mergeBase(dir: string, a: string, b: string): Promise<string | null> {
  return (await gitOrNull(dir, ['merge-base', '--end-of-options', a, b]))?.trim() || null;
}

export async function countCommits(dir: string, base: string, head: string): Promise<number> {
  // Both ends are revisions whatever they start with, and `--` says no path follows.
  return Number(
    (await git(dir, ['rev-list', '--count', '--end-of-options', `${base}..${head}`, '--'])).trim(),
  );
}

/** Paths with uncommitted changes in the work tree (staged, unstaged, untracked and not ignored). */
export async function uncommittedPaths(dir: string): Promise<string[]> {
  // Submodules are asked for their commit only: telling a dirty one needs a `git status` inside
  // it, which would run under that submodule's own config, drivers included (git-safety.ts).
  const out = await gitOrNull(dir, [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=normal',
    '--ignore-submodules=dirty',
  ]);
  if (!out) return [];
  const paths: string[] = [];
  const records = out.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? '';
    if (record.length < 4) continue;
    paths.push(record.slice(3));
    // A rename or copy is followed by its old path.
    if (/[RC]/.test(record.slice(0, 2))) i++;
  }
  return paths;
}

/**
 * The work tree as a git tree object, without touching the user's index, branch or stash: a copy
 * of the index (so unchanged files are not hashed again) takes `git add -A` in a temporary file,
 * and `git write-tree` stores it. Untracked files that are not ignored are included, as a commit
 * of everything would. The blobs written are ordinary loose objects git collects when unused.
 */
export async function workTreeSnapshot(repo: Repository): Promise<string> {
  const temp = await mkdtemp(join(tmpdir(), 'svc-index-'));
  const index = join(temp, 'index');
  // Through gitBuffer, like every other git call: the same time limit and missing-git naming.
  const run = async (args: string[]) =>
    (await gitBuffer(repo.dir, args, undefined, { GIT_INDEX_FILE: index })).toString('utf8');
  try {
    const realIndex = (await git(repo.dir, ['rev-parse', '--git-path', 'index'])).trim();
    const copied = await copyFile(resolve(repo.dir, realIndex), index).then(
      () => true,
      () => false,
    );
    if (!copied) await run(['read-tree', 'HEAD']);
    await run(['add', '-A', '--', '.']);
    return (await run(['write-tree'])).trim();
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
