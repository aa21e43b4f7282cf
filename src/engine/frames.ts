/**
 * The writes that end runs and start their replacements. Every terminal status goes through
 * `commitTerminal`, so a finished run always has its note, `finished_at` and
 * `terminal_event_count = 1` written in the same transaction as its status.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { RUN_FAILURE_REMEDY, type RunFailureCode } from '../core/failures';
import type { Gap, RunStatus } from '../core/runs';
import type { Orm } from '../storage/database';
import { newId } from '../storage/ids';
import { appendObjectEvent } from '../storage/object-events';
import { runMessages, runs, tasks } from '../storage/schema';
import type { EngineLimits, RunRow } from './types';

/** A transaction or the database itself: both expose the same query builder. */
export type Tx = Parameters<Parameters<Orm['transaction']>[0]>[0] | Orm;

export const RUNS_CHANNEL = 'svc_runs';

/** SQL for "n milliseconds" as an interval, so lease arithmetic runs on the database clock. */
export const millis = (n: number) => sql`(${Math.round(n)}::double precision * interval '1 millisecond')`;

export interface RunError {
  code: RunFailureCode;
  message: string;
  details?: Record<string, unknown> | undefined;
}

export interface TerminalFrame {
  status: 'completed' | 'failed' | 'canceled';
  error?: RunError | null;
  result?: Record<string, unknown> | null;
  warnings?: string[];
  gaps?: Gap[];
  usage?: Record<string, unknown>;
  costUsd?: number | null;
  backend?: Record<string, unknown>;
  skills?: Record<string, unknown>[];
  seedGraph?: Record<string, unknown> | null;
  runnerClock?: Record<string, string>;
  /** Shown in the canceled note (who or what canceled). */
  reason?: string;
}

export interface TerminalGuard {
  /** The run must currently be in one of these statuses. */
  from: RunStatus[];
  /** When set, the run must still be leased by this worker. */
  leaseOwner?: string;
}

/** The visible note that opens a run's final part of the transcript. */
export function terminalNote(
  runId: string,
  frame: TerminalFrame,
): { content: string; data: Record<string, unknown> } {
  if (frame.status === 'failed' && frame.error) {
    const remedy = RUN_FAILURE_REMEDY[frame.error.code];
    return {
      content: `Run failed with ${frame.error.code}: ${frame.error.message} Remedy: ${remedy}`,
      data: {
        terminal: true,
        status: 'failed',
        code: frame.error.code,
        message: frame.error.message,
        remedy,
        run_id: runId,
      },
    };
  }
  if (frame.status === 'canceled') {
    return {
      content: `Run canceled${frame.reason ? `: ${frame.reason}` : '.'}`,
      data: { terminal: true, status: 'canceled', run_id: runId },
    };
  }
  const gaps = frame.gaps ?? [];
  const suffix = gaps.length ? ` with ${gaps.length} gap(s): ${gaps.map((g) => g.code).join(', ')}.` : '.';
  return {
    content: `Run completed${suffix}`,
    data: { terminal: true, status: 'completed', gaps, run_id: runId },
  };
}

/**
 * Writes the terminal frame in the caller's transaction. Returns the updated run, or null when
 * the guard did not hold (someone else already ended it, or the lease was lost) — then nothing
 * was written and the caller must not write anything else either.
 */
export async function commitTerminal(
  tx: Tx,
  runId: string,
  frame: TerminalFrame,
  guard: TerminalGuard,
): Promise<RunRow | null> {
  const error = frame.error
    ? { code: frame.error.code, message: frame.error.message, run_id: runId, ...(frame.error.details ?? {}) }
    : null;
  const conditions = [eq(runs.id, runId), inArray(runs.status, guard.from)];
  if (guard.leaseOwner) conditions.push(eq(runs.leaseOwner, guard.leaseOwner));
  const [row] = await tx
    .update(runs)
    .set({
      status: frame.status,
      error,
      ...(frame.result !== undefined ? { result: frame.result } : {}),
      ...(frame.warnings ? { warnings: frame.warnings } : {}),
      ...(frame.gaps ? { gaps: frame.gaps } : {}),
      ...(frame.usage ? { usage: frame.usage } : {}),
      ...(frame.costUsd !== undefined ? { costUsd: frame.costUsd } : {}),
      ...(frame.backend ? { backend: frame.backend } : {}),
      ...(frame.skills ? { skills: frame.skills } : {}),
      ...(frame.seedGraph !== undefined ? { seedGraph: frame.seedGraph } : {}),
      ...(frame.runnerClock ? { runnerClock: frame.runnerClock } : {}),
      ...(frame.status === 'completed' ? { progressPct: 100 } : {}),
      phase: frame.status,
      statusText: terminalNote(runId, frame).content,
      terminalEventCount: 1,
      finishedAt: sql`now()`,
      leaseExpiresAt: null,
      updatedAt: sql`now()`,
    })
    .where(and(...conditions))
    .returning();
  if (!row) return null;
  const note = terminalNote(runId, frame);
  await tx.insert(runMessages).values({
    id: newId('message'),
    runId,
    taskId: row.taskId,
    role: 'note',
    content: note.content,
    data: note.data,
  });
  // The run's end on the timeline, in the terminal commit: how it ended and, if it failed, why.
  await appendObjectEvent(tx, {
    workspaceId: row.workspaceId,
    projectId: row.projectId,
    objectType: 'run',
    objectId: runId,
    kind: frame.status,
    payload: {
      before: { status: guard.from.length === 1 ? guard.from[0] : null },
      after: { status: frame.status, error_code: frame.error?.code ?? null },
      task_id: row.taskId,
      kind: row.kind,
    },
    actor: null,
  });
  return row;
}

