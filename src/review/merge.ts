/**
 * Merge and dedupe: reviewers that report the same defect (same file, overlapping lines, same
 * kind of problem) become one finding, keeping the highest severity and naming every reviewer.
 */

import { runCooperatively, runToEnd, type Steps, slicer } from '../core/cooperative';
import { type FindingDraft, FOUND_SECRETS, mostSevere, severityRank } from '../core/review';

export interface MergedFinding extends FindingDraft {
  reviewers: string[];
}

/** Free-form categories (from model reviewers) folded onto the rule engines' ones. */
export function canonicalCategory(category: string): string {
  const c = category.toLowerCase();
  if (/secret|credential|token leak|api key/.test(c)) return 'secrets';
  if (/secur|inject|xss|ssrf|travers|crypto|deserial|auth/.test(c)) return 'security';
  if (/perf/.test(c)) return 'performance';
  if (/bug|correct|logic|error|async|promise|null|race/.test(c)) return 'correctness';
  return c || 'general';
}

/** Same rule: the spans must overlap. Different reviewers: a line of slack, as models point loosely. */
const overlaps = (a: FindingDraft, b: FindingDraft, slack: number) =>
  a.line <= b.endLine + slack && b.line <= a.endLine + slack;

/**
 * The order drafts are grouped in: most severe first, deterministic engines before models on ties
 * (so the kept title and rule do not flip between runs), then rule, then line; ties keep their
 * order. Sorted by precomputed numbers, so tens of thousands of drafts sort in one short slice.
 */
function primaryFirst(drafts: FindingDraft[]): FindingDraft[] {
  const rules = [...new Set(drafts.map((d) => d.rule))].sort((a, b) => a.localeCompare(b));
  const ruleRank = new Map(rules.map((r, i) => [r, i]));
  const key = drafts.map(
    (d) =>
      (severityRank(d.severity) * 2 + (d.rule.startsWith('llm/') ? 1 : 0)) * rules.length +
      (ruleRank.get(d.rule) as number),
  );
  const order = drafts.map((_, i) => i);
  order.sort(
    (i, j) =>
      (key[i] as number) - (key[j] as number) ||
      (drafts[i] as FindingDraft).line - (drafts[j] as FindingDraft).line ||
      i - j,
  );
  return order.map((i) => drafts[i] as FindingDraft);
}

/** A span longer than this is not indexed line by line; such members are checked for every draft. */
const WIDE_SPAN = 64;

/**
 * One path's groups, indexed by the lines their members cover, so a draft is compared with the
 * groups near it rather than with every group of the file (a file with thousands of findings).
 */
class PathGroups {
  readonly groups: FindingDraft[][] = [];
  private readonly byLine = new Map<number, number[]>();
  private readonly wide: number[] = [];

  /** Indices of the groups with a member that could overlap `draft` with a line of slack, ascending. */
  near(draft: FindingDraft): number[] {
    const found = new Set<number>(this.wide);
    const lo = Math.min(draft.line, draft.endLine) - 1;
    const hi = Math.max(draft.line, draft.endLine) + 1;
    for (let line = lo; line <= hi; line++) for (const i of this.byLine.get(line) ?? []) found.add(i);
    return [...found].sort((a, b) => a - b);
  }

  add(draft: FindingDraft, index: number): void {
    const lo = Math.min(draft.line, draft.endLine);
    const hi = Math.max(draft.line, draft.endLine);
    if (!(hi - lo <= WIDE_SPAN)) {
      if (!this.wide.includes(index)) this.wide.push(index);
      return;
    }
    for (let line = lo; line <= hi; line++) {
      const at = this.byLine.get(line);
      if (!at) this.byLine.set(line, [index]);
      else if (!at.includes(index)) at.push(index);
    }
  }
}

export function mergeFindings(drafts: FindingDraft[]): MergedFinding[] {
  return runToEnd(mergeSteps(drafts));
}

/** `mergeFindings`, giving the event loop a turn every few hundred findings (core/cooperative.ts). */
export function mergeFindingsCooperatively(drafts: FindingDraft[]): Promise<MergedFinding[]> {
  return runCooperatively(mergeSteps(drafts));
}

/** `mergeFindings` in slices. */
export function* mergeSteps(drafts: FindingDraft[]): Steps<MergedFinding[]> {
  const groups: FindingDraft[][] = [];
  const byPath = new Map<string, PathGroups>();
  const categories = new Map<string, string>();
  const categoryOf = (d: FindingDraft) => {
    let c = categories.get(d.category);
    if (c === undefined) {
      c = canonicalCategory(d.category);
      categories.set(d.category, c);
    }
    return c;
  };
  const sorted = primaryFirst(drafts);
  yield;
  const tick = slicer();
  for (const draft of sorted) {
    if (tick()) yield;
    let path = byPath.get(draft.path);
    if (!path) {
      path = new PathGroups();
      byPath.set(draft.path, path);
    }
    const category = categoryOf(draft);
    const index = path.near(draft).find((i) =>
      (path.groups[i] as FindingDraft[]).some((member) =>
        member.rule === draft.rule
          ? overlaps(member, draft, 0)
          : // Another reviewer's report of the same kind of problem at the same place is the same
            // defect; one reviewer's two rules are two defects, even on adjacent lines.
            member.reviewer !== draft.reviewer &&
            overlaps(member, draft, 1) &&
            categoryOf(member) === category,
      ),
    );
    if (index !== undefined) {
      (path.groups[index] as FindingDraft[]).push(draft);
      path.add(draft, index);
    } else {
      const created = [draft];
      path.groups.push(created);
      path.add(draft, path.groups.length - 1);
      groups.push(created);
    }
  }
  const out: MergedFinding[] = [];
  for (const group of groups) {
    if (tick()) yield;
    const [primary, ...rest] = group as [FindingDraft, ...FindingDraft[]];
    const severity = rest.reduce((s, d) => mostSevere(s, d.severity), primary.severity);
    const reviewers = [...new Set(group.map((d) => d.reviewer))];
    // Two copies of one rule on overlapping lines are one finding; keep the primary's span.
    out.push({
      ...primary,
      severity,
      category: categoryOf(primary),
      reviewers,
      suggestion: primary.suggestion ?? rest.find((d) => d.suggestion)?.suggestion,
      ...secretsOf(group),
    });
  }
  return out;
}

/** Every credential the group's drafts point at, so the merged finding masks them all. */
function secretsOf(group: FindingDraft[]): Pick<FindingDraft, typeof FOUND_SECRETS> {
  const all = group.flatMap((d) => d[FOUND_SECRETS] ?? []);
  return all.length > 0 ? { [FOUND_SECRETS]: [...new Set(all)] } : {};
}
