/**
 * The code-host side of a review delivered there: the check follows the review's states, new
 * open findings are posted inline as one review (never the same finding twice across re-runs),
 * and one summary comment is edited in place rather than re-posted.
 */

import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { CodeHost } from '../codehost/types';
import type { AutofixRounds } from '../core/autofix-rounds';
import { countOpen, SKIPPED_ERRORED_TITLE, SKIPPED_FILTERED_TITLE, skippedBrakeTitle } from '../core/checks';
import { RunFailure } from '../core/failures';
import { ledgerKeyOf } from '../core/review';
import type { RunContext } from '../engine/types';
import type { ReviewLifecycle } from '../review/run-review';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { findings, postedComments } from '../storage/schema';
import { autofixRoundsAt, type CheckTarget, checkInProgress, checkReviewed, checkSkipped } from './check';

type FindingRow = typeof findings.$inferSelect;

const SEVERITY_BADGE = { P0: '🔴 P0', P1: '🟠 P1', P2: '🔵 P2' } as const;

export function inlineBody(f: FindingRow): string {
  return [
    `**${SEVERITY_BADGE[f.severity]} ${f.title}**`,
    '',
    f.body.trim(),
    ...(f.suggestion ? ['', '```suggestion', f.suggestion, '```'] : []),
    '',
    `<sub>${f.rule} · ${f.reviewers.join(', ')} · reply \`wontfix: <reason>\` to dismiss, \`fix this\` for a fix</sub>`,
  ].join('\n');
}

export function summaryBody(headSha: string, ledger: FindingRow[]): string {
  const open = countOpen(ledger);
  const lines = [
    '## svc review',
    '',
    `Reviewed ${headSha.slice(0, 12)}: **${open.P0} P0, ${open.P1} P1, ${open.P2} P2** open` +
      ` (${ledger.filter((f) => f.status === 'fixed').length} fixed, ${ledger.filter((f) => f.status === 'dismissed').length} dismissed).`,
  ];
  const openRows = ledger
    .filter((f) => f.status === 'open')
    .sort((a, b) => a.severity.localeCompare(b.severity));
  if (openRows.length > 0) {
    lines.push('', '| | where | finding |', '|---|---|---|');
    for (const f of openRows.slice(0, 50))
      lines.push(`| ${f.severity} | \`${f.path}:${f.line}\` | ${f.title.replace(/\|/g, '\\|')} |`);
    if (openRows.length > 50)
      lines.push('', `…and ${openRows.length - 50} more (GET /api/v1/findings?status=open).`);
  }
  lines.push('', '<sub>Commands: `@service help`.</sub>');
  return lines.join('\n');
}

/** Posting failures keep the findings (already in the ledger) and fail the run by name; a re-run posts what is missing. */
async function post<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw new RunFailure(
      'backend_unavailable',
      `posting the ${what} to the code host failed: ${(error as Error).message}`,
    );
  }
}

export async function deliverInline(db: Database, host: CodeHost, target: CheckTarget & { number: number }) {
  const open = await db.orm
    .select()
    .from(findings)
    .where(
      and(
        eq(findings.ledgerKey, ledgerKeyOf({ pullRequestId: target.pullRequestId })),
        eq(findings.status, 'open'),
      ),
    );
  const already = open.length
    ? await db.orm
        .select({ findingId: postedComments.findingId })
        .from(postedComments)
        .where(
          and(
            eq(postedComments.pullRequestId, target.pullRequestId),
            inArray(
              postedComments.findingId,
              open.map((f) => f.id),
            ),
          ),
        )
    : [];
  const posted = new Set(already.map((r) => r.findingId));
  const fresh = open.filter((f) => !posted.has(f.id));
  if (fresh.length === 0) return 0;
  // One review per batch the host takes, each recorded as soon as it lands: when a later batch
  // fails, a re-run posts only what is still missing.
  const size = Math.min(fresh.length, Math.max(1, host.maxCommentsPerReview));
  const parts = Math.ceil(fresh.length / size);
  for (let part = 0; part < parts; part++) {
    const batch = fresh.slice(part * size, (part + 1) * size);
    const heading = `svc found ${fresh.length} new finding(s) at ${target.headSha.slice(0, 12)}.`;
    const result = await post('inline findings', () =>
      host.postReview(target.repo, {
        pullRequest: target.number,
        commitSha: target.headSha,
        body: parts === 1 ? heading : `${heading} (part ${part + 1} of ${parts})`,
        comments: batch.map((f) => ({
          path: f.path,
          line: f.endLine,
          ...(f.endLine > f.line ? { startLine: f.line } : {}),
          body: inlineBody(f),
        })),
      }),
    );
    await recordInline(db, target, batch, result.comments);
  }
  return fresh.length;
}

