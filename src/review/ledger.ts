/**
 * The findings ledger of one pull request (or one commit-range review). A re-run never
 * duplicates a finding it sees again; a finding whose anchor is gone from the new head and that
 * was not found again becomes fixed; a dismissed finding stays dismissed.
 */
import { and, eq, sql } from 'drizzle-orm';
import { findingFingerprint, normalizeAnchor } from '../core/review';
import type { Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { findings, runFindings } from '../storage/schema';
import type { MergedFinding } from './merge';

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

/** The new file's text for a path at head, or null when the path no longer exists. */
export type HeadText = (path: string) => string | null;

export interface LedgerOutcome {
  /** Rows reported by this run (new, still open, or still dismissed), in report order. */
  reported: FindingRow[];
  opened: number;
  reopened: number;
  fixed: number;
  stillDismissed: number;
}

function anchorOf(text: string | null, line: number, endLine: number): string {
  if (text === null) return '';
  return text
    .split('\n')
    .slice(line - 1, endLine)
    .join('\n');
}

/** Fingerprints for this run's findings; identical code flagged twice in a file stays two findings. */
export function fingerprintAll(
  found: MergedFinding[],
  headText: HeadText,
): { finding: MergedFinding; fingerprint: string; anchor: string }[] {
  const occurrences = new Map<string, number>();
  return [...found]
    .sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line)
    .map((finding) => {
      const anchor = normalizeAnchor(anchorOf(headText(finding.path), finding.line, finding.endLine));
      const base = `${finding.path}\u0000${finding.rule}\u0000${anchor}`;
      const n = (occurrences.get(base) ?? 0) + 1;
      occurrences.set(base, n);
      return {
        finding,
        anchor,
        fingerprint: findingFingerprint({
          path: finding.path,
          rule: finding.rule,
          anchorText: n === 1 ? anchor : `${anchor}#${n}`,
        }),
      };
    });
}

/** True when the normalized anchor still occurs in the file's text at head. */
export function anchorStillPresent(anchor: string, text: string | null): boolean {
  if (text === null) return false;
  if (anchor === '') return true;
  return normalizeAnchor(text).includes(anchor);
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
  const byFingerprint = new Map(existing.map((row) => [row.fingerprint, row]));
  const seen = new Set<string>();
  const outcome: LedgerOutcome = { reported: [], opened: 0, reopened: 0, fixed: 0, stillDismissed: 0 };
  const fresh: (typeof findings.$inferInsert)[] = [];

  for (const { finding, fingerprint, anchor } of fingerprintAll(found, headText)) {
    seen.add(fingerprint);
    const row = byFingerprint.get(fingerprint);
    const fields = {
      severity: finding.severity,
      path: finding.path,
      line: finding.line,
      endLine: finding.endLine,
      title: finding.title,
      body: finding.body,
      category: finding.category,
      suggestion: finding.suggestion ?? null,
      lastRunId: scope.runId,
      commitSha: scope.headSha,
      updatedAt: now,
    };
    if (!row) {
      fresh.push({
        id: newId('finding'),
        workspaceId: scope.workspaceId,
        projectId: scope.projectId,
        ledgerKey: scope.ledgerKey,
        pullRequestId: scope.pullRequestId,
        fingerprint,
        status: 'open',
        rule: finding.rule,
        reviewers: finding.reviewers,
        anchorText: anchor,
        taskId: scope.taskId,
        firstRunId: scope.runId,
        ...fields,
      });
      continue;
    }
    const reviewers = [...new Set([...row.reviewers, ...finding.reviewers])];
    const reopened = row.status === 'fixed';
    if (row.status === 'dismissed') outcome.stillDismissed++;
    if (reopened) outcome.reopened++;
    const [updated] = await tx
      .update(findings)
      .set({
        ...fields,
        reviewers,
        taskId: scope.taskId,
        // A dismissal is a person's decision: a re-run does not undo it.
        ...(reopened ? { status: 'open' as const, fixedAt: null, fixedRunId: null } : {}),
      })
      .where(and(eq(findings.id, row.id)))
      .returning();
    if (updated) outcome.reported.push(updated);
  }

  // New findings go in batches: one statement per few hundred rows instead of one per finding.
  for (let i = 0; i < fresh.length; i += INSERT_BATCH) {
    const inserted = await tx
      .insert(findings)
      .values(fresh.slice(i, i + INSERT_BATCH))
      .returning();
    outcome.reported.push(...inserted);
    outcome.opened += inserted.length;
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

  for (const row of existing) {
    if (row.status !== 'open' || seen.has(row.fingerprint) || !inspectedPaths.has(row.path)) continue;
    if (anchorStillPresent(row.anchorText, headText(row.path))) continue;
    await tx
      .update(findings)
      .set({ status: 'fixed', fixedAt: now, fixedRunId: scope.runId, updatedAt: now })
      .where(eq(findings.id, row.id));
    outcome.fixed++;
  }
  return outcome;
}
