/**
 * A review that compared nothing is not a clean review. When base and head are the same commit
 * (a pull request compared with its own branch, or whose head is already in its base) or their
 * diff lists no file at all, the reviewers would read nothing and report nothing, and that would
 * look exactly like a change with no defect. So the run names the gap, with both commits, and the
 * pull request's check is skipped ("no reviewable diff"), never green.
 */
import type { Diff } from '../core/review';
import type { Gap } from '../core/runs';

export const EMPTY_COMPARISON = 'empty_comparison';

/** The gap a comparison of `baseSha` with `headSha` leaves, or null when it has files to review. */
export function emptyComparison(
  target: { baseSha: string; headSha: string },
  diff: Pick<Diff, 'files'>,
): Gap | null {
  const { baseSha, headSha } = target;
  if (baseSha === headSha) {
    return {
      code: EMPTY_COMPARISON,
      message:
        `base and head are the same commit ${headSha}: there is nothing to compare, so nothing was reviewed ` +
        '(a pull request whose head is already in its base, or whose base is its own branch, has no change of its own)',
    };
  }
  if (diff.files.length === 0) {
    return {
      code: EMPTY_COMPARISON,
      message: `base ${baseSha} and head ${headSha} differ in no file, so nothing was reviewed`,
    };
  }
  return null;
}