async function recordInline(
  db: Database,
  target: CheckTarget,
  batch: FindingRow[],
  comments: { id: string }[],
): Promise<void> {
  const rows = batch.flatMap((finding, i) => {
    const comment = comments[i];
    return comment
      ? [
          {
            id: newId('comment'),
            workspaceId: target.workspaceId,
            pullRequestId: target.pullRequestId,
            kind: 'inline' as const,
            findingId: finding.id,
            externalId: comment.id,
          },
        ]
      : [];
  });
  if (rows.length > 0) await db.orm.insert(postedComments).values(rows).onConflictDoNothing();
}

export async function deliverSummary(db: Database, host: CodeHost, target: CheckTarget & { number: number }) {
  const ledger = await db.orm
    .select()
    .from(findings)
    .where(eq(findings.ledgerKey, ledgerKeyOf({ pullRequestId: target.pullRequestId })));
  const body = summaryBody(target.headSha, ledger);
  const [existing] = await db.orm
    .select()
    .from(postedComments)
    .where(
      and(
        eq(postedComments.pullRequestId, target.pullRequestId),
        eq(postedComments.kind, 'summary'),
        isNull(postedComments.findingId),
      ),
    )
    .limit(1);
  const posted = await post('summary', () =>
    host.postComment(target.repo, {
      pullRequest: target.number,
      body,
      ...(existing ? { id: existing.externalId } : {}),
    }),
  );
  if (!existing) {
    await db.orm.insert(postedComments).values({
      id: newId('comment'),
      workspaceId: target.workspaceId,
      pullRequestId: target.pullRequestId,
      kind: 'summary',
      externalId: posted.id,
    });
  }
}

export function codeHostLifecycle(db: Database): ReviewLifecycle {
  // A review's autofix rounds are read from the code host while it summarizes, not between its
  // `reviewed` status and its check: a trigger that restores the status from the check in that
  // gap would leave the two apart (test/automation/check-sequences.test.ts).
  const roundsOfRun = new Map<string, AutofixRounds | null>();
  return {
    async onStatus(ctx: RunContext, event) {
      const target = {
        workspaceId: ctx.task.workspaceId,
        projectId: event.projectId,
        pullRequestId: event.pullRequestId,
        headSha: event.headSha,
        repo: event.repo,
        number: event.number,
      };
      switch (event.status) {
        case 'reviewing':
          await post('check', () => checkInProgress(db, event.host, target, ctx.run.id));
          return;
        case 'reviews_available': {
          const n = await deliverInline(db, event.host, target);
          await ctx.message('note', `Posted ${n} new finding(s) inline.`);
          return;
        }
        case 'summarizing':
          await deliverSummary(db, event.host, target);
          roundsOfRun.set(ctx.run.id, await autofixRoundsAt(db, event.host, target));
          return;
        case 'reviewed': {
          const rounds = roundsOfRun.get(ctx.run.id);
          roundsOfRun.delete(ctx.run.id);
          await post('check', () => checkReviewed(db, event.host, target, rounds));
          return;
        }
        case 'skipped':
          // Nothing was reviewed (an empty comparison): the spec's "not reviewed, filtered".
          await post('check', () =>
            checkSkipped(
              db,
              event.host,
              target,
              SKIPPED_FILTERED_TITLE,
              event.reason ?? 'No reviewable diff.',
            ),
          );
          return;
        case 'errored': {
          roundsOfRun.delete(ctx.run.id);
          const failure = event.error instanceof RunFailure ? event.error : null;
          const code = failure?.code ?? 'unknown';
          await checkSkipped(
            db,
            event.host,
            target,
            skippedBrakeTitle(code, failure?.details) ?? SKIPPED_ERRORED_TITLE,
            `The review failed with ${code}: ${(event.error as Error)?.message ?? ''}`,
          );
          return;
        }
      }
    },
  };
}
