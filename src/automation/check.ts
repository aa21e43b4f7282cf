/**
 * The `Service / Review` check of a pull request head, kept in `check_runs` and mirrored to the
 * code host: queued → in_progress → completed (conclusion from the open-findings ledger), or
 * skipped with the spec's titles. Recomputed without a new run when a person dismisses or
 * reopens a finding (`recomputeAfterDisposition`).
 */

import { and, desc, eq } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import { type CodeHost, CodeHostError } from '../codehost/types';
import { type AutofixRounds, countAutofixRounds, roundsSentence } from '../core/autofix-rounds';
import {
  CHECK_NAME,
  countOpen,
  reviewedConclusion,
  reviewedTitle,
  STILL_REVIEWING_TITLE,
} from '../core/checks';
import { fixPrompt } from '../core/fix-prompt';
import { ledgerKeyOf } from '../core/review';
import { resolveWorkspaceSettings } from '../core/settings';
import { notAnalyzedSummary } from '../review/coverage';
import type { CheckFollowUp } from '../review/disposition';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { checkRuns, findings, projects, pullRequests, reviewResults, workspaces } from '../storage/schema';

export type CheckRow = typeof checkRuns.$inferSelect;

export interface CheckTarget {
  workspaceId: string;
  projectId: string;
  pullRequestId: string;
  headSha: string;
  repo: string;
}

async function upsertRow(
  db: Database,
  target: CheckTarget,
  fields: Partial<typeof checkRuns.$inferInsert>,
): Promise<CheckRow> {
  const [row] = await db.orm
    .insert(checkRuns)
    .values({
      id: newId('checkRun'),
      workspaceId: target.workspaceId,
      projectId: target.projectId,
      pullRequestId: target.pullRequestId,
      headSha: target.headSha,
      status: 'queued',
      ...fields,
    })
    .onConflictDoUpdate({
      target: [checkRuns.pullRequestId, checkRuns.headSha],
      set: { ...fields, updatedAt: new Date() },
    })
    .returning();
  if (!row) throw new Error('check run upsert returned no row');
  return row;
}

/** Writes the check row, then mirrors it to the code host (creating it there the first time). */
async function publish(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
  fields: Partial<typeof checkRuns.$inferInsert> & { status: CheckRow['status'] },
  output: { summary: string; text?: string | null },
): Promise<CheckRow> {
  // What is posted is kept with the row, so the API shows a pull request's check as its host does.
  const row = await upsertRow(db, target, {
    ...fields,
    summary: output.summary,
    outputText: output.text ?? null,
  });
  const posted = await host.postCheck(target.repo, {
    id: row.externalId,
    name: CHECK_NAME,
    headSha: target.headSha,
    status: row.status,
    conclusion: (row.conclusion as never) ?? null,
    title: row.title,
    summary: output.summary,
    text: output.text ?? null,
  });
  if (!row.externalId) {
    await db.orm.update(checkRuns).set({ externalId: posted.id }).where(eq(checkRuns.id, row.id));
    row.externalId = posted.id;
  }
  return row;
}

export async function checkQueued(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
  deadlineAt: Date | null,
  taskId: string | null,
) {
  return publish(
    db,
    host,
    target,
    {
      status: 'queued',
      conclusion: null,
      title: 'Queued for review',
      deadlineAt,
      deadlinePassed: false,
      reviewTaskId: taskId,
    },
    { summary: 'svc will review this commit.' },
  );
}

export async function checkInProgress(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
  runId: string,
  title = 'Reviewing',
) {
  const existing = await findCheck(db, target);
  // After the deadline the check already says "still reviewing" as completed/neutral; leave it.
  if (existing?.deadlinePassed) return existing;
  return publish(
    db,
    host,
    target,
    { status: 'in_progress', conclusion: null, title, reviewRunId: runId },
    { summary: `${title}…` },
  );
}

export async function checkSkipped(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
  title: string,
  summary: string,
) {
  return publish(db, host, target, { status: 'completed', conclusion: 'skipped', title }, { summary });
}

export async function checkStillReviewing(db: Database, host: CodeHost, target: CheckTarget) {
  return publish(
    db,
    host,
    target,
    { status: 'completed', conclusion: 'neutral', title: STILL_REVIEWING_TITLE, deadlinePassed: true },
    {
      summary:
        'The review outlived its deadline. A slow review never blocks a merge; this check updates when it lands.',
    },
  );
}

export async function findCheck(db: Database, target: Pick<CheckTarget, 'pullRequestId' | 'headSha'>) {
  const [row] = await db.orm
    .select()
    .from(checkRuns)
    .where(and(eq(checkRuns.pullRequestId, target.pullRequestId), eq(checkRuns.headSha, target.headSha)))
    .limit(1);
  return row ?? null;
}

/**
 * What the latest review of this head could not read in full, in a sentence (empty when it read
 * everything): a passing check must not hide that a file went unreviewed.
 */
async function notAnalyzedAtHead(db: Database, target: CheckTarget): Promise<string> {
  const [latest] = await db.orm
    .select({ gaps: reviewResults.gaps })
    .from(reviewResults)
    .where(
      and(eq(reviewResults.pullRequestId, target.pullRequestId), eq(reviewResults.headSha, target.headSha)),
    )
    .orderBy(desc(reviewResults.createdAt), desc(reviewResults.id))
    .limit(1);
  return latest ? notAnalyzedSummary(latest.gaps) : '';
}

