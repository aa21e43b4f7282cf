/**
 * The diff a review reads, from a code host: a pull request's (from the merge base, as GitHub
 * shows it) or a range's, plus what the planner and reviewers ask of it. Parsing lives with the
 * host (src/codehost/local/diff-parser.ts): each host produces the same core Diff.
 */
import type { CodeHost, DiffLimits, PullRequest, ResolvedRange } from '../codehost/types';
import type { Diff, DiffFile } from '../core/review';
import type { Gap } from '../core/runs';

export interface PullRequestDiff {
  pullRequest: PullRequest;
  diff: Diff;
}

export interface RangeDiff {
  range: ResolvedRange;
  diff: Diff;
}

const noMergeBase = (what: string): Gap => ({
  code: 'no_merge_base',
  message: `${what} share no history; the diff is taken against the base's tip`,
});

/** A pull request and its diff from the merge base of base and head. */
export async function pullRequestDiff(
  host: CodeHost,
  fullName: string,
  number: number,
  limits?: Partial<DiffLimits>,
): Promise<PullRequestDiff> {
  const pullRequest = await host.getPullRequest(fullName, number);
  const diff = await host.getDiff(
    fullName,
    pullRequest.mergeBaseSha ?? pullRequest.baseSha,
    pullRequest.headSha,
    limits,
  );
  if (!pullRequest.mergeBaseSha) diff.gaps.push(noMergeBase(`the base and head of pull request ${number}`));
  return { pullRequest, diff };
}

/**
 * A range's diff. `from: 'merge_base'` (default) diffs what `head` adds since it left `base`
 * (`git diff base...head`); `'base'` diffs the two commits as they are (`git diff base head`).
 */
export async function rangeDiff(
  host: CodeHost,
  fullName: string,
  base: string,
  head: string,
  options: { from?: 'merge_base' | 'base'; limits?: Partial<DiffLimits> } = {},
): Promise<RangeDiff> {
  const range = await host.resolveRange(fullName, base, head);
  const from = options.from ?? 'merge_base';
  const start = from === 'merge_base' ? (range.mergeBaseSha ?? range.baseSha) : range.baseSha;
  const diff = await host.getDiff(fullName, start, range.headSha, options.limits);
  if (from === 'merge_base' && !range.mergeBaseSha) diff.gaps.push(noMergeBase(`${base} and ${head}`));
  return { range, diff };
}

/** Files a reviewer can report on: read in full, not deleted, with at least one added line. */
export function reviewableFiles(diff: Diff): DiffFile[] {
  return diff.files.filter((f) => f.skipped === null && f.change !== 'deleted' && f.changedLines.length > 0);
}

export interface DiffSummary {
  files: number;
  additions: number;
  deletions: number;
  /** Added lines reviewers may point at (sum of changed-line ranges). */
  changedLines: number;
  reviewableFiles: number;
  /** Files per language id (unrecognised files are not counted). */
  languages: Record<string, number>;
  /** Files not read in full, per gap code (binary_file, file_too_large, submodule_change). */
  skipped: Record<string, number>;
}

/** The numbers a planner sizes a review by. */
export function summarizeDiff(diff: Diff): DiffSummary {
  const summary: DiffSummary = {
    files: diff.files.length,
    additions: 0,
    deletions: 0,
    changedLines: 0,
    reviewableFiles: reviewableFiles(diff).length,
    languages: {},
    skipped: {},
  };
  for (const f of diff.files) {
    summary.additions += f.additions;
    summary.deletions += f.deletions;
    for (const r of f.changedLines) summary.changedLines += r.end - r.start + 1;
    if (f.language) summary.languages[f.language] = (summary.languages[f.language] ?? 0) + 1;
    if (f.skipped) summary.skipped[f.skipped.code] = (summary.skipped[f.skipped.code] ?? 0) + 1;
  }
  return summary;
}

/** The new-file text of the lines `start..end` as the diff shows them (added or context), or null. */
export function diffText(file: DiffFile, start: number, end = start): string | null {
  const out: string[] = [];
  for (const hunk of file.hunks) {
    for (const line of hunk.lines) {
      if (line.newLine !== null && line.newLine >= start && line.newLine <= end) out.push(line.text);
    }
  }
  return out.length === end - start + 1 ? out.join('\n') : null;
}
