/** Real git repositories for tests, made under a temporary SVC_REPOS_DIR. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export function makeReposDir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-repos-'));
}

const git = (cwd: string, args: string[]) =>
  execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'svc test',
      GIT_AUTHOR_EMAIL: 'test@svc.invalid',
      GIT_COMMITTER_NAME: 'svc test',
      GIT_COMMITTER_EMAIL: 'test@svc.invalid',
    },
  }).toString();

/** Creates `reposDir/owner/name` with the given files committed on `main`. */
export function makeRepo(reposDir: string, fullName: string, files: Record<string, string | Buffer>): string {
  const dir = join(reposDir, fullName);
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

/** Runs git in `cwd` with the test identity (and `input` on stdin); returns stdout. */
export function gitIn(cwd: string, args: string[], input?: string): string {
  if (input === undefined) return git(cwd, args);
  return execFileSync('git', args, { cwd, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
}

/** Writes files into a work tree: a string or bytes writes the file, null deletes it. */
export function writeFiles(dir: string, files: Record<string, string | Buffer | null>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) {
      rmSync(full, { force: true });
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** Stages everything in the work tree and commits it; returns the new commit id. */
export function commitAll(dir: string, message: string): string {
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

/** Writes `files`, commits, and returns the commit id. */
export function commitFiles(
  dir: string,
  files: Record<string, string | Buffer | null>,
  message = 'change',
): string {
  writeFiles(dir, files);
  return commitAll(dir, message);
}

/** Clones `source` as a bare repository at `reposDir/<fullName>` (e.g. `acme/api.git`). */
export function makeBareClone(reposDir: string, source: string, fullName: string): string {
  const dir = join(reposDir, fullName);
  mkdirSync(dirname(dir), { recursive: true });
  git(reposDir, ['clone', '-q', '--bare', source, dir]);
  return dir;
}

/**
 * Pull request `number` of a local repository: `files` committed on a new `branch` off the
 * current one (left checked out), published as `refs/pull/<number>/head` as the local host
 * reads it. Returns the head commit.
 */
export function openPullRequest(
  repo: string,
  number: number,
  files: Record<string, string | Buffer | null>,
  message: string,
  branch = 'feature',
): string {
  const current = git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']).trim();
  git(repo, ['checkout', '-q', '-b', branch]);
  const head = commitFiles(repo, files, message);
  git(repo, ['checkout', '-q', current]);
  git(repo, ['update-ref', `refs/pull/${number}/head`, branch]);
  return head;
}
