/**
 * The findings ledger of one pull request (or one commit-range review), in the database. What a
 * run does to it (new, seen again, reopened, dismissed inline, fixed) is decided by
 * `reconcileLedger` (./ledger-reconcile.ts), shared with the CLI's file ledger; this module
 * applies that plan to the `findings` and `run_findings` tables.
 *
 * A review can report tens of thousands of findings, and with the embedded database every
 * statement runs on the server's one thread, inside PGlite's exclusive lock. So a merge never is
 * one long transaction or one long stretch of JavaScript: the ledger is read in pages, planned in
 * slices (core/cooperative.ts), and written in batches of at most `batchSize` findings, each batch
 * its own short transaction, with a turn of the event loop between any two of them. One merge at
 * a time per ledger (./ledger-lock.ts) for the whole merge, not per transaction.
 *
 * What that costs, and why it is sound: a merge stopped between batches (a crash, a lost lease, a
 * cancel) leaves some findings written and the rest as they were — every row is whole, either as
 * before the merge or as after it — and nothing says the merge is complete (the run is not
 * completed, no review result is written, the pull request's review status stays `reviewing`).
 * The merge is idempotent: planned again against the ledger as it now is, the same findings give
 * the same ledger, because each write states the row's final state (fields, status, run ids)
 * rather than a change to it, and rows already written are found again by their fingerprint. So
 * the next merge of that ledger (the replacement run, a re-run, the next push) converges to what
 * the whole merge would have written; only that merge's counts (opened, reopened, fixed) leave
 * out what the stopped one already did.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { and, asc, eq, gt, inArray, type SQL, sql } from 'drizzle-orm';
import { runCooperatively } from '../core/cooperative';
import type { Database, Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { findings, runFindings } from '../storage/schema';
import { withLedgerLock } from './ledger-lock';
import {
  type HeadText,
  type NewFinding,
  reconcileSteps,
  reportedFields,
  type SeenAgain,
} from './ledger-reconcile';
import type { MergedFinding } from './merge';

export { anchorStillPresent, fingerprintAll, type HeadText } from './ledger-reconcile';

export type FindingRow = typeof findings.$inferSelect;

/** Findings per write batch (one statement for the rows, one for run_findings, one transaction). */
export const LEDGER_BATCH = 25;
/** Ledger rows read per page while planning. */
const READ_PAGE = 1_000;

export interface LedgerScope {
  ledgerKey: string;
  workspaceId: string;
  projectId: string;
  pullRequestId: string | null;
  taskId: string;
  runId: string;
  headSha: string;
}

/** A finding as this run reported it. */
export type ReportedFinding = Pick<FindingRow, 'id' | 'fingerprint' | 'severity' | 'status'>;

export interface LedgerOutcome {
  /** Findings reported by this run (new, still open, or still dismissed), in report order. */
  reported: ReportedFinding[];
  opened: number;
  /** Of `opened`, the P0s: a pull request's new blocking findings, which a person is notified of. */
  openedP0: number;
  reopened: number;
  fixed: number;
  stillDismissed: number;
  /** Findings this run found with an inline `svc-ignore` and recorded as dismissed. */
  dismissedInline: number;
}

export interface LedgerMergeOptions {
  /** Findings per batch (default LEDGER_BATCH). */
  batchSize?: number;
  /** Checked before every batch: an aborted run writes no further batch (see the module note). */
  signal?: AbortSignal;
  /** Called after each batch committed, with how many have (tests stop a merge here). */
  afterBatch?: (committed: number) => void | Promise<void>;
  /** Called after each batch with the findings written so far and the merge's total. */
  onProgress?: (written: number, total: number) => void | Promise<void>;
}

/** What the plan needs of a ledger row. */
type Entry = Pick<FindingRow, 'id' | 'fingerprint' | 'status' | 'path' | 'anchorText' | 'reviewers'>;

