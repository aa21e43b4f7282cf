/** Real git repositories for tests, made under a temporary SVC_REPOS_DIR. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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
export function makeRepo(reposDir: string, fullName: string, files: Record<string, string>): string {
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
