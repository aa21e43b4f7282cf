/**
 * The findings ledger of one pull request (or one commit-range review), in the database. What a
 * run does to it (new, seen again, reopened, dismissed inline, fixed) is decided by
 * `reconcileLedger` (./ledger-reconcile.ts), shared with the CLI's file ledger; this module
 * applies that plan to the `findings` and `run_findings` tables.
 */
import { eq, sql } from 'drizzle-orm';
import type { Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { findings, runFindings } from '../storage/schema';
import { type HeadText, reconcileLedger, reportedFields } from './ledger-reconcile';
import type { MergedFinding } from './merge';

export { anchorStillPresent, fingerprintAll, type HeadText } from './ledger-reconcile';

export type FindingRow = typeof findings.$inferSelect;

const INSERT_BATCH = 500;

export interface LedgerScope {
  ledgerKey: string;
  workspaceId: string;
  projectId: string;
  pullRequestId: string | null;
  taskId: string;
  runId: string;
  headSha: string;
}

export interface LedgerOutcome {
  /** Rows reported by this run (new, still open, or still dismissed), in report order. */
  reported: FindingRow[];
  opened: number;
  reopened: number;
  fixed: number;
  stillDismissed: number;
  /** Findings this run found with an inline `svc-ignore` and recorded as dismissed. */
  dismissedInline: number;
}

export async function recordInLedger(
  tx: Orm | Parameters<Parameters<Orm['transaction']>[0]>[0],
  scope: LedgerScope,
  found: MergedFinding[],
  headText: HeadText,
  /** Paths whose head content was read this run; open findings elsewhere are left as they are. */
  inspectedPaths: Set<string>,
): Promise<LedgerOutcome> {
  const now = new Date();
  // Two reviews of one pull request at once would both insert the same new finding: serialize
  // ledger writes per ledger for the rest of this transaction.
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${scope.ledgerKey}))`);
  const existing = await tx.select().from(findings).where(eq(findings.ledgerKey, scope.ledgerKey));
  const plan = reconcileLedger(existing, found, headText, inspectedPaths);
  const outcome: LedgerOutcome = {
    reported: [],
    opened: 0,
    reopened: plan.reopened,
    fixed: plan.fixed.length,
    stillDismissed: plan.stillDismissed,
    dismissedInline: plan.dismissedInline,
  };
  const fieldsOf = (finding: MergedFinding) => ({
    ...reportedFields(finding),
    lastRunId: scope.runId,
    commitSha: scope.headSha,
    updatedAt: now,
  });

  for (const { entry, finding, reviewers, transition, dismissedReason } of plan.seenAgain) {
    const [updated] = await tx
      .update(findings)
      .set({
        ...fieldsOf(finding),
        reviewers,
        taskId: scope.taskId,
        ...(transition === 'reopen' ? { status: 'open' as const, fixedAt: null, fixedRunId: null } : {}),
        ...(transition === 'dismiss'
          ? {
              status: 'dismissed' as const,
              dismissedReason,
              dismissedAt: now,
              fixedAt: null,
              fixedRunId: null,
            }
          : {}),
      })
      .where(eq(findings.id, entry.id))
      .returning();
    if (updated) outcome.reported.push(updated);
  }

  const fresh: (typeof findings.$inferInsert)[] = plan.fresh.map((f) => ({
    id: newId('finding'),
    workspaceId: scope.workspaceId,
    projectId: scope.projectId,
    ledgerKey: scope.ledgerKey,
    pullRequestId: scope.pullRequestId,
    fingerprint: f.fingerprint,
    status: f.status,
    ...(f.status === 'dismissed' ? { dismissedReason: f.dismissedReason, dismissedAt: now } : {}),
    rule: f.finding.rule,
    reviewers: f.finding.reviewers,
    anchorText: f.anchor,
    taskId: scope.taskId,
    firstRunId: scope.runId,
    ...fieldsOf(f.finding),
  }));
  // New findings go in batches: one statement per few hundred rows instead of one per finding.
  for (let i = 0; i < fresh.length; i += INSERT_BATCH) {
    const inserted = await tx
      .insert(findings)
      .values(fresh.slice(i, i + INSERT_BATCH))
      .returning();
    outcome.reported.push(...inserted);
    outcome.opened += inserted.filter((f) => f.status === 'open').length;
  }

  // The run's own list of what it reported (GET /reviews/{id} reads it, whatever later runs do).
  for (let i = 0; i < outcome.reported.length; i += INSERT_BATCH) {
    await tx
      .insert(runFindings)
      .values(
        outcome.reported.slice(i, i + INSERT_BATCH).map((f) => ({ runId: scope.runId, findingId: f.id })),
      )
      .onConflictDoNothing();
  }

  for (const row of plan.fixed) {
    await tx
      .update(findings)
      .set({ status: 'fixed', fixedAt: now, fixedRunId: scope.runId, updatedAt: now })
      .where(eq(findings.id, row.id));
  }
  return outcome;
}
