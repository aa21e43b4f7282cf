/**
 * What a review does to a findings ledger, decided without any storage: which findings are new,
 * which were seen before (and whether that reopens or dismisses them), which are fixed. The
 * database ledger (./ledger.ts) and the CLI's file ledger (./file-ledger.ts) both apply this
 * plan, so a finding behaves the same wherever its ledger lives.
 *
 * The rules: a finding is known by its path, rule and the code it points at (not its line), or,
 * for one that stands for an idiom repeated in a file, by its path, rule and message (its
 * `identity`: reviewers/builtin/group.ts), so copies added or fixed leave it the same; a
 * re-run never duplicates a finding it sees again; a finding whose anchor is gone from the new
 * head and that was not found again becomes fixed; a dismissed finding stays dismissed; a finding
 * a person suppressed inline (`svc-ignore`) is recorded as dismissed with that reason.
 */

import { runToEnd, type Steps, slicer } from '../core/cooperative';
import { FOUND_SECRETS, findingFingerprint, normalizeAnchor } from '../core/review';
import { anchorOccursIn, maskAnchor } from '../core/secret-mask';

/** Characters of a file searched for an anchor that count as one item of work (core/cooperative.ts). */
const SEARCHED_CHARS_PER_ITEM = 10_000;

import type { MergedFinding } from './merge';

export type FindingStatus = 'open' | 'fixed' | 'dismissed';

/** The new file's text for a path at head, or null when the path no longer exists. */
export type HeadText = (path: string) => string | null;

/** What the reconciliation reads of a finding already in the ledger. */
export interface LedgerEntry {
  fingerprint: string;
  status: FindingStatus;
  path: string;
  /** The normalized source the finding points at, its credentials masked. */
  anchorText: string;
  reviewers: string[];
}

/** A finding this run found that the ledger already holds. */
export interface SeenAgain<E extends LedgerEntry> {
  entry: E;
  finding: MergedFinding;
  /** Reviewers that ever reported it (the ledger's and this run's). */
  reviewers: string[];
  /** `reopen`: it was fixed and is back; `dismiss`: an inline `svc-ignore` now answers it. */
  transition: 'reopen' | 'dismiss' | null;
  /** The inline reason when transition is `dismiss`. */
  dismissedReason: string | null;
  /**
   * The anchor to store now, when it can differ from the stored one (a finding known by its
   * `identity`, whose first place moves as copies come and go); null: keep the stored anchor.
   */
  anchor: string | null;
}

/** A finding the ledger does not hold yet. */
export interface NewFinding {
  finding: MergedFinding;
  fingerprint: string;
  anchor: string;
  /** `dismissed` when an inline `svc-ignore` already answers it. */
  status: 'open' | 'dismissed';
  dismissedReason: string | null;
}

export interface Reconciliation<E extends LedgerEntry> {
  /** Known findings found again, in report order (before the new ones). */
  seenAgain: SeenAgain<E>[];
  fresh: NewFinding[];
  /** Open findings whose code is gone from an inspected file and that were not found again. */
  fixed: E[];
  reopened: number;
  stillDismissed: number;
  /** Findings this run found with an inline `svc-ignore` and records as dismissed. */
  dismissedInline: number;
}

/** The lines of each file at head, split once however many findings point into it. */
function linesAtHead(headText: HeadText): (path: string) => string[] | null {
  const cache = new Map<string, string[] | null>();
  return (path) => {
    let lines = cache.get(path);
    if (lines === undefined) {
      lines = headText(path)?.split('\n') ?? null;
      cache.set(path, lines);
    }
    return lines;
  };
}

function anchorOf(lines: string[] | null, line: number, endLine: number): string {
  if (lines === null) return '';
  return lines.slice(line - 1, endLine).join('\n');
}

/**
 * What a ledger stores of a finding as last reported (both the database and the file ledger):
 * where it is and what it says. Each ledger adds its own bookkeeping (commit, run, time).
 */
export function reportedFields(finding: MergedFinding) {
  return {
    severity: finding.severity,
    path: finding.path,
    line: finding.line,
    endLine: finding.endLine,
    title: finding.title,
    body: finding.body,
    category: finding.category,
    suggestion: finding.suggestion ?? null,
  };
}

