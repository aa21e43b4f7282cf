/**
 * GitHub's changed-file entries (compare and pull request files) in svc's diff model, with the
 * same DiffFile semantics as the local host's git parser (src/codehost/local/diff-parser.ts):
 * hunks and changedLines from the `patch` text, renames and copies with `oldPath`, a skipped file
 * named by its reason.
 *
 * GitHub leaves `patch` out for binary files and for diffs too large to show. The two are told
 * apart by the line counts: a binary file counts no changed lines; a file too large does. A pure
 * rename and an empty file also come without a patch and count no lines; they are neither.
 * (A mode-only change looks like a binary file here; GitHub does not give modes.)
 */
import { languageForPath } from '../../core/languages';
import type { DiffFile, DiffLine, FileChange, Hunk, LineRange } from '../../core/review';
import type { DiffLimits } from '../types';

/** The fields of GitHub's `diff-entry` svc reads. */
export interface GitHubDiffEntry {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  changes?: number;
  patch?: string | undefined;
  previous_filename?: string | undefined;
  sha?: string | null | undefined;
}

/** git's id of the empty blob: an added or removed empty file. */
const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** GitHub's file status → svc's change; `changed` is git's type change (T). */
const CHANGE: Record<string, FileChange> = {
  added: 'added',
  removed: 'deleted',
  modified: 'modified',
  renamed: 'renamed',
  copied: 'copied',
  changed: 'type_changed',
  unchanged: 'modified',
};

/** Parses a unified-diff `patch` (hunks only, as GitHub gives it) into hunks and changed lines. */
export function parsePatch(patch: string): {
  hunks: Hunk[];
  changedLines: LineRange[];
  additions: number;
  deletions: number;
} {
  const hunks: Hunk[] = [];
  const changedLines: LineRange[] = [];
  let additions = 0;
  let deletions = 0;
  let hunk: Hunk | null = null;
  let oldNo = 0;
  let newNo = 0;
  let oldLeft = 0;
  let newLeft = 0;
  let lastRange: LineRange | null = null;
  for (const line of patch.split('\n')) {
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const first = line.charAt(0);
      let diffLine: DiffLine;
      if (first === '+') {
        const newLine = newNo++;
        newLeft--;
        additions++;
        diffLine = { kind: 'add', text: line.slice(1), oldLine: null, newLine };
        if (lastRange && lastRange.end + 1 === newLine) lastRange.end = newLine;
        else {
          lastRange = { start: newLine, end: newLine };
          changedLines.push(lastRange);
        }
      } else if (first === '-') {
        oldLeft--;
        deletions++;
        diffLine = { kind: 'del', text: line.slice(1), oldLine: oldNo++, newLine: null };
      } else if (first === '\\') {
        continue; // \ No newline at end of file
      } else {
        // ' ' or an empty line (a blank context line whose space was dropped)
        oldLeft--;
        newLeft--;
        diffLine = { kind: 'context', text: line.slice(1), oldLine: oldNo++, newLine: newNo++ };
      }
      hunk.lines.push(diffLine);
      continue;
    }
    const match = HUNK.exec(line);
    if (!match) continue;
    hunk = {
      oldStart: Number(match[1]),
      oldLines: match[2] === undefined ? 1 : Number(match[2]),
      newStart: Number(match[3]),
      newLines: match[4] === undefined ? 1 : Number(match[4]),
      header: line,
      lines: [],
    };
    oldNo = hunk.oldStart;
    newNo = hunk.newStart;
    oldLeft = hunk.oldLines;
    newLeft = hunk.newLines;
    hunks.push(hunk);
  }
  return { hunks, changedLines, additions, deletions };
}

/** One GitHub diff entry as a DiffFile; `tooLarge` says it counts toward the file_too_large gap. */
export function diffFileFromGitHub(
  entry: GitHubDiffEntry,
  limits: DiffLimits,
): { file: DiffFile; tooLarge: boolean } {
  let change = CHANGE[entry.status] ?? 'modified';
  if (change === 'copied' && !limits.detectCopies) change = 'added';
  const path = entry.filename;
  const file: DiffFile = {
    path,
    oldPath:
      (change === 'renamed' || change === 'copied') && entry.previous_filename
        ? entry.previous_filename
        : null,
    change,
    binary: false,
    oldMode: null,
    newMode: null,
    language: languageForPath(path),
    additions: 0,
    deletions: 0,
    changedLines: [],
    hunks: [],
    skipped: null,
  };
  const counted = entry.additions + entry.deletions;
  const tooLarge = () => {
    file.additions = entry.additions;
    file.deletions = entry.deletions;
    file.skipped = {
      code: 'file_too_large',
      message:
        `${path} changes ${counted} lines; over the limit ` +
        (entry.patch === undefined
          ? '(GitHub does not return a diff this large), so it was not diffed'
          : `(${limits.maxFileChangedLines} changed lines or ${limits.maxFileBytes} bytes of patch per file), so it was not diffed`),
    };
    return { file, tooLarge: true };
  };
  if (entry.patch === undefined || entry.patch === null) {
    if (counted > 0) return tooLarge();
    const noContent =
      change === 'renamed' || change === 'copied' || entry.sha === EMPTY_BLOB || entry.status === 'unchanged';
    if (!noContent) {
      file.binary = true;
      file.skipped = { code: 'binary_file', message: `${path} is binary; it was not diffed` };
    }
    return { file, tooLarge: false };
  }
  if (counted > limits.maxFileChangedLines || Buffer.byteLength(entry.patch) > limits.maxFileBytes)
    return tooLarge();
  const parsed = parsePatch(entry.patch);
  file.hunks = parsed.hunks;
  file.changedLines = parsed.changedLines;
  file.additions = parsed.additions;
  file.deletions = parsed.deletions;
  return { file, tooLarge: false };
}
