/**
 * A plan's lifecycle (spec "Plan status"), in one place: its states, what may move it, and the
 * event kinds that record each move. svc fills in what the spec leaves "not shown":
 *
 *   discovered ── plan-review task created ──▶ proposed ── review done ──▶ reviewed
 *   reviewed ── approve ──▶ approved (repo_write_status draft_pr_requested)
 *   reviewed ── reject ──▶ reviewed, approval_status rejected (a newer review may be approved later)
 *   approved ── draft pull request opened ──▶ active (draft_pr_opened) │ failed (stays approved)
 *   active ── its pull request merges ──▶ completed
 *   any but completed ── a newer document declares `supersedes:` it ──▶ superseded
 *
 * A plan without `requires_approval` is approved by svc itself as soon as it is reviewed.
 */

/** Where plan documents live: a markdown file under `docs/plans/`, `prds/` or `.svc/plans/`. */
export const PLAN_DOCUMENT_PATH = /^(docs\/plans|prds|\.svc\/plans)\/.+\.(md|markdown)$/i;

export const PLAN_STATUSES = [
  'discovered',
  'proposed',
  'reviewed',
  'approved',
  'active',
  'completed',
  'superseded',
] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const REPO_WRITE_STATUSES = [
  'not_requested',
  'draft_pr_requested',
  'draft_pr_opened',
  'failed',
] as const;
export type RepoWriteStatus = (typeof REPO_WRITE_STATUSES)[number];

/** Event kinds svc appends on each transition; a caller's note may not use them. */
export const PLAN_TRANSITION_EVENTS = [
  'discovered',
  'proposed',
  'reviewed',
  'approved',
  'rejected',
  'draft_pr_requested',
  'draft_pr_opened',
  'draft_pr_failed',
  'completed',
  'superseded',
] as const;

export interface PlanState {
  status: PlanStatus;
  approvalStatus: ApprovalStatus;
  repoWriteStatus: RepoWriteStatus;
}

/**
 * Why the plan cannot be approved now, or null when it can. An approved plan whose draft pull
 * request failed may be approved again: that asks for the pull request once more.
 */
export function approvalRefusal(plan: PlanState): string | null {
  if (plan.status === 'reviewed') return null;
  if (plan.status === 'approved' && plan.repoWriteStatus === 'failed') return null;
  if (plan.status === 'discovered' || plan.status === 'proposed')
    return `the plan is ${plan.status}: it can be approved once its review has scored it`;
  return `the plan is already ${plan.status}`;
}

/** Why the plan cannot be rejected now, or null when it can: only a reviewed plan awaits a decision. */
export function rejectionRefusal(plan: PlanState): string | null {
  if (plan.status !== 'reviewed')
    return `the plan is ${plan.status}: only a reviewed plan awaiting approval can be rejected`;
  if (plan.approvalStatus === 'rejected') return 'the plan is already rejected';
  return null;
}

/** A plan a newer document can still replace. */
export function canBeSuperseded(plan: Pick<PlanState, 'status'>): boolean {
  return plan.status !== 'completed' && plan.status !== 'superseded';
}
