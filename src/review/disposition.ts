/**
 * A person's answer to a finding of the ledger: dismissed with a reason (the finding is wrong or
 * not worth fixing) or reopened (the dismissal is taken back). Every way to answer goes through
 * here: the API's `findings_append_event` (and its MCP tool) and a `wontfix:` reply on the code
 * host, so the rules, the ledger row and the finding's event log are the same whoever answers.
 *
 * What follows outside the ledger (the code host's `Service / Review` check) is not done here:
 * `automation/check.ts` recomputes it, reached from the operations through `Services`.
 */
import { and, eq, sql } from 'drizzle-orm';
import { ApiError } from '../core/errors';
import { type DispositionKind, dispositionRefusal } from '../core/review';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { events, findings } from '../storage/schema';
import { withLedgerMutex } from './ledger-lock';

type FindingRow = typeof findings.$inferSelect;
type EventRow = typeof events.$inferSelect;
type FindingStatus = FindingRow['status'];

/** `events.object_type` of a finding's log. */
export const FINDING_OBJECT_TYPE = 'finding';

export { DISPOSITION_KINDS, type DispositionKind, dispositionRefusal } from '../core/review';

export type Disposition =
  | { kind: 'dismissed'; reason: string }
  /** A reason is optional when reopening: taking a dismissal back needs no justification. */
  | { kind: 'reopened'; reason?: string | null | undefined };

export interface DispositionAuthor {
  /** The API key that answered; null when the service records a code-host reply. */
  actor: string | null;
  /** Facts about where the answer came from, kept in the event payload (`via`, `author`, …). */
  context?: Record<string, unknown>;
}

/** A disposition the finding's status does not allow: 409 `conflict` over the API. */
export class DispositionConflict extends ApiError {
  constructor(
    readonly findingId: string,
    readonly findingStatus: FindingStatus,
    readonly kind: DispositionKind,
    readonly refusal: string,
  ) {
    super('conflict', `finding ${findingId} cannot be ${kind}: ${refusal}`, {
      finding_id: findingId,
      status: findingStatus,
    });
  }
}

export interface DispositionResult {
  /** The finding after the change. */
  finding: FindingRow;
  /** The `dismissed` or `reopened` event appended to the finding's log. */
  event: EventRow;
}

type Tx = Parameters<Parameters<Database['orm']['transaction']>[0]>[0];

/**
 * Applies a disposition to finding `findingId` of the project. Null when the project has no such
 * finding; throws `DispositionConflict` when its status does not allow it. The row and its event
 * are written in one transaction, after the ledger's lock: a review writing the same ledger
 * (`recordInLedger` holds the same lock for its whole merge) lands wholly before or after it.
 */
export async function applyDisposition(
  db: Database,
  scope: { workspaceId: string; projectId: string },
  findingId: string,
  disposition: Disposition,
  author: DispositionAuthor,
  now = new Date(),
): Promise<DispositionResult | null> {
  const mine = and(
    eq(findings.id, findingId),
    eq(findings.workspaceId, scope.workspaceId),
    eq(findings.projectId, scope.projectId),
  );
  // A finding never changes ledger, so its key is read first: a review's merge writes in many
  // transactions and holds the ledger's lock (./ledger-lock.ts) across them all.
  const [located] = await db.orm
    .select({ ledgerKey: findings.ledgerKey })
    .from(findings)
    .where(mine)
    .limit(1);
  if (!located) return null;
  return withLedgerMutex(db, located.ledgerKey, () =>
    db.orm.transaction(async (tx) => {
      // On PostgreSQL this waits for a merge another process is making of the same ledger.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${located.ledgerKey}))`);
      // Read again under the lock: a review may have fixed or reopened it meanwhile.
      const [current] = await tx.select().from(findings).where(mine).limit(1);
      if (!current) return null;
      const refusal = dispositionRefusal(current.status, disposition.kind);
      if (refusal) throw new DispositionConflict(current.id, current.status, disposition.kind, refusal);
      const [finding] = await tx
        .update(findings)
        .set(
          disposition.kind === 'dismissed'
            ? { status: 'dismissed', dismissedReason: disposition.reason, dismissedAt: now, updatedAt: now }
            : { status: 'open', dismissedReason: null, dismissedAt: null, updatedAt: now },
        )
        .where(eq(findings.id, current.id))
        .returning();
      if (!finding) throw new Error(`finding ${current.id} update returned no row`);
      const event = await appendDispositionEvent(tx, finding, disposition, author, now);
      return { finding, event };
    }),
  );
}

/**
 * The finding's log entry, stored as every object event is (`data` = `{payload, occurred_at}`,
 * read back by `toEventRecord` in operations/collections.ts), so `findings_events` serves it.
 */
async function appendDispositionEvent(
  tx: Tx,
  finding: FindingRow,
  disposition: Disposition,
  author: DispositionAuthor,
  now: Date,
): Promise<EventRow> {
  const payload: Record<string, unknown> = {
    ...author.context,
    ...(disposition.reason ? { reason: disposition.reason } : {}),
  };
  const [row] = await tx
    .insert(events)
    .values({
      id: newId('event'),
      workspaceId: finding.workspaceId,
      projectId: finding.projectId,
      objectType: FINDING_OBJECT_TYPE,
      objectId: finding.id,
      kind: disposition.kind,
      data: { payload, occurred_at: now.toISOString() },
      actor: author.actor,
      createdAt: now,
    })
    .returning();
  if (!row) throw new Error('event insert returned no row');
  return row;
}

/** What became of the pull request's `Service / Review` check after a disposition. */
export interface CheckFollowUp {
  recomputed: boolean;
  /** The head commit whose check was (or would have been) recomputed. */
  headSha: string | null;
  /** The check's conclusion after recomputing; null when it was left alone. */
  conclusion: string | null;
  /** Why the check was left alone; null when recomputed. */
  reason: string | null;
}

/** Brings the code host's check in step with the ledger after a disposition, without a new run. */
export type CheckRecompute = (finding: FindingRow) => Promise<CheckFollowUp>;
