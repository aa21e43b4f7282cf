/**
 * Reviewers' gaps as a review records them: each named with the reviewer that had it, and a file
 * left out (`files_not_analyzed`) once per file however many reviewers could not read it (the
 * security and correctness rules read the same parse), naming all of them.
 */
import { FILES_NOT_ANALYZED, type Gap } from '../core/runs';

export class ReviewerGaps {
  private readonly gaps: { keys: string[]; gap: Gap }[] = [];
  private readonly byFile = new Map<string, { keys: string[]; gap: Gap }>();

  add(reviewerKey: string, gaps: readonly Gap[]): void {
    for (const gap of gaps) {
      const path = gap.code === FILES_NOT_ANALYZED ? gap.file?.path : undefined;
      const same = path === undefined ? undefined : this.byFile.get(path);
      if (same) {
        if (!same.keys.includes(reviewerKey)) same.keys.push(reviewerKey);
        continue;
      }
      const entry = { keys: [reviewerKey], gap };
      this.gaps.push(entry);
      if (path !== undefined) this.byFile.set(path, entry);
    }
  }

  /** In the order first met, each message prefixed with its reviewers (`security, correctness: ...`). */
  list(): Gap[] {
    return this.gaps.map(({ keys, gap }) => ({ ...gap, message: `${keys.join(', ')}: ${gap.message}` }));
  }
}
