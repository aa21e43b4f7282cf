/**
 * Merge and dedupe: reviewers that report the same defect (same file, overlapping lines, same
 * kind of problem) become one finding, keeping the highest severity and naming every reviewer.
 */
import { type FindingDraft, mostSevere, severityRank } from '../core/review';

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

/** Deterministic engines first on ties, so the kept title and rule do not flip between runs. */
function primaryFirst(a: FindingDraft, b: FindingDraft): number {
  const bySeverity = severityRank(a.severity) - severityRank(b.severity);
  if (bySeverity !== 0) return bySeverity;
  const aModel = a.rule.startsWith('llm/') ? 1 : 0;
  const bModel = b.rule.startsWith('llm/') ? 1 : 0;
  return aModel - bModel || a.rule.localeCompare(b.rule) || a.line - b.line;
}

export function mergeFindings(drafts: FindingDraft[]): MergedFinding[] {
  const groups: FindingDraft[][] = [];
  const byPath = new Map<string, FindingDraft[][]>();
  for (const draft of [...drafts].sort(primaryFirst)) {
    const candidates = byPath.get(draft.path) ?? [];
    const category = canonicalCategory(draft.category);
    const group = candidates.find((g) =>
      g.some((member) =>
        member.rule === draft.rule
          ? overlaps(member, draft, 0)
          : // Another reviewer's report of the same kind of problem at the same place is the same
            // defect; one reviewer's two rules are two defects, even on adjacent lines.
            member.reviewer !== draft.reviewer &&
            overlaps(member, draft, 1) &&
            canonicalCategory(member.category) === category,
      ),
    );
    if (group) group.push(draft);
    else {
      const created = [draft];
      candidates.push(created);
      byPath.set(draft.path, candidates);
      groups.push(created);
    }
  }
  return groups.map((group) => {
    const [primary, ...rest] = group as [FindingDraft, ...FindingDraft[]];
    const severity = rest.reduce((s, d) => mostSevere(s, d.severity), primary.severity);
    const reviewers = [...new Set(group.map((d) => d.reviewer))];
    // Two copies of one rule on overlapping lines are one finding; keep the primary's span.
    return {
      ...primary,
      severity,
      category: canonicalCategory(primary.category),
      reviewers,
      suggestion: primary.suggestion ?? rest.find((d) => d.suggestion)?.suggestion,
    };
  });
}