export interface Fingerprinted {
  finding: MergedFinding;
  fingerprint: string;
  /**
   * The anchor as stored: normalized, with every credential found in its file this run masked
   * (whichever reviewer reported the finding). The fingerprint is of the anchor as written.
   */
  anchor: string;
  /**
   * For a finding known by its `identity`: the fingerprints each of its places would have had
   * as a finding known by its code, so a ledger row recorded that way (before the idiom was
   * grouped, or by an earlier version) is found again rather than duplicated.
   */
  alternates: string[];
}

/** Prefixed to an `identity` in the fingerprint, so it never equals some code's. */
const IDENTITY_MARK = 'identity:\u0001';

/** Fingerprints for this run's findings; identical code flagged twice in a file stays two findings. */
export function fingerprintAll(found: MergedFinding[], headText: HeadText): Fingerprinted[] {
  return runToEnd(fingerprintSteps(found, headText));
}

/** `fingerprintAll` in slices (core/cooperative.ts). */
export function* fingerprintSteps(found: MergedFinding[], headText: HeadText): Steps<Fingerprinted[]> {
  // By path (in localeCompare order, compared once per distinct path), then line; ties keep
  // their order. One comparator sort of tens of thousands of findings held the event loop for
  // 100 ms: findings are bucketed by path instead, and each file's few sorted by line (a stable
  // sort), yielding between files.
  const paths = [...new Set(found.map((f) => f.path))].sort((a, b) => a.localeCompare(b));
  const byPath = new Map<string, MergedFinding[]>(paths.map((p) => [p, []]));
  for (const finding of found) byPath.get(finding.path)?.push(finding);
  yield;
  const tick = slicer();
  const sorted: MergedFinding[] = [];
  for (const bucket of byPath.values()) {
    bucket.sort((a, b) => a.line - b.line);
    for (const finding of bucket) sorted.push(finding);
    if (tick(bucket.length)) yield;
  }
  const lines = linesAtHead(headText);
  const secretsByPath = new Map<string, string[]>();
  for (const finding of found) {
    const secrets = finding[FOUND_SECRETS];
    if (secrets?.length)
      secretsByPath.set(finding.path, [...(secretsByPath.get(finding.path) ?? []), ...secrets]);
  }
  const occurrences = new Map<string, number>();
  const out: Fingerprinted[] = [];
  for (const finding of sorted) {
    const fileLines = lines(finding.path);
    const anchor = normalizeAnchor(anchorOf(fileLines, finding.line, finding.endLine));
    const known =
      finding.identity === undefined ? anchor : `${IDENTITY_MARK}${normalizeAnchor(finding.identity)}`;
    const base = `${finding.path}\u0000${finding.rule}\u0000${known}`;
    const n = (occurrences.get(base) ?? 0) + 1;
    occurrences.set(base, n);
    const secrets = secretsByPath.get(finding.path);
    out.push({
      finding,
      anchor: secrets ? maskAnchor(anchor, secrets) : anchor,
      fingerprint: findingFingerprint({
        path: finding.path,
        rule: finding.rule,
        anchorText: n === 1 ? known : `${known}#${n}`,
      }),
      alternates: finding.identity === undefined ? [] : placeFingerprints(finding, fileLines),
    });
    if (tick()) yield;
  }
  return out;
}

/**
 * The fingerprints a finding's places would have as findings known by their code, in line order:
 * identical code at several places numbered as fingerprintSteps numbers it (`#2`, `#3`...).
 */
function placeFingerprints(finding: MergedFinding, fileLines: string[] | null): string[] {
  const places = finding.locations ?? [{ start: finding.line, end: finding.endLine }];
  const seen = new Map<string, number>();
  return places.map(({ start, end }) => {
    const anchor = normalizeAnchor(anchorOf(fileLines, start, end));
    const n = (seen.get(anchor) ?? 0) + 1;
    seen.set(anchor, n);
    return findingFingerprint({
      path: finding.path,
      rule: finding.rule,
      anchorText: n === 1 ? anchor : `${anchor}#${n}`,
    });
  });
}

