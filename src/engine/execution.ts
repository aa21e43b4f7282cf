/**
 * One claimed run on one worker: the RunContext its handler sees, the timers that stop it
 * (liveness, wall clock), and what it accumulated for the terminal frame. The worker decides
 * when to start and how to end it; this class only holds the run's state.
 */
import { and, eq, sql } from 'drizzle-orm';
import { RunFailure } from '../core/failures';
import type { Gap } from '../core/runs';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { runMessages, runs } from '../storage/schema';
import type { TerminalFrame } from './frames';
import type { EngineLimits, RunContext, RunRow, TaskRow, UsageLineItem } from './types';

/** Why a run's handler was aborted; decides what (if anything) the worker commits. */
export type AbortCause =
  | { kind: 'failure'; failure: RunFailure }
  /** The run is no longer ours (canceled, or the sweeper took it): commit nothing. */
  | { kind: 'lost'; reason: string }
  /** The worker is shutting down and the grace period ran out. */
  | { kind: 'evict' };

export class RunExecution {
  readonly controller = new AbortController();
  cause: AbortCause | null = null;
  /** Set once the terminal frame is decided; later context calls are ignored. */
  done = false;
  private readonly warnings: string[] = [];
  private readonly gaps: Gap[] = [];
  private readonly lineItems: UsageLineItem[] = [];
  private backend: Record<string, unknown> = {};
  private skills: Record<string, unknown>[] = [];
  private seedGraph: Record<string, unknown> | null = null;
  readonly runnerClock: Record<string, string> = {};
  private livenessTimer: NodeJS.Timeout | undefined;
  private wallClockTimer: NodeJS.Timeout | undefined;
  private firstToken = false;

  constructor(
    public run: RunRow,
    private readonly db: Database,
    private readonly workerId: string,
    private readonly limits: EngineLimits,
  ) {
    this.runnerClock.dequeued_at = new Date().toISOString();
  }

  abort(cause: AbortCause): void {
    if (this.cause || this.done) return;
    this.cause = cause;
    this.controller.abort(cause.kind === 'failure' ? cause.failure : new Error(`run aborted: ${cause.kind}`));
  }

  /** Arms the wall-clock ceiling and the liveness watchdog; the handler starts right after. */
  startTimers(): void {
    this.runnerClock.started_at = new Date().toISOString();
    this.wallClockTimer = setTimeout(() => {
      this.abort({
        kind: 'failure',
        failure: new RunFailure(
          'backend_wall_clock_timeout',
          `the run exceeded its wall-clock limit of ${this.limits.wallClockMs} ms`,
          { wall_clock_ms: this.limits.wallClockMs },
        ),
      });
    }, this.limits.wallClockMs);
    this.touch();
  }

  /** Progress seen: re-arm the liveness watchdog. */
  private touch(): void {
    clearTimeout(this.livenessTimer);
    if (this.done || this.cause) return;
    this.livenessTimer = setTimeout(() => {
      this.abort({
        kind: 'failure',
        failure: new RunFailure(
          'run_liveness_timeout',
          `the run made no progress for ${this.limits.livenessMs} ms`,
          { liveness_ms: this.limits.livenessMs },
        ),
      });
    }, this.limits.livenessMs);
  }

  stopTimers(): void {
    clearTimeout(this.livenessTimer);
    clearTimeout(this.wallClockTimer);
  }

  /** True while this worker still holds the run; writes that find otherwise abort the handler. */
  private guard() {
    return and(eq(runs.id, this.run.id), eq(runs.status, 'running'), eq(runs.leaseOwner, this.workerId));
  }

  context(task: TaskRow): RunContext {
    const self = this;
    return {
      run: this.run,
      task,
      db: this.db,
      signal: this.controller.signal,
      async progress(update) {
        if (self.done || self.cause) return;
        self.touch();
        const rows = await self.db.orm
          .update(runs)
          .set({
            ...(update.phase !== undefined ? { phase: update.phase } : {}),
            ...(update.statusText !== undefined ? { statusText: update.statusText } : {}),
            ...(update.currentStep !== undefined ? { currentStep: update.currentStep } : {}),
            ...(update.pct !== undefined
              ? { progressPct: Math.max(0, Math.min(100, Math.round(update.pct))) }
              : {}),
            progressAt: sql`now()`,
            updatedAt: sql`now()`,
          })
          .where(self.guard())
          .returning({ id: runs.id });
        if (rows.length === 0)
          self.abort({ kind: 'lost', reason: 'the run is no longer held by this worker' });
      },
      async message(role, content, data) {
        if (self.done || self.cause) return;
        self.touch();
        // Insert only while the run is still ours, and note the first token in the same statement.
        if (!(await self.held(role === 'assistant' || role === 'tool'))) return;
        await self.db.orm.insert(runMessages).values({
          id: newId('message'),
          runId: self.run.id,
          taskId: self.run.taskId,
          role,
          content,
          data: data ?? null,
        });
      },
      async firstToken() {
        if (self.done || self.cause || self.firstToken) return;
        self.touch();
        await self.held(true);
      },
      gap(gap) {
        self.gaps.push(gap);
      },
      warn(line) {
        self.warnings.push(line);
      },
      usage(item) {
        self.lineItems.push(item);
      },
      setBackend(backend) {
        self.backend = { ...self.backend, ...backend };
      },
      setSkills(skills) {
        self.skills = skills;
      },
      setSeedGraph(seed) {
        self.seedGraph = seed;
      },
    };
  }

  /**
   * Notes progress (and, with `token`, the first token once) while the run is still ours; false,
   * with the handler aborted, when it is not.
   */
  private async held(token: boolean): Promise<boolean> {
    const first = token && !this.firstToken;
    if (first) {
      this.firstToken = true;
      this.runnerClock.first_token_at = new Date().toISOString();
    }
    const rows = await this.db.orm
      .update(runs)
      .set({
        progressAt: sql`now()`,
        ...(first ? { firstTokenAt: sql`coalesce(${runs.firstTokenAt}, now())` } : {}),
      })
      .where(this.guard())
      .returning({ id: runs.id });
    if (rows.length > 0) return true;
    this.abort({ kind: 'lost', reason: 'the run is no longer held by this worker' });
    return false;
  }

  /** What the handler accumulated, for the terminal frame. */
  accumulated(): Omit<TerminalFrame, 'status'> {
    const costs = this.lineItems.map((i) => i.cost_usd);
    // Unknown stays null: one unpriced item makes the total unknown, and no items is no price.
    const costUsd =
      costs.length > 0 && costs.every((c) => c !== null)
        ? costs.reduce<number>((a, c) => a + (c ?? 0), 0)
        : null;
    const tokens = (unit: string) =>
      this.lineItems.filter((i) => i.unit === unit).reduce((a, i) => a + i.quantity, 0);
    return {
      warnings: this.warnings,
      gaps: this.gaps,
      usage: {
        input_tokens: tokens('input_tokens'),
        output_tokens: tokens('output_tokens'),
        credits: tokens('credits'),
        line_items: this.lineItems,
      },
      costUsd,
      backend: this.backend,
      skills: this.skills,
      seedGraph: this.seedGraph,
      runnerClock: { ...this.runnerClock, finished_at: new Date().toISOString() },
    };
  }
}
