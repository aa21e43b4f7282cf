/**
 * Doing a quick action: a draft pull request holding its planned files (a new branch
 * `svc/quick-action/<kind>-<short id>` on the default branch's head), or `Service / Review` made a
 * required check. The action records what happened: `done` with the pull request (number, link,
 * branch, commit) or the check made required, or `failed` with the code host's reason by name.
 */
import { eq } from 'drizzle-orm';
import { type CodeHost, CodeHostError } from '../codehost/types';
import type { Orm } from '../storage/database';
import { quickActions } from '../storage/schema';
import { REVIEW_CHECK_NAME } from './definitions';
import type { QuickActionRow } from './store';
import type { PlannedChange } from './types';

/** A quick action that cannot be done, with a reason code (`already_present`, `no_operation`, …). */
export class QuickActionFailure extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'QuickActionFailure';
  }
}

export const quickActionBranch = (action: Pick<QuickActionRow, 'id' | 'kind'>) =>
  `svc/quick-action/${action.kind}-${action.id.slice(-8)}`;

async function openDraftPullRequest(
  host: CodeHost,
  repo: string,
  action: QuickActionRow,
  change: PlannedChange,
) {
  const base = await host.defaultBranch(repo);
  const { headSha: baseSha } = await host.resolveRange(repo, base, base);
  for (const file of change.files) {
    const present = await host.readFile(repo, baseSha, file.path);
    if (present && !(change.replaces ?? []).includes(file.path))
      throw new QuickActionFailure(
        `${file.path} was added to ${base} after the scorecard was computed; recompute the scorecard (POST /api/v1/scorecards) to see whether the check passes now`,
        'already_present',
      );
  }
  const branch = quickActionBranch(action);
  const commit = await host
    .commitToNewBranch(repo, { branch, baseSha, message: change.commit_message, files: change.files })
    .then((c) => c.commit)
    .catch(async (error: unknown) => {
      // A retry after the pull request failed to open finds the branch its first attempt made.
      if (!(error instanceof CodeHostError) || error.reason !== 'invalid_input') throw error;
      const earlier = await host.resolveRange(repo, branch, branch).catch(() => null);
      if (!earlier) throw error;
      return earlier.headSha;
    });
  const pr = await host.openDraftPullRequest(repo, {
    title: change.pull_request.title,
    body: change.pull_request.body,
    baseRef: base,
    headRef: branch,
  });
  return {
    pull_request: { number: pr.number, url: pr.url },
    branch,
    commit,
    base: { ref: base, sha: baseSha },
    files: change.files.map((f) => f.path),
  };
}

async function perform(
  host: CodeHost,
  repo: string,
  action: QuickActionRow,
): Promise<Record<string, unknown>> {
  if (action.kind === 'require_review_check') {
    const branch = await host.defaultBranch(repo);
    await host.requireStatusCheck(repo, branch, REVIEW_CHECK_NAME);
    return { required_check: REVIEW_CHECK_NAME, branch };
  }
  const change = action.change as PlannedChange | null;
  if (change && change.files.length > 0) return openDraftPullRequest(host, repo, action, change);
  throw new QuickActionFailure(
    `quick action ${action.id} (${action.kind}) has nothing svc can run: ${action.whyNoOperation ?? 'no operation'}`,
    'no_operation',
  );
}

/** Runs the action on the host and records its outcome on the action; rethrows a failure after recording it. */
export async function runQuickAction(
  orm: Orm,
  host: CodeHost,
  repo: string,
  action: QuickActionRow,
): Promise<Record<string, unknown>> {
  try {
    const result = await perform(host, repo, action);
    await orm
      .update(quickActions)
      .set({ status: 'done', result, updatedAt: new Date() })
      .where(eq(quickActions.id, action.id));
    return result;
  } catch (error) {
    await recordFailure(orm, action.id, error);
    throw error;
  }
}

/** The `result` of a failed action: the reason by name and the host's message. */
export function failureOf(error: unknown): { reason: string; message: string } {
  if (error instanceof CodeHostError) return { reason: error.reason, message: error.message };
  if (error instanceof QuickActionFailure) return { reason: error.reason, message: error.message };
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return { reason: error.code, message: error instanceof Error ? error.message : String(error) };
  return { reason: 'failed', message: error instanceof Error ? error.message : String(error) };
}

export async function recordFailure(orm: Orm, actionId: string, error: unknown): Promise<void> {
  await orm
    .update(quickActions)
    .set({ status: 'failed', result: { error: failureOf(error) }, updatedAt: new Date() })
    .where(eq(quickActions.id, actionId));
}
