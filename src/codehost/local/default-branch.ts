/**
 * The default branch of a served repository: what the repository (or its project) declares, never
 * the branch a person has checked out in a work tree. Checking out a pull request's branch while
 * editing it is natural; had that made it the default branch, its review would compare the head
 * with itself (clean, having read nothing) and the watcher would count it merged.
 *
 * In order: the project's `svc.repository.default_branch` setting (the operator said so, for this
 * project); a bare repository's HEAD (a mirror's HEAD is the origin's default branch, and nobody
 * checks anything out there); `refs/remotes/origin/HEAD`; `init.defaultBranch` from git config;
 * last, `main` or `master` if such a branch exists, which is a guess and says so (`source`).
 * Each declared name counts only when the branch exists, locally or as `origin/<name>`.
 */
import { git, gitOrNull } from './git';

export type DefaultBranchSource =
  | 'project_setting'
  | 'bare_head'
  | 'origin_head'
  | 'init_default_branch'
  | 'main_or_master';

export interface DefaultBranch {
  /** The branch's name: `main`. */
  name: string;
  /** The ref whose tip is the default branch: `refs/heads/main`, or `refs/remotes/origin/main`. */
  ref: string;
  tip: string;
  source: DefaultBranchSource;
}

/** In words, for logs and messages: where the default branch was read from. */
export function describeSource(branch: DefaultBranch): string {
  switch (branch.source) {
    case 'project_setting':
      return `${branch.name} (the project's svc.repository.default_branch setting)`;
    case 'bare_head':
      return `${branch.name} (the bare repository's HEAD)`;
    case 'origin_head':
      return `${branch.name} (refs/remotes/origin/HEAD)`;
    case 'init_default_branch':
      return `${branch.name} (init.defaultBranch in git config)`;
    case 'main_or_master':
      return (
        `${branch.name} (nothing declares a default branch, so svc took the existing ${branch.name}; ` +
        'set the project setting svc.repository.default_branch, refs/remotes/origin/HEAD or init.defaultBranch to declare it)'
      );
  }
}

/** What to do when nothing names an existing default branch. */
export const DECLARE_DEFAULT_BRANCH =
  'declare it: serve a bare mirror (git clone --mirror), or set refs/remotes/origin/HEAD ' +
  '(git remote set-head origin <branch>), init.defaultBranch (git config init.defaultBranch <branch>) ' +
  "or the project's svc.repository.default_branch setting; the branch checked out in a work tree never counts";

/**
 * The repository's declared default branch, or null when nothing names an existing one.
 * `configured` is the project's setting, when it has one. Three git processes, run at once.
 */
export async function resolveDefaultBranch(
  dir: string,
  configured: string | null = null,
): Promise<DefaultBranch | null> {
  const [facts, initDefault, listing] = await Promise.all([
    // One process for both: whether the repository is bare, and the branch HEAD names. It fails
    // when HEAD names a branch with no commit yet, which declares nothing either.
    gitOrNull(dir, ['rev-parse', '--is-bare-repository', '--symbolic-full-name', 'HEAD']),
    gitOrNull(dir, ['config', '--get', 'init.defaultBranch']),
    git(dir, [
      'for-each-ref',
      '--format=%(objectname) %(refname) %(symref)',
      'refs/heads/',
      'refs/remotes/origin/',
    ]),
  ]);
  const [bare, head] = (facts ?? '').split('\n');
  const tips = new Map<string, string>();
  let originHead: string | null = null;
  for (const line of listing.split('\n')) {
    const [sha, ref, target] = line.split(' ');
    if (!sha || !ref) continue;
    if (ref === 'refs/remotes/origin/HEAD')
      originHead = target?.startsWith('refs/remotes/origin/') ? target : null;
    else tips.set(ref, sha);
  }
  const found = (ref: string, name: string, source: DefaultBranchSource): DefaultBranch | null => {
    const tip = tips.get(ref);
    return tip ? { name, ref, tip, source } : null;
  };
  // A declared name: the local branch, else origin's (a clone that never checked it out).
  const named = (name: string | null | undefined, source: DefaultBranchSource) =>
    name
      ? (found(`refs/heads/${name}`, name, source) ?? found(`refs/remotes/origin/${name}`, name, source))
      : null;
  const headBranch = head?.trim().match(/^refs\/heads\/(.+)$/)?.[1] ?? null;
  return (
    named(configured, 'project_setting') ??
    (bare?.trim() === 'true' ? named(headBranch, 'bare_head') : null) ??
    (originHead ? found(originHead, originHead.slice('refs/remotes/origin/'.length), 'origin_head') : null) ??
    named(initDefault?.trim(), 'init_default_branch') ??
    named('main', 'main_or_master') ??
    named('master', 'main_or_master')
  );
}
