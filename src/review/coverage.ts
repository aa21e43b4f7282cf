/**
 * What a review covered, stated with every review: the commits compared, the files reviewed (by
 * role) and each file left out, by why. A review that left files out must say so in the same
 * place it says what it found, so that "no findings" is never read as "all of it was read".
 */
import { type FileRole, isForeignCode } from '../core/file-roles';
import type { Diff } from '../core/review';
import { FILES_NOT_ANALYZED, type Gap } from '../core/runs';
import type { ReviewFile } from '../reviewers/types';

/** Why a changed file was not reviewed, or not in full. */
export const LEFT_OUT_REASONS = [
  /** Generated or vendored (by path, `.gitattributes` or svc.json): only secrets are looked for. */
  'role',
  /** Matched by `.svc.yml` `paths.exclude`: no reviewer saw it. */
  'ignored',
  /** Over the diff's or the rule engine's size limit. */
  'size',
  'binary',
  /** The analyzers could not parse it, or parsed only part of it (`share` says how much was left out). */
  'parse_failure',
  /** Not diffed for another reason (a submodule, undecodable text): the diff's gap says which. */
  'not_diffed',
  /** Changed without an added line (only deletions, a rename or a mode change): nothing to point at. */
  'no_added_lines',
] as const;
export type LeftOutReason = (typeof LEFT_OUT_REASONS)[number];

export interface LeftOutFile {
  path: string;
  /** The share of the file left out (parse_failure only; 1: all of it). */
  share?: number;
}

export interface ReviewCoverage {
  /** The base the caller named, as a commit. */
  base: string;
  head: string;
  /** Where the head left the base; null when unknown (then the diff is from `base`). */
  merge_base: string | null;
  /** The commit the diff was taken from: the merge base when known. */
  compared_from: string;
  changed_files: number;
  deleted_files: number;
  /** Files at least one reviewer read, in full or in part. */
  reviewed_files: number;
  /** Reviewed files by role (production, test, docs, ...). */
  reviewed_by_role: Partial<Record<FileRole, number>>;
  /** Every reason with its count, and the files. */
  left_out: Record<LeftOutReason, { count: number; files: LeftOutFile[] }>;
}

export interface CoverageInput {
  base: string;
  head: string;
  mergeBase: string | null;
  /** The commit the diff was taken from; omitted: the merge base when known, else the base. */
  comparedFrom?: string | undefined;
  diff: Diff;
  /** The files reviewers were given (after `.svc.yml` exclusions), with their roles. */
  files: readonly ReviewFile[];
  /** The review's gaps: files the rule engine left out name themselves there (`gap.file`). */
  gaps: readonly Gap[];
}

export function reviewCoverage(input: CoverageInput): ReviewCoverage {
  const leftOut = {} as ReviewCoverage['left_out'];
  for (const reason of LEFT_OUT_REASONS) leftOut[reason] = { count: 0, files: [] };
  const leave = (reason: LeftOutReason, file: LeftOutFile) => {
    leftOut[reason].count++;
    leftOut[reason].files.push(file);
  };
  const given = new Map(input.files.map((f) => [f.diff.path, f]));
  const tooLarge = new Set<string>();
  const unparsed = new Map<string, number>();
  for (const gap of input.gaps) {
    if (!gap.file) continue;
    if (gap.code === FILES_NOT_ANALYZED)
      unparsed.set(gap.file.path, Math.max(unparsed.get(gap.file.path) ?? 0, gap.file.share));
    else if (gap.code === 'builtin_file_too_large') tooLarge.add(gap.file.path);
  }
  let deleted = 0;
  let reviewed = 0;
  const byRole: Partial<Record<FileRole, number>> = {};
  for (const d of input.diff.files) {
    const path = d.path;
    if (d.change === 'deleted') {
      deleted++;
      continue;
    }
    const file = given.get(path);
    if (!file) leave('ignored', { path });
    else if (d.binary || d.skipped?.code === 'binary_file') leave('binary', { path });
    else if (d.skipped?.code === 'file_too_large' || tooLarge.has(path)) leave('size', { path });
    else if (d.skipped) leave('not_diffed', { path });
    else if (d.changedLines.length === 0) leave('no_added_lines', { path });
    else if (isForeignCode(file.role ?? 'production')) leave('role', { path });
    else {
      const share = unparsed.get(path);
      if (share !== undefined) leave('parse_failure', { path, share });
      if (share === 1) continue;
      reviewed++;
      const role = file.role ?? 'production';
      byRole[role] = (byRole[role] ?? 0) + 1;
    }
  }
  return {
    base: input.base,
    head: input.head,
    merge_base: input.mergeBase,
    compared_from: input.comparedFrom ?? input.mergeBase ?? input.base,
    changed_files: input.diff.files.length,
    deleted_files: deleted,
    reviewed_files: reviewed,
    reviewed_by_role: byRole,
    left_out: leftOut,
  };
}

/** The coverage in a few lines of text, for the CLI and a check's summary. */
export function coverageText(c: ReviewCoverage): string[] {
  const short = (sha: string) => sha.slice(0, 12);
  const roles = Object.entries(c.reviewed_by_role)
    .map(([role, n]) => `${n} ${role}`)
    .join(', ');
  const lines = [
    `Compared ${short(c.compared_from)}..${short(c.head)} (base ${short(c.base)}, merge base ${c.merge_base ? short(c.merge_base) : 'unknown'}).`,
    `Reviewed ${c.reviewed_files} of ${c.changed_files} changed file(s)${roles ? ` (${roles})` : ''}${c.deleted_files > 0 ? `; ${c.deleted_files} deleted` : ''}.`,
  ];
  const out = LEFT_OUT_REASONS.filter((r) => c.left_out[r].count > 0);
  if (out.length === 0) return lines;
  lines.push(`Left out: ${out.map((r) => `${r.replace(/_/g, ' ')} ${c.left_out[r].count}`).join(', ')}.`);
  for (const reason of out)
    for (const f of c.left_out[reason].files)
      lines.push(
        `  ${reason.replace(/_/g, ' ')}: ${f.path}${f.share !== undefined ? ` (${Math.round(f.share * 100)}% not analyzed)` : ''}`,
      );
  return lines;
}

/**
 * The files a review could not read in full, for a check's summary: one sentence, each file with
 * the share left out and why; empty when every file was read.
 */
export function notAnalyzedSummary(gaps: readonly Gap[]): string {
  const files = gaps.flatMap((g) => (g.code === FILES_NOT_ANALYZED && g.file ? [g.file] : []));
  if (files.length === 0) return '';
  const listed = files
    .slice(0, 10)
    .map((f) => `\`${f.path}\` (${Math.round(f.share * 100)}%, ${f.reason})`)
    .join(', ');
  const more = files.length > 10 ? ` and ${files.length - 10} more` : '';
  return `Not analyzed (${FILES_NOT_ANALYZED}): ${listed}${more}; no finding can be reported there.`;
}
