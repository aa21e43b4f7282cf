/**
 * What the API shows of a run: the receipt (inlined in task reads and run lists) and the full
 * status block (the spec's "Run status block"). Pure functions of the stored row; the only
 * database-derived value, `queue_ahead`, is passed in.
 */
import { isRunFailureCode, RUN_FAILURE_REMEDY } from '../core/failures';
import type { RunStatus } from '../core/runs';
import type { EngineLimits, RunRow, TaskRow, UsageLineItem } from './types';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const between = (a: Date | string | null | undefined, b: Date | string | null | undefined) => {
  if (!a || !b) return null;
  return Math.max(0, new Date(b).getTime() - new Date(a).getTime());
};

/** The spec's `state`: a coarser, human word for where the run is. */
function stateOf(run: RunRow): string {
  switch (run.status) {
    case 'pending':
      return 'queued';
    case 'running':
      return run.startedAt ? 'executing' : 'starting';
    case 'completed':
      return run.gaps.length > 0 ? 'succeeded_with_gaps' : 'succeeded';
    default:
      return run.status;
  }
}

export function errorJson(run: RunRow) {
  if (!run.error) return null;
  const code = run.error.code;
  return {
    ...run.error,
    code,
    message: run.error.message,
    run_id: run.id,
    remedy: isRunFailureCode(code) ? RUN_FAILURE_REMEDY[code] : null,
  };
}

interface Clock {
  created_at: string | null;
  queued_at: string | null;
  dequeued_at: string | null;
  started_at: string | null;
  first_token_at: string | null;
  finished_at: string | null;
}

function durations(c: Clock) {
  return {
    queue_ms: between(c.queued_at, c.dequeued_at),
    startup_ms: between(c.dequeued_at, c.started_at),
    first_token_ms: between(c.started_at, c.first_token_at),
    run_ms: between(c.started_at, c.finished_at),
    total_ms: between(c.created_at, c.finished_at),
  };
}

function rowClock(run: RunRow): Clock {
  return {
    created_at: iso(run.createdAt),
    queued_at: iso(run.queuedAt),
    dequeued_at: iso(run.dequeuedAt),
    started_at: iso(run.startedAt),
    first_token_at: iso(run.firstTokenAt),
    finished_at: iso(run.finishedAt),
  };
}

function runnerClock(run: RunRow): Clock {
  const c = run.runnerClock;
  return {
    created_at: null,
    queued_at: null,
    dequeued_at: c.dequeued_at ?? null,
    started_at: c.started_at ?? null,
    first_token_at: c.first_token_at ?? null,
    finished_at: c.finished_at ?? null,
  };
}

/** Timings shown on the receipt: the row clock with its durations. */
export function timings(run: RunRow) {
  const clock = rowClock(run);
  return { ...clock, durations_ms: durations(clock) };
}

function usageOf(run: RunRow) {
  const { line_items: _items, ...totals } = run.usage as { line_items?: unknown };
  return totals as Record<string, unknown>;
}

function lineItems(run: RunRow): UsageLineItem[] {
  const items = (run.usage as { line_items?: UsageLineItem[] }).line_items;
  return Array.isArray(items) ? items : [];
}

/** The run receipt: inlined as a task's `run` and listed by `GET /tasks/{id}/runs`. */
export function runReceipt(run: RunRow) {
  return {
    object: 'run' as const,
    id: run.id,
    task_id: run.taskId,
    status: run.status as RunStatus,
    result: (run.result ?? null) as Record<string, unknown> | null,
    usage: usageOf(run),
    cost_usd: run.costUsd ?? null,
    error: errorJson(run),
    gaps: run.gaps,
    warnings: run.warnings,
    retry: { retry_of: run.retryOf, retry_count: run.retryCount },
    terminal_event_count: run.terminalEventCount,
    timings: timings(run),
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
  };
}