export async function recordInLedger(
  db: Database,
  scope: LedgerScope,
  found: MergedFinding[],
  headText: HeadText,
  /** Paths whose head content was read this run; open findings elsewhere are left as they are. */
  inspectedPaths: Set<string>,
  options: LedgerMergeOptions = {},
): Promise<LedgerOutcome> {
  const size = Math.max(1, options.batchSize ?? LEDGER_BATCH);
  // Two reviews of one pull request at once would both insert the same new finding, and a
  // person's disposition must land wholly before or after a merge: one writer per ledger.
  return withLedgerLock(db, scope.ledgerKey, async (orm) => {
    const existing = await readLedger(orm, scope.ledgerKey);
    const plan = await runCooperatively(reconcileSteps(existing, found, headText, inspectedPaths));
    const now = new Date();
    const outcome: LedgerOutcome = {
      reported: [],
      opened: 0,
      openedP0: 0,
      reopened: plan.reopened,
      fixed: 0,
      stillDismissed: plan.stillDismissed,
      dismissedInline: plan.dismissedInline,
    };
    let committed = 0;
    let written = 0;
    const total = plan.seenAgain.length + plan.fresh.length + plan.fixed.length;
    const batch = async (items: number, write: (tx: Orm) => Promise<void>) => {
      options.signal?.throwIfAborted();
      await orm.transaction(async (tx) => write(tx as unknown as Orm));
      committed++;
      written += items;
      await options.afterBatch?.(committed);
      await options.onProgress?.(written, total);
      // Whatever else waits on the database or the thread goes before the next batch.
      await nextTurn();
    };
    // Findings seen again, then new ones, then the fixed: a merge stopped midway has recorded
    // what this run found before it closes anything.
    for (let i = 0; i < plan.seenAgain.length; i += size) {
      const part = plan.seenAgain.slice(i, i + size);
      await batch(part.length, async (tx) => {
        const updated = new Set(await updateSeenAgain(tx, scope, part, now));
        const reported = part
          .filter((s) => updated.has(s.entry.id))
          .map((s) => ({
            id: s.entry.id,
            fingerprint: s.entry.fingerprint,
            severity: s.finding.severity,
            status:
              s.transition === 'reopen' ? 'open' : s.transition === 'dismiss' ? 'dismissed' : s.entry.status,
          }));
        await listForRun(tx, scope.runId, reported);
        outcome.reported.push(...reported);
      });
    }
    for (let i = 0; i < plan.fresh.length; i += size) {
      const part = plan.fresh.slice(i, i + size);
      await batch(part.length, async (tx) => {
        const rows = part.map((f) => freshRow(scope, f, now));
        const inserted = new Set(
          (await tx.insert(findings).values(rows).returning({ id: findings.id })).map((r) => r.id),
        );
        const reported = rows
          .filter((r) => inserted.has(r.id))
          .map((r) => ({ id: r.id, fingerprint: r.fingerprint, severity: r.severity, status: r.status }));
        await listForRun(tx, scope.runId, reported);
        outcome.reported.push(...reported);
        outcome.opened += reported.filter((r) => r.status === 'open').length;
        outcome.openedP0 += reported.filter((r) => r.status === 'open' && r.severity === 'P0').length;
      });
    }
    for (let i = 0; i < plan.fixed.length; i += size) {
      const ids = plan.fixed.slice(i, i + size).map((e) => e.id);
      await batch(ids.length, async (tx) => {
        const closed = await tx
          .update(findings)
          .set({ status: 'fixed', fixedAt: now, fixedRunId: scope.runId, updatedAt: now })
          .where(and(inArray(findings.id, ids), eq(findings.status, 'open')))
          .returning({ id: findings.id });
        outcome.fixed += closed.length;
      });
    }
    return outcome;
  });
}

/**
 * The ledger's rows as the plan reads them, a page at a time in fingerprint order (the ledger's
 * unique index), each page a short statement with a turn of the event loop after it. PGlite never
 * analyzes a table, so its planner guesses a ledger holds a few dozen rows and sorts the whole
 * ledger for every page; with sorting off it walks the index instead.
 */
