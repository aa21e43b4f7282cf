/**
 * A range of a local repository as a review reads it, straight from git in the repository's own
 * directory: the diff between two commits (or a commit and a tree, for uncommitted changes) and
 * the head side's file contents, through the reads the local code host makes too
 * (src/codehost/local/git-read.ts), with git's failures named as this range's.
 */

import { GitFailure } from '../codehost/local/git';
import { gitDiff, readBlobs as readBlobsOrFail } from '../codehost/local/git-read';
import { DEFAULT_DIFF_LIMITS } from '../codehost/types';
import type { Diff } from '../core/review';

/** Git could not read the range: a name that resolves to nothing, a broken repository. */
export class RangeReadError extends Error {
  override name = 'RangeReadError';
}

/** The diff from `base` to `head` (commit or tree ids). */
export async function diffRange(dir: string, base: string, head: string): Promise<Diff> {
  try {
    return await gitDiff(dir, base, head, DEFAULT_DIFF_LIMITS);
  } catch (error) {
    if (error instanceof GitFailure) throw new RangeReadError(`git diff failed: ${error.message}`);
    throw error;
  }
}

/** The contents of `paths` in `treeish` (null: absent there, or not a file). */
export async function readBlobs(
  dir: string,
  treeish: string,
  paths: readonly string[],
): Promise<Map<string, Buffer | null>> {
  try {
    return await readBlobsOrFail(dir, treeish, paths);
  } catch (error) {
    if (error instanceof GitFailure) throw new RangeReadError(`git cat-file failed: ${error.message}`);
    throw error;
  }
}
