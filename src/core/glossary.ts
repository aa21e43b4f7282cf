/**
 * The words svc is built from. Every module uses them in exactly these senses.
 *
 * - workspace: the tenant. Every record belongs to exactly one workspace.
 * - project: one repository registered with svc (`prj_…`), reached through a code-host installation.
 * - task: a unit of asynchronous work (`tsk_…`) of one kind: review, setup, study, plan_review,
 *   fix, diagnostic. A task is read with its latest run's receipt inlined as `run`.
 * - run: one attempt at a task (`run_…`). pending → running → completed | failed | canceled.
 *   A run ends with a committed terminal frame or a named failure code; never in silence.
 * - replacement run: a run the platform starts because an earlier one died or was evicted;
 *   it points back with `retry.retry_of`.
 * - gap: a named shortfall on a run that still succeeded.
 * - brake: a project-level stop (pause, approval window, spend cap, run budget) that fails a run
 *   by name before it starts.
 * - review: a task of kind `review`: one pass over one pull request by a lineup of reviewers.
 * - reviewer: something that reads a diff and reports findings, pinned to a model.
 * - lineup: the reviewers chosen for one review.
 * - finding: one defect reported on a pull request (`fnd_…`), kept in the per-pull-request ledger.
 * - skill: instructions (and rules) a reviewer executes; revisions are immutable and hashed.
 * - key: a bearer credential: workspace key, project-pinned key or personal token.
 */
export type Glossary = never;
