/**
 * What both hosts check and work out before `commitToNewBranch` writes anything, so the same input
 * is refused the same way on either: the branch name (git's check-ref-format rules), the file
 * paths, and the mode each file takes in the base commit's tree (or why it cannot go there).
 */
import { branchNameProblem } from '../core/git-grammar';
import { checkRepoPath } from './paths';
import { CodeHostError, type NewBranchCommitInput } from './types';

/** A regular file, and an executable one: the two modes a written file can have. */
export type FileMode = '100644' | '100755';

/** One entry of a tree as both hosts list it (`git ls-tree`, GitHub's git trees API). */
export interface TreeEntry {
  /** The entry's name inside its tree (one path segment). */
  name: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
}

/** Lists one tree, not recursively. */
export type ListTree = (treeSha: string) => Promise<TreeEntry[]>;

const invalid = (message: string) => new CodeHostError(message, 'invalid_input');

/**
 * Refuses what `git check-ref-format --branch` refuses (and `HEAD`), so a name GitHub would take
 * but git could not check out never reaches either host.
 */
export function checkBranchName(branch: string): void {
  const why = branchNameProblem(branch);
  if (why) throw invalid(`branch ${JSON.stringify(branch)} is not a valid branch name: ${why}`);
}

/**
 * The whole input of `commitToNewBranch`, before any object is written: the branch name, a full
 * commit id for the base (`oid` is the host's form), a message, and file paths inside the
 * repository, none twice, none under another, none in `.git`.
 */
export function checkNewBranchCommit(input: NewBranchCommitInput, oid: RegExp): void {
  checkBranchName(input.branch);
  if (typeof input.baseSha !== 'string' || !oid.test(input.baseSha))
    throw invalid(`base ${JSON.stringify(input.baseSha)} is not a full commit id`);
  if (typeof input.message !== 'string') throw invalid('the commit message must be a string');
  if (!Array.isArray(input.files)) throw invalid('files must be a list of { path, content }');
  const paths = new Set<string>();
  for (const file of input.files) {
    checkRepoPath(file?.path);
    // git refuses `.git` in any letter case as a path component (it would be the repository itself).
    if (file.path.split('/').some((part) => part.toLowerCase() === '.git'))
      throw invalid(`path ${JSON.stringify(file.path)} is inside .git`);
    if (typeof file.content !== 'string') throw invalid(`the content of ${file.path} must be a string`);
    if (paths.has(file.path)) throw invalid(`path ${JSON.stringify(file.path)} is given twice`);
    paths.add(file.path);
  }
  for (const path of paths) {
    const parents = path.split('/').slice(0, -1);
    for (let i = 1; i <= parents.length; i++) {
      const parent = parents.slice(0, i).join('/');
      if (paths.has(parent))
        throw invalid(
          `path ${JSON.stringify(path)} lies under ${JSON.stringify(parent)}, which is also a file`,
        );
    }
  }
}

/**
 * The mode each path takes in the tree `rootTree`: an existing executable stays executable, every
 * other file is a regular one. A path that is a directory, a symbolic link or a submodule there,
 * or whose parent is not a directory, is `invalid_input`: writing it would replace what the caller
 * did not name (a whole directory), or not be the file the caller meant (a link's target).
 * Walks only the directories on the way to each path, each listed once.
 */
export async function fileModes(
  rootTree: string,
  paths: readonly string[],
  listTree: ListTree,
): Promise<Map<string, FileMode>> {
  const listings = new Map<string, Promise<TreeEntry[]>>();
  const list = (sha: string) => {
    let listing = listings.get(sha);
    if (!listing) {
      listing = listTree(sha);
      listings.set(sha, listing);
    }
    return listing;
  };
  const modes = new Map<string, FileMode>();
  for (const path of paths) modes.set(path, await modeOf(rootTree, path, list));
  return modes;
}

async function modeOf(rootTree: string, path: string, list: ListTree): Promise<FileMode> {
  const segments = path.split('/');
  let tree = rootTree;
  for (const [i, name] of segments.entries()) {
    const entry = (await list(tree)).find((e) => e.name === name);
    if (!entry) return '100644'; // new from here down
    const here = segments.slice(0, i + 1).join('/');
    if (i < segments.length - 1) {
      if (entry.type !== 'tree')
        throw invalid(
          `cannot write ${JSON.stringify(path)}: ${JSON.stringify(here)} is a file, not a directory`,
        );
      tree = entry.sha;
      continue;
    }
    if (entry.type === 'tree')
      throw invalid(`cannot write ${JSON.stringify(path)}: it is a directory in the base commit`);
    if (entry.type === 'commit')
      throw invalid(`cannot write ${JSON.stringify(path)}: it is a submodule in the base commit`);
    if (entry.mode === '120000')
      throw invalid(`cannot write ${JSON.stringify(path)}: it is a symbolic link in the base commit`);
    return entry.mode === '100755' ? '100755' : '100644';
  }
  return '100644';
}