/** True when the normalized (and maybe masked) anchor still occurs in the file's text at head. */
export function anchorStillPresent(anchor: string, text: string | null): boolean {
  if (text === null) return false;
  return anchorOccursIn(anchor, normalizeAnchor(text));
}

/**
 * The plan for recording this run's findings in a ledger holding `existing`.
 * `inspectedPaths`: paths whose head content was read this run; open findings elsewhere are left
 * as they are (their code was not looked at, so it cannot be known to be gone).
 */
export function reconcileLedger<E extends LedgerEntry>(
  existing: readonly E[],
  found: MergedFinding[],
  headText: HeadText,
  inspectedPaths: ReadonlySet<string>,
): Reconciliation<E> {
  return runToEnd(reconcileSteps(existing, found, headText, inspectedPaths));
}

/** `reconcileLedger` in slices (core/cooperative.ts). */
export function* reconcileSteps<E extends LedgerEntry>(
  existing: readonly E[],
  found: MergedFinding[],
  headText: HeadText,
  inspectedPaths: ReadonlySet<string>,
): Steps<Reconciliation<E>> {
  const byFingerprint = new Map(existing.map((entry) => [entry.fingerprint, entry]));
  const seen = new Set<string>();
  const plan: Reconciliation<E> = {
    seenAgain: [],
    fresh: [],
    fixed: [],
    reopened: 0,
    stillDismissed: 0,
    dismissedInline: 0,
  };
  const tick = slicer();

  for (const { finding, fingerprint, anchor, alternates } of yield* fingerprintSteps(found, headText)) {
    if (tick()) yield;
    seen.add(fingerprint);
    let entry = byFingerprint.get(fingerprint);
    // Known by its identity now: a row one of its places made as a finding known by its code.
    let byAlternate = false;
    for (const alternate of entry ? [] : alternates) {
      const candidate = byFingerprint.get(alternate);
      if (candidate && !seen.has(candidate.fingerprint)) {
        entry = candidate;
        byAlternate = true;
        seen.add(candidate.fingerprint);
        break;
      }
    }
    // An inline `svc-ignore` is a person's answer, recorded like a `wontfix:` reply.
    const inlineReason = finding.dismissal?.reason ?? null;
    if (!entry) {
      if (inlineReason !== null) plan.dismissedInline++;
      plan.fresh.push({
        finding,
        fingerprint,
        anchor,
        status: inlineReason !== null ? 'dismissed' : 'open',
        dismissedReason: inlineReason,
      });
      continue;
    }
    // A dismissal is a person's decision: a re-run does not undo it.
    const newlyDismissed = inlineReason !== null && entry.status !== 'dismissed';
    const reopened = entry.status === 'fixed' && !newlyDismissed;
    if (entry.status === 'dismissed') plan.stillDismissed++;
    if (newlyDismissed) plan.dismissedInline++;
    if (reopened) plan.reopened++;
    plan.seenAgain.push({
      entry,
      finding,
      reviewers: [...new Set([...entry.reviewers, ...finding.reviewers])],
      transition: newlyDismissed ? 'dismiss' : reopened ? 'reopen' : null,
      dismissedReason: newlyDismissed ? inlineReason : null,
      // A row found by its identity follows its first place; one found by a place keeps that
      // place's code, which is what its fingerprint was made of (fixed when that code is gone).
      anchor: finding.identity !== undefined && !byAlternate ? anchor : null,
    });
  }

  // Each inspected file normalized once, however many of its findings are checked against it.
  const normalized = new Map<string, string | null>();
  for (const entry of existing) {
    if (tick()) yield;
    if (entry.status !== 'open' || seen.has(entry.fingerprint) || !inspectedPaths.has(entry.path)) continue;
    let text = normalized.get(entry.path);
    if (text === undefined) {
      const raw = headText(entry.path);
      text = raw === null ? null : normalizeAnchor(raw);
      normalized.set(entry.path, text);
    }
    // A search through a large file counts as more work before the next yield.
    if (text !== null && tick(text.length / SEARCHED_CHARS_PER_ITEM)) yield;
    if (text !== null && anchorOccursIn(entry.anchorText, text)) continue;
    plan.fixed.push(entry);
  }
  return plan;
}
