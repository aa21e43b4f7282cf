/**
 * The run engine's contract: what operations and task kinds may ask of it. The implementation
 * lives beside this file (engine.ts, worker.ts, sweeper.ts).
 */
import type { Gap, RunStatus, TaskKind } from '../core/runs';
import type { Database } from '../storage/database';
import type { runs, tasks } from '../storage/schema';

export type TaskRow = typeof tasks.$inferSelect;
export type RunRow = typeof runs.$inferSelect;

export interface CreateTaskInput {
  workspaceId: string;
  projectId: string | null;
  kind: TaskKind;
  title: string;
  input: Record<string, unknown>;
  /**
   * Not before: the first run is claimable from then on (a deadline timer, a delayed retry).
   * It counts as queued from then, so the pickup timeout runs from that moment.
   */
  availableAt?: Date;
}

/** One priced (or unpriced) item of a run's usage; `cost_usd` null when the price is unknown. */
export interface UsageLineItem {
  kind: string;
  description: string;
  quantity: number;
  unit: string;
  cost_usd: number | null;
}

/** What a task handler may do while its run executes. */
export interface RunContext {
  readonly run: RunRow;
  readonly task: TaskRow;
  readonly db: Database;
  /** Aborted when the run is canceled, the lease is lost, or the worker is evicted. */
  readonly signal: AbortSignal;
  progress(update: {
    phase?: string;
    statusText?: string;
    currentStep?: string;
    pct?: number;
  }): Promise<void>;
  /** Appends to the transcript. */
  message(
    role: 'note' | 'system' | 'user' | 'assistant' | 'tool',
    content: string,
    data?: unknown,
  ): Promise<void>;
  /**
   * The model's first token arrived (a streamed answer): sets the run's `first_token_at` unless
   * it is set. The first assistant or tool message sets it too, for handlers that do not stream.
   */
  firstToken(): Promise<void>;
  gap(gap: Gap): void;
  warn(line: string): void;
  usage(item: UsageLineItem): void;
  setBackend(backend: {
    harness?: string;
    provider?: string | null;
    model?: string | null;
    preset?: string;
  }): void;
  setSkills(
    skills: {
      skill_id: string;
      source: 'catalog' | 'project_override';
      executed_hash: string;
      base_catalog_hash?: string;
    }[],
  ): void;
  setSeedGraph(seed: { counts: Record<string, number>; gaps: Gap[] }): void;
}

/** A task kind's executor. Returns the run's `result`; throws RunFailure to fail by name. */
export type TaskHandler = ((ctx: RunContext) => Promise<Record<string, unknown>>) & {
  /**
   * Called when a run of the kind ends without its handler finishing it and no replacement will
   * (a brake refused it; the sweeper gave up on it: no worker picked it up, or its worker died
   * and the task was paused), with the reason: what the kind promised to the outside (a
   * code-host check) is settled here, so nothing waits on a run that will never report.
   */
  abandoned?: (ctx: RunContext, error: unknown) => Promise<void>;
};

export type TaskHandlers = Partial<Record<TaskKind, TaskHandler>>;

export interface EngineLimits {
  /** How long a lease lasts without a heartbeat before the sweeper declares the run dead. */
  leaseMs: number;
  heartbeatMs: number;
  /** A running run with no progress for this long fails `run_liveness_timeout`. */
  livenessMs: number;
  /** A pending run not claimed within this long fails `queue_pickup_timeout`. */
  pickupTimeoutMs: number;
  /** Wall-clock ceiling of one run: `backend_wall_clock_timeout`. */
  wallClockMs: number;
  /** Replacement runs allowed in one chain before the task is auto-paused. */
  maxReplacements: number;
  /** Fallback poll interval when no NOTIFY arrives. */
  pollMs: number;
  /** How long a draining worker lets its runs finish before handing them back. */
  shutdownGraceMs: number;
}

export interface RunStatusView {
  status: RunStatus;
  [field: string]: unknown;
}
