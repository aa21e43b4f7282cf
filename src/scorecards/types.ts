/**
 * What a scorecard is judged from (facts, read by gather.ts) and what it says (check results,
 * the score and level, quick actions). Evaluation is a pure function of the facts, so every
 * result can be traced to a fact and tested without a repository.
 */

import type { RepoKnowledge } from '../core/repo-knowledge';
import type { Gap } from '../core/runs';
import type { CheckCategory, CheckId, CheckResult } from './definitions';

/** Facts a scorecard needs; each may be missing, and `missing` then says why, by name. */
export type FactName = 'knowledge' | 'tree' | 'scripts' | 'required_checks' | 'ledger';

/** A finding as a check names it in its evidence. */
export interface FindingRef {
  id: string;
  path: string;
  line: number;
  rule: string;
  status: 'open' | 'fixed' | 'dismissed';
  /** The pull request it was found on, when it was a pull request's. */
  pull_request: number | null;
}

/** Ledger statistics: the findings svc recorded for the project. */
export interface LedgerFacts {
  /** Start of the window the rates are measured over (now minus WINDOW_DAYS). */
  since: Date;
  /** Completed review passes, ever, and when the first one ran. */
  reviews: number;
  firstReviewAt: Date | null;
  /** Findings created since `since`, by their status now. */
  created: { total: number; open: number; fixed: number; dismissed: number };
  /** Hours from creation to fix of every finding fixed since `since`. */
  fixHours: number[];
  /** Per rule, findings created since `since` and how many of them are dismissed. */
  rules: { rule: string; findings: number; dismissed: number }[];
  /** Pull requests svc has seen merge. */
  mergedPullRequests: number;
  /** P0 findings still open on pull requests that merged (at most 20 listed; `openP0Total` counts all). */
  openP0OnMerged: FindingRef[];
  openP0Total: number;
  /**
   * Secret findings ever recorded (the secrets reviewer's, and hard-coded credentials) that are
   * not dismissed: at most 20 listed, `secretTotal` counts all; `secretDismissed` those dismissed.
   */
  secretFindings: FindingRef[];
  secretTotal: number;
  secretDismissed: number;
}

export interface ScorecardFacts {
  now: Date;
  host: { kind: 'local' | 'github' | null; defaultBranch: string | null };
  /** The default-branch commit the tree was read at; null when it was not read. */
  commitSha: string | null;
  knowledge: { id: string; content: RepoKnowledge; gaps: Gap[]; commitSha: string } | null;
  /** Every path of the default-branch tree; null when it was not read. */
  paths: string[] | null;
  /** The root package.json's scripts: {} when there is none; null when it could not be read. */
  rootScripts: Record<string, string> | null;
  /** Status checks branch protection requires on the default branch; null: the host cannot tell. */
  requiredChecks: string[] | null;
  ledger: LedgerFacts | null;
  /** Why a fact is missing (null above), by fact. */
  missing: Partial<Record<FactName, string>>;
}

export interface Evidence {
  paths?: string[];
  numbers?: Record<string, number>;
  note: string;
}

export interface CheckOutcome {
  check: CheckId;
  title: string;
  category: CheckCategory;
  weight: number;
  result: CheckResult;
  evidence: Evidence;
  remedy: string;
}

export interface ScorecardSummary {
  /** 0–100; null when no check could be decided. */
  score: number | null;
  level: { level: number; name: string };
  next_level: { level: number; name: string; needs: CheckId[] } | null;
  counts: { pass: number; fail: number; unknown: number };
  /** The checks whose result is unknown, by id (excluded from the score). */
  unknown: CheckId[];
}

export const QUICK_ACTION_KINDS = [
  'add_ci_test_workflow',
  'require_review_check',
  'add_svc_json',
  'add_codeowners',
  'commit_lockfile',
  'declare_runtime',
  'add_tests',
  'enforce_linter',
  'enforce_formatter',
  'enforce_type_checking',
  'fix_open_p0',
  'rotate_secrets',
  'fix_findings',
  'tune_noisy_rules',
] as const;
export type QuickActionKind = (typeof QUICK_ACTION_KINDS)[number];

export const QUICK_ACTION_STATUSES = ['available', 'running', 'done', 'failed'] as const;
export type QuickActionStatus = (typeof QUICK_ACTION_STATUSES)[number];

/** A draft pull request a quick action opens: its files and words. */
export interface PlannedChange {
  files: { path: string; content: string }[];
  pull_request: { title: string; body: string };
  commit_message: string;
  /** Paths the change replaces on purpose (an invalid svc.json); any other existing path stops it. */
  replaces?: string[];
}

export interface SuggestedAction {
  kind: QuickActionKind;
  check: CheckId;
  title: string;
  /** One sentence: what it will do. */
  does: string;
  /** What svc runs: a draft pull request, or the review check made required; null: nothing. */
  execution: 'draft_pull_request' | 'require_review_check' | null;
  /** Why svc cannot do it (when `execution` is null). */
  why_no_operation: string | null;
  change: PlannedChange | null;
}