export function taskRecord(task: TaskRow, run: RunRow | null) {
  return {
    object: 'task' as const,
    id: task.id,
    kind: task.kind,
    title: task.title,
    project_id: task.projectId,
    revision: task.revision,
    paused_reason: task.pausedReason,
    run: run ? runReceipt(run) : null,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

export interface StatusBlockOptions {
  includeCost?: boolean;
  /** Pending runs in front of this one; only meaningful while it is pending. */
  queueAhead?: number | null;
  /** The engine's limits, shown for a run that no worker has resolved limits for yet. */
  engineLimits?: EngineLimits;
  now?: Date;
}

function limitsOf(run: RunRow, engine: EngineLimits | undefined): Record<string, number | undefined> {
  if (Object.keys(run.limits).length > 0 || !engine) return run.limits as Record<string, number | undefined>;
  return {
    lease_ms: engine.leaseMs,
    heartbeat_ms: engine.heartbeatMs,
    liveness_ms: engine.livenessMs,
    pickup_timeout_ms: engine.pickupTimeoutMs,
    wall_clock_ms: engine.wallClockMs,
    max_replacements: engine.maxReplacements,
  };
}

/** The full status block of one run. */
export function statusBlock(run: RunRow, task: TaskRow, options: StatusBlockOptions = {}) {
  const now = options.now ?? new Date();
  const active = run.status === 'pending' || run.status === 'running';
  const err = errorJson(run);
  const limits = limitsOf(run, options.engineLimits);
  const firedCode =
    err && ['run_liveness_timeout', 'backend_wall_clock_timeout', 'queue_pickup_timeout'].includes(err.code)
      ? err.code
      : null;
  const budgetCode =
    err && ['spend_cap_reached', 'budget_exceeded', 'project_paused'].includes(err.code) ? err.code : null;
  const row = rowClock(run);
  const runner = runnerClock(run);
  const leaseExpired = run.status === 'running' && run.leaseExpiresAt !== null && run.leaseExpiresAt < now;
  const backend = run.backend as Record<string, unknown>;
  const seed = run.seedGraph as { counts?: Record<string, number>; gaps?: unknown[] } | null;

  return {
    object: 'run_status' as const,
    id: run.id,
    run_id: run.id,
    task_id: task.id,
    status: run.status as RunStatus,
    state: stateOf(run),
    phase: run.phase ?? (run.status === 'pending' ? 'queued' : run.status),
    status_text: run.statusText ?? (run.status === 'pending' ? 'waiting for a worker' : null),
    current_step: run.currentStep,
    progress_pct: run.progressPct,
    terminal_event_count: run.terminalEventCount,
    error_json: err,
    // Operators see at least the error message when nothing else was flagged.
    warnings: run.warnings.length > 0 ? run.warnings : err ? [err.message] : [],
    gaps: run.gaps,
    retry: { retry_of: run.retryOf, retry_count: run.retryCount },
    lifecycle: {
      stage: stateOf(run),
      ...row,
      durations_ms: durations(row),
    },
    row_clock: { ...row, durations_ms: durations(row) },
    runner_clock: { ...runner, worker_id: run.leaseOwner, durations_ms: durations(runner) },
    queue_ahead: run.status === 'pending' ? (options.queueAhead ?? 0) : null,
    backend: {
      platform: 'svc-worker',
      worker_id: run.leaseOwner,
      harness: (backend.harness as string | undefined) ?? run.kind,
      provider: (backend.provider as string | null | undefined) ?? null,
      model: (backend.model as string | null | undefined) ?? null,
      preset: (backend.preset as string | undefined) ?? 'default',
    },
    limits: {
      lease_ms: limits.lease_ms ?? null,
      heartbeat_ms: limits.heartbeat_ms ?? null,
      max_replacements: limits.max_replacements ?? null,
      budget_fired: budgetCode,
    },
    timeouts: {
      liveness_ms: limits.liveness_ms ?? null,
      wall_clock_ms: limits.wall_clock_ms ?? null,
      pickup_timeout_ms: limits.pickup_timeout_ms ?? null,
      fired: firedCode,
    },
    harness: {
      name: (backend.harness as string | undefined) ?? run.kind,
      kind: run.kind,
      task_revision: run.taskRevision,
      budget_fired: budgetCode !== null || firedCode !== null,
    },
    seed_graph: seed ? { counts: seed.counts ?? {}, gaps: seed.gaps ?? [] } : null,
    skills: run.skills,
    usage_json: usageOf(run),
    ...(options.includeCost ? { usage_line_items: lineItems(run) } : {}),
    cost_usd: run.costUsd ?? null,
    live:
      run.status === 'running'
        ? {
            phase: run.phase,
            current_step: run.currentStep,
            progress_pct: run.progressPct,
            heartbeat_at: iso(run.heartbeatAt),
            progress_at: iso(run.progressAt),
            lease_expires_at: iso(run.leaseExpiresAt),
          }
        : null,
    live_warning: leaseExpired
      ? `the worker's lease expired at ${iso(run.leaseExpiresAt)}; the sweeper will end this run run_invocation_died`
      : null,
    sweep: active
      ? {
          reason:
            run.status === 'pending'
              ? 'waiting_for_worker'
              : leaseExpired
                ? 'lease_expired_awaiting_sweep'
                : 'executing_with_live_lease',
          lease_owner: run.leaseOwner,
          lease_expires_at: iso(run.leaseExpiresAt),
          pickup_deadline:
            run.status === 'pending' && limits.pickup_timeout_ms !== undefined
              ? new Date(run.queuedAt.getTime() + limits.pickup_timeout_ms).toISOString()
              : null,
        }
      : null,
    // svc has no detached backends: the worker itself commits the terminal frame.
    callback: { detached: false, expected: false, arrived: null },
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
  };
}

export type RunReceipt = ReturnType<typeof runReceipt>;
export type TaskRecord = ReturnType<typeof taskRecord>;
export type StatusBlock = ReturnType<typeof statusBlock>;
