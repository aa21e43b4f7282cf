/**
 * The review domain: diffs as reviewers see them, findings as reviewers report them, and the
 * identity (fingerprint) that lets the ledger recognise a finding again on a later run.
 */
import { createHash } from 'node:crypto';
import type { Gap } from './runs';

export const SEVERITIES = ['P0', 'P1', 'P2'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Lower is more severe. */
export const severityRank = (s: Severity) => SEVERITIES.indexOf(s);
export const mostSevere = (a: Severity, b: Severity): Severity =>
  severityRank(a) <= severityRank(b) ? a : b;

/** An inclusive range of line numbers, 1-based. */
export interface LineRange {
  start: number;
  end: number;
}

export type FileChange = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';

export interface DiffLine {
  kind: 'add' | 'del' | 'context';
  text: string;
  /** Line number in the old file (del, context). */
  oldLine: number | null;
  /** Line number in the new file (add, context). */
  newLine: number | null;
}

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  /** Path in the new tree (for a deleted file: its old path). */
  path: string;
  /** Path in the old tree when it differs (renames, copies). */
  oldPath: string | null;
  change: FileChange;
  binary: boolean;
  oldMode: string | null;
  newMode: string | null;
  /** Language id when recognised (typescript, javascript, python, …). */
  language: string | null;
  additions: number;
  deletions: number;
  /** New-file lines the change added, merged into sorted ranges: the only lines findings may point at. */
  changedLines: LineRange[];
  hunks: Hunk[];
  /** Set when the file was not diffed in full (too large, binary, undecodable): the reason, by name. */
  skipped: Gap | null;
}

export interface Diff {
  base: string;
  head: string;
  files: DiffFile[];
  /** Shortfalls of the diff as a whole (e.g. files skipped for size). */
  gaps: Gap[];
}

/**
 * The key a finding or a secrets-skill message keeps its credentials under: a symbol, so no JSON
 * made of it (the API, the CLI's output and ledger file, a transcript) can carry them, while
 * spreading the object into a new one (merge, policy) keeps them.
 */
export const FOUND_SECRETS: unique symbol = Symbol('svc.foundSecrets');

/** What a reviewer reports, before merge and the ledger. */
export interface FindingDraft {
  severity: Severity;
  path: string;
  line: number;
  endLine: number;
  title: string;
  /** Why it is a defect and how to fix it (markdown). */
  body: string;
  /** Rule id (`js/eval-injection`) or, for model reviewers, `llm/<category>`. */
  rule: string;
  category: string;
  /** The reviewer that reported it. */
  reviewer: string;
  /** A replacement for lines line..endLine, when the reviewer can propose one. */
  suggestion?: string | undefined;
  /** Set when a person already answered it (an inline `svc-ignore`): the ledger records it dismissed. */
  dismissal?: { reason: string } | undefined;
  /**
   * Every place of a finding that stands for several (one rule's idiom repeated in a file:
   * reviewers/builtin/group.ts), in line order, the first being line..endLine. Absent: one place.
   */
  locations?: LineRange[] | undefined;
  /**
   * What the ledger knows the finding by, with its path and rule, instead of the code at
   * line..endLine: set where that place can move among the copies the finding stands for (a
   * grouped idiom: its rule's message), so a copy added or fixed leaves it the same finding.
   */
  identity?: string | undefined;
  /**
   * The credentials it points at (the secrets skill): masked in every finding's anchor on its
   * path before a ledger stores it (core/secret-mask.ts), and never stored themselves.
   */
  [FOUND_SECRETS]?: string[] | undefined;
}

export function isChangedLine(file: Pick<DiffFile, 'changedLines'>, line: number): boolean {
  return file.changedLines.some((r) => line >= r.start && line <= r.end);
}

/** The changed line nearest to `line` in the file, or null when the file has no changed line. */
export function snapToChangedLine(file: Pick<DiffFile, 'changedLines'>, line: number): number | null {
  let best: number | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const r of file.changedLines) {
    const candidate = line < r.start ? r.start : Math.min(line, r.end);
    const distance = Math.abs(candidate - line);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Whitespace-insensitive form of source text, so re-indentation does not change identity. */
export const normalizeAnchor = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * A finding's identity across runs: where (path), what (rule) and the code it points at, not
 * its line number, so an edit above it does not make it a new finding.
 */
export function findingFingerprint(input: { path: string; rule: string; anchorText: string }): string {
  return createHash('sha256')
    .update(`${input.path}\u0000${input.rule}\u0000${normalizeAnchor(input.anchorText)}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * The ledger a finding belongs to: one per pull request, and one per commit range for reviews of
 * a range, so two reviews of the same pull request or range never hold the same defect twice.
 */
export function ledgerKeyOf(
  target: { pullRequestId: string } | { pullRequestId: null; baseSha: string; headSha: string },
): string {
  return target.pullRequestId !== null
    ? `pr:${target.pullRequestId}`
    : `range:${target.baseSha}..${target.headSha}`;
}

export type FindingStatus = 'open' | 'fixed' | 'dismissed';

/** What a person can answer about a finding, over the API, MCP, a code-host reply or the CLI. */
export const DISPOSITION_KINDS = ['dismissed', 'reopened'] as const;
export type DispositionKind = (typeof DISPOSITION_KINDS)[number];

/**
 * Why `kind` cannot apply to a finding in `status`, or null when it can. A fixed finding is
 * neither dismissed nor reopened by hand: its code is gone from the head, it no longer counts
 * toward the check, and a review that finds the code again reopens it by itself. Dismissing twice
 * is refused too, so a reason is replaced only by reopening first, and the history stays honest.
 */
export function dispositionRefusal(status: FindingStatus, kind: DispositionKind): string | null {
  if (status === 'fixed')
    return 'it is fixed (its code is gone from the head, so it no longer counts); a review that finds it again reopens it';
  if (kind === 'dismissed' && status === 'dismissed')
    return 'it is already dismissed; reopen it first to dismiss it with another reason';
  if (kind === 'reopened' && status === 'open') return 'it is open: only a dismissed finding can be reopened';
  return null;
}
