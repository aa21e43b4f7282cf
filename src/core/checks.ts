/**
 * The `Service / Review` check: its conclusion from the open-findings ledger and the workspace
 * settings, the fixed titles for reviews that did not happen, and the review deadline.
 */
import type { Severity } from './review';

export const CHECK_NAME = 'Service / Review';

/** A pull request's `review_status`: the review lifecycle of the spec, in order. */
export const REVIEW_STATUSES = [
  'trigger',
  'planning',
  'skipped',
  'errored',
  'reviewing',
  'reviews_available',
  'summarizing',
  'reviewed',
] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export type CheckConclusionSetting = 'action_required' | 'failure' | 'neutral' | 'success';

export interface ConclusionSettings {
  'svc.checks.p0_conclusion': CheckConclusionSetting;
  'svc.checks.p1_conclusion': CheckConclusionSetting;
  'svc.checks.p2_conclusion': CheckConclusionSetting;
}

export interface OpenCounts {
  P0: number;
  P1: number;
  P2: number;
}

export function countOpen(findings: { severity: Severity; status: string }[]): OpenCounts {
  const counts: OpenCounts = { P0: 0, P1: 0, P2: 0 };
  for (const f of findings) if (f.status === 'open') counts[f.severity]++;
  return counts;
}

/** P0 open → the p0 setting; else P1 open → the p1 setting; else (P2 only or clean) → the p2 setting. */
export function reviewedConclusion(open: OpenCounts, settings: ConclusionSettings): CheckConclusionSetting {
  if (open.P0 > 0) return settings['svc.checks.p0_conclusion'];
  if (open.P1 > 0) return settings['svc.checks.p1_conclusion'];
  return settings['svc.checks.p2_conclusion'];
}

export function reviewedTitle(open: OpenCounts): string {
  const total = open.P0 + open.P1 + open.P2;
  if (total === 0) return 'Reviewed: no open findings';
  const parts = (['P0', 'P1', 'P2'] as const).filter((s) => open[s] > 0).map((s) => `${open[s]} ${s}`);
  return `Reviewed: ${parts.join(', ')} open`;
}

/** Fixed by the spec: not-reviewed outcomes are `skipped` with these titles. */
export const SKIPPED_FILTERED_TITLE = 'Skipped: draft / release PR / no reviewable diff';
export const SKIPPED_ERRORED_TITLE = 'Skipped: review failed to run — @service review now to retry';
export const STILL_REVIEWING_TITLE = 'Still reviewing — the verdict will replace this when the review lands';

/**
 * Automatic review turned off still completes the head's check (a required check that never
 * appears blocks the merge for good); the title says which switch and how to turn it back on.
 */
export const SKIPPED_PROJECT_OFF_TITLE =
  'Skipped: automatic review is off for this project (svc.review.enabled) — set it to true, or @service review now';
export const SKIPPED_PULL_REQUEST_OFF_TITLE =
  'Skipped: automatic review is off for this pull request — @service review on turns it back on';

/** What each brake is called in a check title; the settings name the switch to lift. */
const BRAKE_NAMES: Record<string, string> = {
  project_paused: 'the project is paused (svc.brakes.paused)',
  spend_cap_reached: 'the spend cap is reached (svc.brakes.spend_cap_usd)',
  budget_exceeded: 'the run budget is spent (svc.brakes.run_budget)',
  project_run_mode_unreadable: 'the brake settings are unreadable',
};

/**
 * The title of a review a brake refused: the spec's "not reviewed" is `skipped`; naming the
 * brake tells the reader it is the project's setting, not the review, that failed. Null when
 * `code` is no brake (the errored title applies).
 */
export function skippedBrakeTitle(code: string, details?: Record<string, unknown>): string | null {
  const brake =
    code === 'project_paused' && details?.approval_window
      ? 'outside the approval window (svc.brakes.approval_window)'
      : BRAKE_NAMES[code];
  return brake ? `Skipped: ${brake} — @service review now once it is lifted` : null;
}

/** Pull request size buckets for the deadline's history. */
export function sizeBucket(changedLines: number): 'xs' | 's' | 'm' | 'l' | 'xl' {
  if (changedLines <= 50) return 'xs';
  if (changedLines <= 250) return 's';
  if (changedLines <= 1_000) return 'm';
  if (changedLines <= 5_000) return 'l';
  return 'xl';
}

export const DEADLINE_CAP_MS = 10 * 60 * 1000;

/**
 * The review deadline: the p75 of past review durations in the same size bucket, never more
 * than ten minutes; with no history, the cap itself.
 */
export function reviewDeadlineMs(pastDurationsMs: number[], capMs = DEADLINE_CAP_MS): number {
  if (pastDurationsMs.length === 0) return capMs;
  const sorted = [...pastDurationsMs].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil(0.75 * sorted.length) - 1);
  return Math.min(capMs, Math.max(1, sorted[index] ?? capMs));
}

/** Titles of a skipped check that mean "not reviewed by choice" (review_status `skipped`). */
const NOT_REVIEWED_BY_CHOICE = new Set([
  SKIPPED_FILTERED_TITLE,
  SKIPPED_PROJECT_OFF_TITLE,
  SKIPPED_PULL_REQUEST_OFF_TITLE,
]);

/**
 * The review statuses a head's check agrees with, the one to restore first. A trigger that
 * changes nothing (deduplicated, dropped) puts the pull request back in step with its check
 * instead of leaving it at `trigger`.
 */
export function reviewStatusesOfCheck(check: {
  status: string;
  conclusion: string | null;
  title: string;
}): ReviewStatus[] {
  if (check.status === 'queued') return ['planning'];
  const underWay: ReviewStatus[] = ['reviewing', 'reviews_available', 'summarizing', 'planning'];
  if (check.status !== 'completed' || check.title === STILL_REVIEWING_TITLE) return underWay;
  if (check.conclusion === 'skipped')
    return NOT_REVIEWED_BY_CHOICE.has(check.title) ? ['skipped'] : ['errored'];
  return ['reviewed'];
}
