/**
 * The local code host: every git repository under SVC_REPOS_DIR, as installation 1.
 * `owner/repo` is `DIR/owner/repo` (a work tree or a bare repository; `repo.git` works too).
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type CodeHost, CodeHostError, type RepositoryTree } from '../types';
import { git } from './git';

export const LOCAL_INSTALLATION_ID = 1;
const FULL_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

export class LocalCodeHost implements CodeHost {
  readonly kind = 'local' as const;
  readonly installationId = LOCAL_INSTALLATION_ID;

  constructor(readonly reposDir: string) {}

  /** The repository's directory, or null when there is none. Rejects names that could escape the dir. */
  async locate(fullName: string): Promise<string | null> {
    if (!FULL_NAME.test(fullName) || fullName.split('/').some((part) => part === '.' || part === '..'))
      return null;
    const base = resolve(this.reposDir);
    for (const candidate of [join(base, fullName), join(base, `${fullName}.git`)]) {
      const isDir = await stat(candidate).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!isDir) continue;
      const inside = await git(candidate, [
        'rev-parse',
        '--is-inside-work-tree',
        '--is-bare-repository',
      ]).then(
        (out) => out.includes('true'),
        () => false,
      );
      // Only a repository whose own top is this directory counts, not a subfolder of some outer one.
      const top = await git(candidate, ['rev-parse', '--absolute-git-dir']).catch(() => '');
      if (inside && resolve(top.trim()).startsWith(resolve(candidate))) return candidate;
    }
    return null;
  }

  async repositoryExists(fullName: string): Promise<boolean> {
    return (await this.locate(fullName)) !== null;
  }

  async readTree(fullName: string): Promise<RepositoryTree> {
    const dir = await this.locate(fullName);
    if (!dir) {
      throw new CodeHostError(
        `repository ${fullName} is not under ${resolve(this.reposDir)} (SVC_REPOS_DIR)`,
        'not_found',
      );
    }
    let commit: string;
    try {
      commit = (await git(dir, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    } catch (error) {
      throw new CodeHostError(`repository ${fullName} has no commits yet`, 'failed', { cause: error });
    }
    const listing = await git(dir, ['ls-tree', '-r', '-z', '--long', commit]);
    const files: RepositoryTree['files'] = [];
    for (const entry of listing.split('\0')) {
      // "<mode> <type> <object> <size>\t<path>"
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      const [, type, , size] = entry.slice(0, tab).split(/\s+/);
      if (type !== 'blob') continue;
      files.push({
        path: entry.slice(tab + 1),
        size: size === '-' || size === undefined ? null : Number(size),
      });
    }
    return { ref: 'HEAD', commit, files, truncated: false };
  }
}
