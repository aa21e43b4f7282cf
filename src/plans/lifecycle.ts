/**
 * Every move of a plan (src/core/plans.ts draws the machine): each one updates the plan and
 * appends its event, with the actor (an API key id, or null for svc itself), in one transaction,
 * so the plan and its history never disagree. Nothing here writes to the repository: the only
 * repository write, the draft pull request, is a `plan_activate` task that approval starts.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { ApiError, notFound } from '../core/errors';
import { approvalRefusal, canBeSuperseded, rejectionRefusal } from '../core/plans';
import type { Engine } from '../engine/engine';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { appendObjectEvent, type Tx } from '../storage/object-events';
import { plans } from '../storage/schema';
import type { PlanFrontMatter } from './document';

export type PlanRow = typeof plans.$inferSelect;

/** Whose move it was: an API key's id, or null when svc moved it. */
export type Actor = string | null;

async function move(
  tx: Tx,
  plan: PlanRow,
  change: Partial<Omit<PlanRow, 'id' | 'workspaceId' | 'projectId'>>,
  event: { kind: string; actor: Actor; payload?: Record<string, unknown> },
): Promise<PlanRow> {
  const [updated] = await tx
    .update(plans)
    .set({ ...change, updatedAt: new Date() })
    .where(eq(plans.id, plan.id))
    .returning();
  if (!updated) throw new Error(`plan ${plan.id} vanished during its ${event.kind} move`);
  await appendObjectEvent(tx, {
    workspaceId: plan.workspaceId,
    projectId: plan.projectId,
    objectType: 'plan',
    objectId: plan.id,
    kind: event.kind,
    payload: { from: plan.status, to: updated.status, ...event.payload },
    actor: event.actor,
  });
  return updated;
}

async function lockPlan(tx: Tx, scope: { workspaceId: string; projectId: string }, planId: string) {
  const [plan] = await tx
    .select()
    .from(plans)
    .where(
      and(
        eq(plans.id, planId),
        eq(plans.workspaceId, scope.workspaceId),
        eq(plans.projectId, scope.projectId),
      ),
    )
    .limit(1)
    .for('update');
  if (!plan) throw notFound('plan', planId);
  return plan;
}

/**
 * A plan document seen for the first time: the plan is `discovered`, its one plan-review task is
 * created and it is `proposed` for review, all in one transaction. A document that already is a
 * plan changes nothing (null).
 */
export async function discoverPlan(
  db: Database,
  engine: Engine,
  project: { id: string; workspaceId: string },
  document: { path: string; ref: string },
): Promise<{ plan: PlanRow; taskId: string } | null> {
  return db.orm.transaction(async (tx) => {
    const [created] = await tx
      .insert(plans)
      .values({
        id: newId('plan'),
        workspaceId: project.workspaceId,
        projectId: project.id,
        sourceKind: 'repo',
        repoArtifactPath: document.path,
      })
      .onConflictDoNothing()
      .returning();
    if (!created) return null;
    await appendObjectEvent(tx, {
      workspaceId: created.workspaceId,
      projectId: created.projectId,
      objectType: 'plan',
      objectId: created.id,
      kind: 'discovered',
      payload: { to: created.status, path: document.path, commit: document.ref },
      actor: null,
    });
    const { task } = await engine.createTaskIn(tx, {
      workspaceId: project.workspaceId,
      projectId: project.id,
      kind: 'plan_review',
      title: `Review plan ${document.path}`,
      input: { plan_id: created.id, path: document.path, ref: document.ref },
    });
    const plan = await move(
      tx,
      created,
      { status: 'proposed', reviewTaskId: task.id },
      { kind: 'proposed', actor: null, payload: { review_task_id: task.id } },
    );
    return { plan, taskId: task.id };
  });
}

export interface PlanReview {
  score: Record<string, unknown>;
  summary: string;
  targetOutcome: string | null;
  frontMatter: PlanFrontMatter;
}

/**
 * Records a plan review: the plan is `reviewed` with its score, the plans its document
 * supersedes are `superseded`, and a plan that does not require approval is approved by svc.
 * A plan that moved on meanwhile (superseded, say) keeps its status and gets the score only.
 */
export async function recordPlanReview(
  db: Database,
  engine: Engine,
  scope: { workspaceId: string; projectId: string },
  planId: string,
  review: PlanReview,
): Promise<PlanRow> {
  return db.orm.transaction(async (tx) => {
    const plan = await lockPlan(tx, scope, planId);
    const fields = {
      score: review.score,
      summary: review.summary,
      targetOutcome: review.targetOutcome,
      requiresApproval: review.frontMatter.requiresApproval,
    };
    const reviewable = plan.status === 'discovered' || plan.status === 'proposed';
    let reviewed = await move(tx, plan, reviewable ? { ...fields, status: 'reviewed' } : fields, {
      kind: 'reviewed',
      actor: null,
      payload: { score: review.score.score ?? null, requires_approval: fields.requiresApproval },
    });
    await supersede(tx, reviewed, review.frontMatter.supersedes);
    if (reviewed.status === 'reviewed' && !reviewed.requiresApproval) {
      reviewed = await approveIn(tx, engine, reviewed, null, { automatic: true });
    }
    return reviewed;
  });
}