async function readLedger(orm: Orm, ledgerKey: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let after: string | null = null;
  for (;;) {
    const from: string | null = after;
    const page: Entry[] = await orm.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL enable_sort = off`);
      return tx
        .select({
          id: findings.id,
          fingerprint: findings.fingerprint,
          status: findings.status,
          path: findings.path,
          anchorText: findings.anchorText,
          reviewers: findings.reviewers,
        })
        .from(findings)
        .where(
          from === null
            ? eq(findings.ledgerKey, ledgerKey)
            : and(eq(findings.ledgerKey, ledgerKey), gt(findings.fingerprint, from)),
        )
        .orderBy(asc(findings.fingerprint))
        .limit(READ_PAGE);
    });
    out.push(...page);
    if (page.length < READ_PAGE) return out;
    after = (page.at(-1) as Entry).fingerprint;
    await nextTurn();
  }
}

function freshRow(
  scope: LedgerScope,
  f: NewFinding,
  now: Date,
): typeof findings.$inferInsert & { id: string } {
  return {
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
    ...reportedFields(f.finding),
    lastRunId: scope.runId,
    commitSha: scope.headSha,
    updatedAt: now,
  };
}

/**
 * Rewrites the rows of findings found again in one statement: what the finding says now (and,
 * for a grouped idiom, the anchor of its first place now), this run as the last to report it,
 * and the status change the plan decided (`reopen`: open again; `dismiss`: an inline
 * `svc-ignore` answers it). Returns the ids written.
 */
async function updateSeenAgain(
  tx: Orm,
  scope: LedgerScope,
  part: SeenAgain<Entry>[],
  now: Date,
): Promise<string[]> {
  const at = now.toISOString();
  const values: SQL[] = part.map(({ entry, finding, reviewers, transition, dismissedReason, anchor }) => {
    const f = reportedFields(finding);
    return sql`(${entry.id}::text, ${f.severity}::text, ${f.path}::text, ${f.line}::integer, ${f.endLine}::integer, ${f.title}::text, ${f.body}::text, ${f.category}::text, ${f.suggestion}::text, ${JSON.stringify(reviewers)}::jsonb, ${transition}::text, ${dismissedReason}::text, ${anchor}::text)`;
  });
  const rows = await tx.execute<{ id: string }>(sql`
    UPDATE findings AS f SET
      severity = v.severity, path = v.path, line = v.line, end_line = v.end_line, title = v.title,
      body = v.body, category = v.category, suggestion = v.suggestion, reviewers = v.reviewers,
      anchor_text = COALESCE(v.anchor_text, f.anchor_text),
      task_id = ${scope.taskId}, last_run_id = ${scope.runId}, commit_sha = ${scope.headSha},
      updated_at = ${at}::timestamptz,
      status = CASE v.transition WHEN 'reopen' THEN 'open' WHEN 'dismiss' THEN 'dismissed' ELSE f.status END,
      fixed_at = CASE WHEN v.transition IS NULL THEN f.fixed_at END,
      fixed_run_id = CASE WHEN v.transition IS NULL THEN f.fixed_run_id END,
      dismissed_reason = CASE WHEN v.transition = 'dismiss' THEN v.dismissed_reason ELSE f.dismissed_reason END,
      dismissed_at = CASE WHEN v.transition = 'dismiss' THEN ${at}::timestamptz ELSE f.dismissed_at END
    FROM (VALUES ${sql.join(values, sql`, `)})
      AS v(id, severity, path, line, end_line, title, body, category, suggestion, reviewers, transition, dismissed_reason, anchor_text)
    WHERE f.id = v.id
    RETURNING f.id`);
  return (rows as unknown as { rows: { id: string }[] }).rows.map((r) => r.id);
}

/** The run's own list of what it reported (GET /reviews/{id} reads it, whatever later runs do). */
async function listForRun(tx: Orm, runId: string, reported: ReportedFinding[]): Promise<void> {
  if (reported.length === 0) return;
  await tx
    .insert(runFindings)
    .values(reported.map((f) => ({ runId, findingId: f.id })))
    .onConflictDoNothing();
}
