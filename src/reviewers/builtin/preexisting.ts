/**
 * Findings a change did not introduce. Rule reviewers report findings on the lines a diff adds,
 * but a change that re-indents a block, reformats a file or moves code within it "adds" every
 * line it touched, and each defect those lines already held would be reported as if it were new:
 * a formatter run would bury a pull request in old findings. So a finding on a touched line is
 * dropped when the same rule matched the same code, whitespace aside, in the file's base version,
 * as diff-aware scanners compare findings between base and head. Counted per code: a change that
 * adds a second copy of a defect the base had once still reports one.
 *
 * A rule that flags a value knows a match by its code up to the end of that value, and a call of a
 * helper by the sink it reaches and the argument it passes (match-file.ts `identityOf`): an option
 * added after the value, or a renamed helper, leaves an old defect old. A defect whose flagged code
 * changed (a renamed variable in the flagged call) is a new match and stays reported, and so does
 * code that now reaches a sink it did not (the flow rules match the base with the base's own flow).
 */
import type { FindingDraft } from '../../core/review';
import type { Gap } from '../../core/runs';
import type { RuleLanguage } from '../../skills/catalog';
import type { ReviewFile } from '../types';

/** A file with findings, the rules that made them, and the findings themselves. */
export interface Touched<Rule> {
  file: ReviewFile;
  /** Where the file was at the base (basePathOf). */
  basePath: string;
  language: RuleLanguage;
  rules: Rule[];
  found: FindingDraft[];
}

/** Changes whose file had a base version of its own: modified, or renamed (read at its old path). */
export function basePathOf(file: ReviewFile): string | null {
  const { change, path, oldPath } = file.diff;
  if (change === 'modified' || change === 'type_changed') return path;
  if (change === 'renamed') return oldPath ?? path;
  return null; // added; a copy's source is another file, whose defects the copy does add
}

/** What identifies a match across versions: its rule and its code with whitespace collapsed. */
export function matchKey(rule: string, code: string): string {
  return `${rule}\u0000${code.replace(/\s+/g, ' ').trim()}`;
}

export class PreexistingCounter {
  readonly dropped = new Set<FindingDraft>();
  private readonly byRule = new Map<string, number>();
  private readonly files = new Set<string>();

  /** Drops each finding of `found` whose key the base still has unclaimed. */
  add(path: string, baseKeys: string[], found: FindingDraft[], keys: Map<FindingDraft, string>): void {
    const left = new Map<string, number>();
    for (const key of baseKeys) left.set(key, (left.get(key) ?? 0) + 1);
    for (const finding of found) {
      const key = keys.get(finding);
      const n = key === undefined ? 0 : (left.get(key) ?? 0);
      if (n === 0 || key === undefined) continue;
      left.set(key, n - 1);
      this.dropped.add(finding);
      this.byRule.set(finding.rule, (this.byRule.get(finding.rule) ?? 0) + 1);
      this.files.add(path);
    }
  }

  /** The findings not reported, named: nothing is dropped silently. */
  gap(): Gap | null {
    if (this.dropped.size === 0) return null;
    const rules = [...this.byRule].map(([rule, n]) => `${rule} ×${n}`).join(', ');
    return {
      code: 'builtin_preexisting_not_reported',
      message: `${this.dropped.size} finding(s) in ${this.files.size} file(s) on lines this change touched were already there at its base (same rule, same code), so they are not reported as new: ${rules}`,
    };
  }
}