async function supersede(tx: Tx, by: PlanRow, paths: string[]) {
  const own = paths.filter((p) => p !== by.repoArtifactPath);
  if (own.length === 0) return;
  const older = await tx
    .select()
    .from(plans)
    .where(and(eq(plans.projectId, by.projectId), inArray(plans.repoArtifactPath, own)))
    .for('update');
  for (const plan of older.filter(canBeSuperseded)) {
    await move(
      tx,
      plan,
      { status: 'superseded', supersededBy: by.id },
      { kind: 'superseded', actor: null, payload: { by: by.id, by_path: by.repoArtifactPath } },
    );
  }
}

async function approveIn(
  tx: Tx,
  engine: Engine,
  plan: PlanRow,
  actor: Actor,
  payload: Record<string, unknown>,
): Promise<PlanRow> {
  const approved = await move(
    tx,
    plan,
    { status: 'approved', approvalStatus: 'approved' },
    { kind: 'approved', actor, payload },
  );
  const { task } = await engine.createTaskIn(tx, {
    workspaceId: plan.workspaceId,
    projectId: plan.projectId,
    kind: 'plan_activate',
    title: `Open the draft pull request of plan ${plan.repoArtifactPath ?? plan.id}`,
    input: { plan_id: plan.id },
  });
  return move(
    tx,
    approved,
    { repoWriteStatus: 'draft_pr_requested', repoWriteError: null },
    {
      kind: 'draft_pr_requested',
      actor,
      payload: { from_write: plan.repoWriteStatus, task_id: task.id },
    },
  );
}

/** Approves a reviewed plan (or asks again for a draft pull request that failed). */
export async function approvePlan(
  db: Database,
  engine: Engine,
  scope: { workspaceId: string; projectId: string },
  planId: string,
  actor: Actor,
  reason: string | null,
): Promise<PlanRow> {
  return db.orm.transaction(async (tx) => {
    const plan = await lockPlan(tx, scope, planId);
    const refusal = approvalRefusal(plan);
    if (refusal) throw new ApiError('conflict', `plan ${planId} cannot be approved: ${refusal}`);
    return approveIn(tx, engine, plan, actor, reason ? { reason } : {});
  });
}

export async function rejectPlan(
  db: Database,
  scope: { workspaceId: string; projectId: string },
  planId: string,
  actor: Actor,
  reason: string | null,
): Promise<PlanRow> {
  return db.orm.transaction(async (tx) => {
    const plan = await lockPlan(tx, scope, planId);
    const refusal = rejectionRefusal(plan);
    if (refusal) throw new ApiError('conflict', `plan ${planId} cannot be rejected: ${refusal}`);
    return move(tx, plan, { approvalStatus: 'rejected' }, { kind: 'rejected', actor, payload: { reason } });
  });
}

/** The outcome of the `plan_activate` task, recorded on the plan. */
export async function recordDraftPullRequest(
  db: Database,
  planId: string,
  outcome: { opened: { number: number; url: string | null; branch: string } } | { failed: string },
): Promise<PlanRow> {
  return db.orm.transaction(async (tx) => {
    const [plan] = await tx.select().from(plans).where(eq(plans.id, planId)).limit(1).for('update');
    if (!plan) throw notFound('plan', planId);
    if ('failed' in outcome) {
      return move(
        tx,
        plan,
        { repoWriteStatus: 'failed', repoWriteError: outcome.failed },
        { kind: 'draft_pr_failed', actor: null, payload: { reason: outcome.failed } },
      );
    }
    const { number, url, branch } = outcome.opened;
    return move(
      tx,
      plan,
      {
        status: 'active',
        repoWriteStatus: 'draft_pr_opened',
        draftPullRequestNumber: number,
        draftPullRequestUrl: url,
        repoWriteError: null,
      },
      { kind: 'draft_pr_opened', actor: null, payload: { pull_request: number, url, branch } },
    );
  });
}

/** A merged pull request completes the active plans it was opened for. */
export async function completePlansOfPullRequest(
  db: Database,
  projectId: string,
  pullRequest: number,
): Promise<string[]> {
  return db.orm.transaction(async (tx) => {
    const active = await tx
      .select()
      .from(plans)
      .where(
        and(
          eq(plans.projectId, projectId),
          eq(plans.draftPullRequestNumber, pullRequest),
          eq(plans.status, 'active'),
        ),
      )
      .for('update');
    for (const plan of active) {
      await move(
        tx,
        plan,
        { status: 'completed' },
        { kind: 'completed', actor: null, payload: { pull_request: pullRequest } },
      );
    }
    return active.map((p) => p.id);
  });
}
