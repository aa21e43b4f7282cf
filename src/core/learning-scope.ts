/**
 * A learning's machine-readable scope: which findings rule reviewers treat differently because of
 * it (a rule id and/or a path glob) and how (`suppress`: recorded as dismissed with the learning
 * as its reason; `downgrade`: one severity lower). A learning without a scope is a sentence for
 * model reviewers only.
 */
import { matchesGlob } from './globs';
import type { Severity } from './review';

export const LEARNING_ACTIONS = ['suppress', 'downgrade'] as const;
export type LearningAction = (typeof LEARNING_ACTIONS)[number];

export interface LearningScope {
  /** Full rule id (`security/weak-hash`); omitted: any rule. */
  rule?: string;
  /** Path glob (`legacy/**`); omitted: any path. */
  path?: string;
  action: LearningAction;
}

/** Whether the scope covers a finding of `rule` at `path` (a scope names at least one of them). */
export function scopeCovers(scope: LearningScope, finding: { rule: string; path: string }): boolean {
  if (scope.rule === undefined && scope.path === undefined) return false;
  if (scope.rule !== undefined && scope.rule !== finding.rule) return false;
  return scope.path === undefined || matchesGlob(finding.path, scope.path);
}

const LOWER: Record<Severity, Severity> = { P0: 'P1', P1: 'P2', P2: 'P2' };

/** One severity lower; P2 stays P2. */
export const downgraded = (severity: Severity): Severity => LOWER[severity];