/**
 * A run entering the queue, on the timeline in the commit that inserts it. Every path that
 * inserts a run calls this (enqueue writes the same event in its one statement).
 */
export async function recordQueued(tx: Tx, run: RunRow): Promise<void> {
  await appendObjectEvent(tx, {
    workspaceId: run.workspaceId,
    projectId: run.projectId,
    objectType: 'run',
    objectId: run.id,
    kind: 'queued',
    payload: { task_id: run.taskId, kind: run.kind, retry_of: run.retryOf },
    actor: null,
  });
}

/** A new pending run of the same task, input and revision, pointing back at `previous`. */
export async function insertReplacement(tx: Tx, previous: RunRow): Promise<RunRow> {
  const [row] = await tx
    .insert(runs)
    .values({
      id: newId('run'),
      taskId: previous.taskId,
      workspaceId: previous.workspaceId,
      projectId: previous.projectId,
      kind: previous.kind,
      status: 'pending',
      taskRevision: previous.taskRevision,
      input: previous.input,
      retryOf: previous.id,
      retryCount: previous.retryCount + 1,
    })
    .returning();
  if (!row) throw new Error('insert of a replacement run returned no row');
  await recordQueued(tx, row);
  return row;
}

/**
 * Records the run that says a task is paused: failed at once with
 * `task_auto_paused_repeat_failure`, so the task read (latest run) names why nothing runs.
 */
export async function insertPausedRun(
  tx: Tx,
  base: Pick<RunRow, 'taskId' | 'workspaceId' | 'projectId' | 'kind' | 'taskRevision' | 'input'>,
  retry: { retryOf: string | null; retryCount: number },
  message: string,
): Promise<RunRow> {
  const [pending] = await tx
    .insert(runs)
    .values({
      id: newId('run'),
      // Only these fields: callers may pass a whole run row, whose id and clocks must not be copied.
      taskId: base.taskId,
      workspaceId: base.workspaceId,
      projectId: base.projectId,
      kind: base.kind,
      taskRevision: base.taskRevision,
      input: base.input,
      status: 'pending',
      retryOf: retry.retryOf,
      retryCount: retry.retryCount,
    })
    .returning();
  if (!pending) throw new Error('insert of a paused-task run returned no row');
  await recordQueued(tx, pending);
  const failed = await commitTerminal(
    tx,
    pending.id,
    { status: 'failed', error: { code: 'task_auto_paused_repeat_failure', message } },
    { from: ['pending'] },
  );
  if (!failed) throw new Error('a freshly inserted run could not be terminalized');
  return failed;
}

/**
 * After a platform replacement failure (`run_invocation_died`, `run_evicted_by_deploy`): start
 * exactly one replacement, unless the chain already used up `maxReplacements` — then pause the
 * task and record the paused run instead. `countsTowardPause` is false for deploy evictions,
 * which are the platform's doing, not the task's.
 */
export async function replaceOrPause(
  tx: Tx,
  ended: RunRow,
  limits: Pick<EngineLimits, 'maxReplacements'>,
  countsTowardPause: boolean,
): Promise<{ replacement: RunRow | null; paused: RunRow | null }> {
  if (countsTowardPause && ended.retryCount >= limits.maxReplacements) {
    await tx
      .update(tasks)
      .set({ pausedReason: 'task_auto_paused_repeat_failure', updatedAt: sql`now()` })
      .where(eq(tasks.id, ended.taskId));
    const paused = await insertPausedRun(
      tx,
      ended,
      { retryOf: ended.id, retryCount: ended.retryCount + 1 },
      `The task failed ${ended.retryCount + 1} times in a row (last: ${ended.error?.code ?? 'unknown'}) and was paused; no further replacement runs start.`,
    );
    return { replacement: null, paused };
  }
  return { replacement: await insertReplacement(tx, ended), paused: null };
}