/**
 * The autofix rounds done on the pull request up to this head: its `[autofix]` commits since its
 * base and its round comments. Null when the code host could not say: the verdict is posted all
 * the same, its fix prompt with the contract's steps but no round.
 */
export async function autofixRoundsAt(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
): Promise<AutofixRounds | null> {
  const [pr] = await db.orm
    .select({ number: pullRequests.number, baseSha: pullRequests.baseSha })
    .from(pullRequests)
    .where(eq(pullRequests.id, target.pullRequestId))
    .limit(1);
  if (!pr?.baseSha) return null;
  try {
    const [commits, comments] = await Promise.all([
      host.listCommits(target.repo, pr.baseSha, target.headSha),
      host.listConversation(target.repo, pr.number),
    ]);
    return countAutofixRounds(commits, comments);
  } catch (error) {
    if (error instanceof CodeHostError) return null;
    throw error;
  }
}

/**
 * The verdict from the pull request's open findings and the workspace's conclusion settings.
 * `counted`: the autofix rounds when the caller read them already; read here otherwise.
 */
export async function checkReviewed(
  db: Database,
  host: CodeHost,
  target: CheckTarget,
  counted?: AutofixRounds | null,
) {
  const ledger = await db.orm
    .select()
    .from(findings)
    .where(eq(findings.ledgerKey, ledgerKeyOf({ pullRequestId: target.pullRequestId })));
  const open = ledger.filter((f) => f.status === 'open');
  const counts = countOpen(ledger);
  const [workspace] = await db.orm
    .select()
    .from(workspaces)
    .where(eq(workspaces.id, target.workspaceId))
    .limit(1);
  const settings = resolveWorkspaceSettings(workspace?.settings ?? {});
  const conclusion = reviewedConclusion(counts, settings);
  const title = reviewedTitle(counts);
  const notAnalyzed = await notAnalyzedAtHead(db, target);
  const rounds = counted !== undefined ? counted : await autofixRoundsAt(db, host, target);
  const roundsNote = rounds && open.length > 0 ? `\n\n${roundsSentence(rounds)}` : '';
  return publish(
    db,
    host,
    target,
    { status: 'completed', conclusion, title, autofix: rounds },
    {
      summary: `${title}. ${ledger.length - open.length} finding(s) fixed or dismissed.${roundsNote}${notAnalyzed ? `\n\n${notAnalyzed}` : ''}`,
      text: fixPrompt({
        headSha: target.headSha,
        rounds,
        findings: open.map((f) => ({
          id: f.id,
          severity: f.severity,
          path: f.path,
          line: f.line,
          endLine: f.endLine,
          title: f.title,
          body: f.body,
          rule: f.rule,
          suggestion: f.suggestion,
        })),
      }),
    },
  );
}

/**
 * True when the check shows the verdict of a review that landed on its head. Not when it is
 * queued or in progress (the review under way concludes from the ledger as it stands then), nor
 * skipped (not reviewed stays skipped), nor "still reviewing" after the deadline (the verdict
 * replaces it when the review lands).
 */
export function showsVerdict(check: Pick<CheckRow, 'status' | 'conclusion' | 'title'>): boolean {
  return (
    check.status === 'completed' && check.conclusion !== 'skipped' && check.title !== STILL_REVIEWING_TITLE
  );
}

/**
 * After a person dismissed or reopened `finding`: recomputes its pull request's check at the
 * current head from the ledger, without a new run, when that head's review was delivered to the
 * code host and has landed; otherwise says why the check is left as it is. Code-host failures
 * are thrown (the ledger change is already committed).
 */
export async function recomputeAfterDisposition(
  db: Database,
  codeHosts: CodeHosts,
  finding: { pullRequestId: string | null; projectId: string },
): Promise<CheckFollowUp> {
  const left = (reason: string, headSha: string | null = null): CheckFollowUp => ({
    recomputed: false,
    headSha,
    conclusion: null,
    reason,
  });
  if (!finding.pullRequestId) return left('a commit-range review has no code-host check');
  const [row] = await db.orm
    .select({ pr: pullRequests, project: projects })
    .from(pullRequests)
    .innerJoin(projects, eq(projects.id, pullRequests.projectId))
    .where(and(eq(pullRequests.id, finding.pullRequestId), eq(pullRequests.projectId, finding.projectId)))
    .limit(1);
  if (!row?.pr.headSha) return left('the pull request has no known head commit');
  const { pr, project } = row;
  const headSha = pr.headSha as string;
  const check = await findCheck(db, { pullRequestId: pr.id, headSha });
  if (!check)
    return left(`no review of head ${headSha.slice(0, 12)} was delivered to the code host`, headSha);
  if (!showsVerdict(check)) {
    return left(
      `the check of head ${headSha.slice(0, 12)} is ${check.conclusion ?? check.status} ("${check.title}"): it is not a review verdict to recompute`,
      headSha,
    );
  }
  const host = codeHosts.forInstallation(project.installationId);
  if (!host) return left(`installation ${project.installationId} has no configured code host`, headSha);
  const updated = await checkReviewed(db, host, {
    workspaceId: project.workspaceId,
    projectId: project.id,
    pullRequestId: pr.id,
    headSha,
    repo: project.repoFullName,
  });
  return { recomputed: true, headSha, conclusion: updated.conclusion, reason: null };
}
