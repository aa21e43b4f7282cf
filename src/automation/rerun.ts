/**
 * A person asking the code host to run the `Service / Review` check again (GitHub's "Re-run" on
 * the check, or "Re-run all checks" on its suite): a new review of that head, forced past the
 * dedupe, as `@service review force` would start. The request names a commit, and sometimes no
 * pull request (GitHub leaves `pull_requests` empty for forks), so the pull request is found
 * from the check svc recorded for it when the request does not say.
 */
import { and, eq, inArray, or } from 'drizzle-orm';
import { CHECK_NAME } from '../core/checks';
import { checkRuns, pullRequests } from '../storage/schema';
import { type AutomationDeps, projectAndHost, startAutomaticReview, type TriggerOutcome } from './triggers';

export interface CheckRerequest {
  installationId: number;
  repo: string;
  headSha: string;
  /** The check run asked for again (`check_run.rerequested`); null for a whole suite. */
  checkRun: { id: string; name: string } | null;
  /** Pull request numbers the code host named; may be empty. */
  pullRequests: number[];
}

/** The project's pull requests the request is about: those it names, else those svc checked there. */
async function pullRequestsOf(deps: AutomationDeps, projectId: string, request: CheckRerequest) {
  const named = request.pullRequests.length
    ? await deps.db.orm
        .select()
        .from(pullRequests)
        .where(and(eq(pullRequests.projectId, projectId), inArray(pullRequests.number, request.pullRequests)))
    : [];
  if (named.length > 0) return named;
  const checked = await deps.db.orm
    .select({ pullRequestId: checkRuns.pullRequestId })
    .from(checkRuns)
    .where(
      and(
        eq(checkRuns.projectId, projectId),
        request.checkRun
          ? or(eq(checkRuns.externalId, request.checkRun.id), eq(checkRuns.headSha, request.headSha))
          : eq(checkRuns.headSha, request.headSha),
      ),
    );
  const ids = [...new Set(checked.map((c) => c.pullRequestId))];
  if (ids.length === 0) return [];
  return deps.db.orm
    .select()
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, projectId), inArray(pullRequests.id, ids)));
}

export async function onCheckRerequested(
  deps: AutomationDeps,
  request: CheckRerequest,
): Promise<{ outcome: 'ignored' | 'review_started'; reason: string; taskIds: string[] }> {
  const none = (reason: string) => ({ outcome: 'ignored' as const, reason, taskIds: [] });
  if (request.checkRun && request.checkRun.name !== CHECK_NAME)
    return none(`check ${request.checkRun.name} is not svc's ${CHECK_NAME}`);
  const found = await projectAndHost(deps, request.installationId, request.repo);
  if ('ignored' in found) return none(found.ignored);
  const { project, host } = found;
  const short = request.headSha.slice(0, 12);
  const prs = await pullRequestsOf(deps, project.id, request);
  if (prs.length === 0) return none(`no pull request of ${project.repoFullName} svc knows has head ${short}`);
  const outcomes: TriggerOutcome[] = [];
  for (const pr of prs) {
    // An older commit's check: the pull request's head has moved on and has a check of its own.
    if (pr.headSha !== request.headSha) {
      outcomes.push({ outcome: 'ignored', reason: `#${pr.number} is now at ${pr.headSha?.slice(0, 12)}` });
      continue;
    }
    outcomes.push(
      await startAutomaticReview(deps, project, host, pr, request.headSha, {
        force: true,
        reason: 're-run requested on the code host',
      }),
    );
  }
  const taskIds = outcomes.flatMap((o) => (o.outcome === 'review_started' ? [o.taskId] : []));
  const reason = outcomes.map((o) => `${o.outcome}: ${o.reason}`).join('; ');
  return taskIds.length ? { outcome: 'review_started', reason, taskIds } : none(reason);
}
