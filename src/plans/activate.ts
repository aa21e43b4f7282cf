/**
 * The `plan_activate` task: the one repository write a plan makes, and only after approval.
 * It starts a branch `svc/plan/<plan id>` at the default branch's head with one empty commit (a
 * pull request needs a commit of its own; the plan document is already on the default branch)
 * and opens a draft pull request whose body is the plan. The code host's refusal is recorded on
 * the plan (`repo_write_status` failed, with the host's reason) and fails the run by name.
 */
import { eq } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import { type CodeHost, CodeHostError } from '../codehost/types';
import { RunFailure } from '../core/failures';
import { projectAndHost } from '../engine/project-host';
import type { TaskHandler } from '../engine/types';
import { plans } from '../storage/schema';
import { type PlanRow, recordDraftPullRequest } from './lifecycle';

/** GitHub refuses pull request bodies over 65,536 characters; keep room for the footer. */
const MAX_BODY = 60_000;

export const planBranch = (planId: string) => `svc/plan/${planId}`;

export function planActivateHandler(codeHosts: CodeHosts): TaskHandler {
  return async (ctx) => {
    const { plan_id: planId } = ctx.run.input as { plan_id: string };
    const [plan] = await ctx.db.orm.select().from(plans).where(eq(plans.id, planId)).limit(1);
    if (!plan) throw new RunFailure('tool_failed', `plan ${planId} no longer exists`);
    if (plan.status !== 'approved' || plan.repoWriteStatus !== 'draft_pr_requested') {
      ctx.gap({
        code: 'plan_not_awaiting_pull_request',
        message: `plan ${planId} is ${plan.status} with repo_write_status ${plan.repoWriteStatus}: nothing to open`,
      });
      return { plan_id: planId, opened: null };
    }
    const { project, host } = await projectAndHost(ctx, codeHosts);
    await ctx.progress({ phase: 'opening_draft_pull_request', statusText: `plan ${plan.repoArtifactPath}` });
    try {
      const opened = await openPlanPullRequest(host, project.repoFullName, plan);
      await recordDraftPullRequest(ctx.db, planId, { opened });
      return { plan_id: planId, pull_request: opened.number, url: opened.url, branch: opened.branch };
    } catch (error) {
      if (!(error instanceof CodeHostError)) throw error;
      await recordDraftPullRequest(ctx.db, planId, { failed: error.message });
      throw new RunFailure(
        'tool_failed',
        `the code host refused the plan's draft pull request: ${error.message}`,
      );
    }
  };
}

async function openPlanPullRequest(host: CodeHost, repo: string, plan: PlanRow) {
  const base = await host.defaultBranch(repo);
  const { headSha } = await host.resolveRange(repo, base, base);
  const path = plan.repoArtifactPath;
  const document = path ? await host.readFile(repo, headSha, path) : null;
  if (!document) {
    throw new CodeHostError(`the plan document ${path} is no longer on ${base}`, 'not_found');
  }
  const branch = planBranch(plan.id);
  const title = plan.summary ?? path ?? plan.id;
  // A retry after a failed pull request finds the branch from the first attempt: reuse it.
  if (!(await branchExists(host, repo, base, branch))) {
    await host.commitToNewBranch(repo, {
      branch,
      baseSha: headSha,
      message: `Start plan: ${title}\n\nsvc opened this branch for the approved plan ${plan.id} (${path}).`,
      files: [],
    });
  }
  const opened = await host.openDraftPullRequest(repo, {
    title: `Plan: ${title}`,
    body: pullRequestBody(document.toString('utf8'), plan),
    baseRef: base,
    headRef: branch,
  });
  return { number: opened.number, url: opened.url, branch };
}

async function branchExists(host: CodeHost, repo: string, base: string, branch: string) {
  try {
    await host.resolveRange(repo, base, branch);
    return true;
  } catch (error) {
    if (error instanceof CodeHostError && error.reason === 'not_found') return false;
    throw error;
  }
}

function pullRequestBody(text: string, plan: PlanRow): string {
  const body =
    text.length > MAX_BODY
      ? `${text.slice(0, MAX_BODY)}\n\n…(the plan continues in ${plan.repoArtifactPath})`
      : text;
  return `${body}\n\n---\nsvc opened this draft for plan \`${plan.id}\` (${plan.repoArtifactPath}) once it was approved. Merging it completes the plan.`;
}
