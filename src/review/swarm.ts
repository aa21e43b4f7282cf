/**
 * Swarms: one task (kind `swarm`) whose runs fan out to child tasks toward one goal
 * (swarm-goals.ts) and then settle.
 *
 * Why runs, and not one long run: a run that waited for its children would hold a worker slot
 * for as long as they take — on a one-slot worker, forever, since the children could never be
 * claimed. So the first run creates every child in one transaction (each with `parent_task_id`
 * naming the swarm) and ends; each later run is a short `settle` check scheduled after a growing
 * delay (`available_at`, as a check's deadline task waits), which either schedules the next one
 * or, once every child has ended, records the outcome. No worker waits in between.
 *
 * The swarm's own state lives on its timeline: `created`, `started` (the fan-out, with what it
 * created and skipped), then exactly one of `completed`, `failed` or `canceled`, each appended in
 * the transaction that makes the change, under a lock on the swarm's task row so a settle and a
 * cancel cannot both end it. Everything else (child counts, spend, the goal's result) is read
 * from the children's runs when asked.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { ApiError } from '../core/errors';
import { ACTIVE_RUN_STATUSES, RUN_STATUSES, type RunStatus } from '../core/runs';
import type { Engine } from '../engine/engine';
import { commitTerminal, millis, recordQueued, type Tx } from '../engine/frames';
import type { RunRow, TaskHandler, TaskRow } from '../engine/types';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { appendObjectEvent, type EventRow } from '../storage/object-events';
import { events, runs, tasks } from '../storage/schema';
import { type ChildView, followUpTaskIds, goalResult, planFanOut, type SwarmInput } from './swarm-goals';

export const SWARM_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
export type SwarmStatus = (typeof SWARM_STATUSES)[number];
const ENDING_KINDS = ['completed', 'failed', 'canceled'] as const;

/** The longest a settle check waits before looking again. */
export const MAX_SETTLE_DELAY_MS = 30_000;

/** Delay before settle check `attempt` (0, 1, …): the poll interval, doubling, at most 30 s. */
export function settleDelayMs(pollMs: number, attempt: number): number {
  return Math.min(MAX_SETTLE_DELAY_MS, Math.max(50, pollMs) * 2 ** Math.min(attempt, 16));
}

const inputOf = (task: TaskRow) => task.input as unknown as SwarmInput;

// Reading a swarm ------------------------------------------------------------------------------

export async function swarmEvents(db: Tx, swarm: Pick<TaskRow, 'id' | 'workspaceId'>): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.workspaceId, swarm.workspaceId),
        eq(events.objectType, 'swarm'),
        eq(events.objectId, swarm.id),
      ),
    )
    .orderBy(asc(events.createdAt), asc(events.id));
}

const endingOf = (log: EventRow[]) => log.find((e) => (ENDING_KINDS as readonly string[]).includes(e.kind));
const payloadOf = (event: EventRow | undefined) =>
  ((event?.data as { payload?: Record<string, unknown> } | undefined)?.payload ?? {}) as Record<
    string,
    unknown
  >;

/** The swarm's children with every run of each (oldest first), and the fan-out's note on each. */
async function childrenOf(db: Tx, swarm: TaskRow, log: EventRow[]) {
  const childTasks = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.parentTaskId, swarm.id), eq(tasks.workspaceId, swarm.workspaceId)))
    .orderBy(asc(tasks.createdAt), asc(tasks.id));
  const childRuns =
    childTasks.length === 0
      ? []
      : await db
          .select()
          .from(runs)
          .where(
            inArray(
              runs.taskId,
              childTasks.map((t) => t.id),
            ),
          )
          .orderBy(asc(runs.createdAt), asc(runs.id));
  const started = payloadOf(log.find((e) => e.kind === 'started'));
  const about = new Map(
    ((started.children ?? []) as { task_id: string }[]).map((c) => [c.task_id, c as Record<string, unknown>]),
  );
  return childTasks.map((task) => {
    const all = childRuns.filter((r) => r.taskId === task.id);
    const view: ChildView & { runs: RunRow[] } = {
      task,
      latest: all.at(-1) ?? null,
      about: about.get(task.id) ?? {},
      runs: all,
    };
    return view;
  });
}

type ChildWithRuns = Awaited<ReturnType<typeof childrenOf>>[number];

function countChildren(children: ChildWithRuns[]) {
  const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const c of children) counts[c.latest?.status ?? 'pending'] += 1;
  return { ...counts, total: children.length };
}

/**
 * Known spend and how many children spent an unknown amount. A child is priced when every run of
 * it that started has a cost; a child none of whose runs started has spent nothing yet.
 */
function spendOf(children: ChildWithRuns[]) {
  let known = 0;
  let priced = 0;
  let unknown = 0;
  for (const child of children) {
    const started = child.runs.filter((r) => r.startedAt !== null);
    if (started.length === 0) continue;
    if (started.every((r) => r.costUsd !== null)) {
      priced += 1;
      known += started.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
    } else unknown += 1;
  }
  // Null, never 0, when no child's cost is known.
  return { spend_usd: priced > 0 ? Math.round(known * 1e6) / 1e6 : null, cost_unknown_children: unknown };
}

/**
 * The swarm's status: its ending event when it has one; else its coordinating run's failure, or
 * its cancel through `tasks_cancel` (which stops only that run); else queued until it fanned out.
 */
function statusOf(log: EventRow[], latest: RunRow | null): SwarmStatus {
  const ending = endingOf(log);
  if (ending) return ending.kind as SwarmStatus;
  if (latest?.status === 'failed') return 'failed';
  if (latest?.status === 'canceled') return 'canceled';
  return log.some((e) => e.kind === 'started') ? 'running' : 'queued';
}

/** The swarm as the API shows it, computed from its task, timeline and children. */
export async function swarmRecord(db: Database, swarm: TaskRow, engine: Engine) {
  const log = await swarmEvents(db.orm, swarm);
  const children = await childrenOf(db.orm, swarm, log);
  const latest = await engine.latestRun(swarm.id);
  const input = inputOf(swarm);
  const started = payloadOf(log.find((e) => e.kind === 'started'));
  const last = log.at(-1)?.createdAt ?? swarm.updatedAt;
  return {
    object: 'swarm' as const,
    id: swarm.id,
    goal: input.goal,
    params: input.params,
    status: statusOf(log, latest),
    task_id: swarm.id,
    children: countChildren(children),
    child_task_ids: children.map((c) => c.task.id),
    ...spendOf(children),
    result: await goalResult(db.orm, swarm.projectId ?? '', input, children),
    skipped: (started.skipped ?? []) as Record<string, unknown>[],
    error: latest?.status === 'failed' && !endingOf(log) ? latest.error : null,
    created_at: swarm.createdAt.toISOString(),
    updated_at: new Date(Math.max(last.getTime(), swarm.updatedAt.getTime())).toISOString(),
  };
}

// Creating and canceling ------------------------------------------------------------------------

/** The swarm's task, its first (fan-out) run and its `created` event, in one transaction. */
export async function createSwarm(
  db: Database,
  engine: Engine,
  scope: { workspaceId: string; projectId: string },
  input: SwarmInput,
  actor: string | null,
) {
  return db.orm.transaction(async (tx) => {
    const created = await engine.createTaskIn(tx, {
      ...scope,
      kind: 'swarm',
      title: `Swarm: ${input.goal}`,
      input: input as unknown as Record<string, unknown>,
    });
    await appendObjectEvent(tx, {
      ...scope,
      objectType: 'swarm',
      objectId: created.task.id,
      kind: 'created',
      payload: { goal: input.goal, params: input.params },
      actor,
    });
    return created;
  });
}

/** Locks the swarm's task row: fan-out, settle and cancel of one swarm take turns. */
async function lockSwarm(tx: Tx, swarmId: string) {
  await tx.select({ id: tasks.id }).from(tasks).where(eq(tasks.id, swarmId)).for('update');
}

/**
 * Cancels the swarm: every active run of its own task and of every child ends `canceled`, and
 * its `canceled` event is appended, in one transaction. An ended swarm is 409 `conflict`, except
 * that canceling a canceled swarm again changes nothing.
 */
export async function cancelSwarm(
  db: Database,
  engine: Engine,
  swarm: TaskRow,
  actor: string | null,
  reason: string,
): Promise<void> {
  const ended = await db.orm.transaction(async (tx) => {
    await lockSwarm(tx, swarm.id);
    const ending = endingOf(await swarmEvents(tx, swarm));
    if (ending?.kind === 'canceled') return [];
    if (ending) throw new ApiError('conflict', `swarm ${swarm.id} already ${ending.kind}; nothing to cancel`);
    const children = await tx.select({ id: tasks.id }).from(tasks).where(eq(tasks.parentTaskId, swarm.id));
    const taskIds = [swarm.id, ...children.map((c) => c.id)];
    const active = await tx
      .select({ id: runs.id, taskId: runs.taskId })
      .from(runs)
      .where(and(inArray(runs.taskId, taskIds), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
      .orderBy(asc(runs.id))
      .for('update');
    const canceled: { id: string; taskId: string }[] = [];
    for (const run of active) {
      const row = await commitTerminal(
        tx,
        run.id,
        { status: 'canceled', reason: `${reason} (swarm ${swarm.id})` },
        { from: ['pending', 'running'] },
      );
      if (row) canceled.push(run);
    }
    await appendObjectEvent(tx, {
      workspaceId: swarm.workspaceId,
      projectId: swarm.projectId,
      objectType: 'swarm',
      objectId: swarm.id,
      kind: 'canceled',
      payload: {
        reason,
        canceled_runs: canceled.map((r) => r.id),
        canceled_child_tasks: [
          ...new Set(canceled.filter((r) => r.taskId !== swarm.id).map((r) => r.taskId)),
        ],
      },
      actor,
    });
    return canceled;
  });
  // A running run's worker stops its handler on this (or on its next heartbeat).
  for (const run of ended) await engine.notifyRuns(`cancel:${run.id}`);
}

// The task kind -------------------------------------------------------------------------------

/** The next settle check of the swarm: a pending run of its task, claimable after `delayMs`. */
async function scheduleSettle(tx: Tx, current: RunRow, attempt: number, delayMs: number) {
  const [next] = await tx
    .insert(runs)
    .values({
      id: newId('run'),
      taskId: current.taskId,
      workspaceId: current.workspaceId,
      projectId: current.projectId,
      kind: 'swarm',
      status: 'pending',
      taskRevision: current.taskRevision,
      input: { phase: 'settle', attempt },
      availableAt: sql`now() + ${millis(delayMs)}`,
      queuedAt: sql`now() + ${millis(delayMs)}`,
    })
    .returning();
  if (next) await recordQueued(tx, next);
}

/** Appends the swarm's ending event with what it achieved, in the caller's transaction. */
async function recordOutcome(tx: Tx, swarm: TaskRow, children: ChildWithRuns[]) {
  const counts = countChildren(children);
  // Failed when there was work and none of it succeeded; one success makes a (partial) result.
  const kind = counts.total > 0 && counts.completed === 0 ? 'failed' : 'completed';
  const result = await goalResult(tx, swarm.projectId ?? '', inputOf(swarm), children);
  await appendObjectEvent(tx, {
    workspaceId: swarm.workspaceId,
    projectId: swarm.projectId,
    objectType: 'swarm',
    objectId: swarm.id,
    kind,
    payload: { children: counts, ...spendOf(children), result },
    actor: null,
  });
  return { status: kind, children: counts, result };
}

export function swarmHandler(engine: Engine): TaskHandler {
  const pollMs = engine.limits.pollMs;

  /** Creates every child, remembers them in `started`, and schedules the first settle check. */
  const fanOut = (ctx: Parameters<TaskHandler>[0]) =>
    ctx.db.orm.transaction(async (tx) => {
      const swarm = ctx.task;
      await lockSwarm(tx, swarm.id);
      const log = await swarmEvents(tx, swarm);
      const ending = endingOf(log);
      if (ending) return { phase: 'ended', status: ending.kind };
      // A replacement of a fan-out run that committed: the children exist, a settle is scheduled.
      if (log.some((e) => e.kind === 'started')) return { phase: 'fanned_out', replayed: true };
      const scope = { workspaceId: swarm.workspaceId, projectId: swarm.projectId ?? '' };
      const plan = await planFanOut(tx, scope, swarm.id, inputOf(swarm));
      const created: Record<string, unknown>[] = [];
      for (const child of plan.children) {
        const { task } = await engine.createTaskIn(tx, { ...scope, ...child.task });
        await tx.update(tasks).set({ parentTaskId: swarm.id }).where(eq(tasks.id, task.id));
        created.push({ task_id: task.id, kind: task.kind, ...child.about });
      }
      await appendObjectEvent(tx, {
        ...scope,
        objectType: 'swarm',
        objectId: swarm.id,
        kind: 'started',
        payload: { children: created, skipped: plan.skipped },
        actor: null,
      });
      if (created.length === 0) {
        // Nothing to wait for: the swarm is done now, with an empty result.
        const outcome = await recordOutcome(tx, swarm, []);
        return { phase: 'completed', ...outcome, skipped: plan.skipped };
      }
      await scheduleSettle(tx, ctx.run, 0, settleDelayMs(pollMs, 0));
      return { phase: 'fanned_out', child_task_ids: created.map((c) => c.task_id), skipped: plan.skipped };
    });

  /** Adopts follow-ups, then ends the swarm when every child has ended, else looks again later. */
  const settle = async (ctx: Parameters<TaskHandler>[0], attempt: number) => {
    const swarm = ctx.task;
    const before = await childrenOf(ctx.db.orm, swarm, await swarmEvents(ctx.db.orm, swarm));
    const followUps = before.flatMap(followUpTaskIds);
    if (followUps.length > 0) {
      await ctx.db.orm
        .update(tasks)
        .set({ parentTaskId: swarm.id })
        .where(
          and(
            inArray(tasks.id, followUps),
            sql`${tasks.parentTaskId} IS NULL`,
            eq(tasks.workspaceId, swarm.workspaceId),
            eq(tasks.projectId, swarm.projectId ?? ''),
          ),
        );
    }
    return ctx.db.orm.transaction(async (tx) => {
      await lockSwarm(tx, swarm.id);
      const log = await swarmEvents(tx, swarm);
      const ending = endingOf(log);
      if (ending) return { phase: 'ended', status: ending.kind };
      const children = await childrenOf(tx, swarm, log);
      const waiting = children.filter((c) => !c.latest || ACTIVE_RUN_STATUSES.includes(c.latest.status));
      if (waiting.length > 0) {
        await scheduleSettle(tx, ctx.run, attempt + 1, settleDelayMs(pollMs, attempt + 1));
        return {
          phase: 'waiting',
          children: countChildren(children),
          waiting_for: waiting.map((c) => c.task.id),
        };
      }
      return { phase: 'completed', ...(await recordOutcome(tx, swarm, children)) };
    });
  };

  return async (ctx) => {
    ctx.setBackend({ harness: 'swarm', provider: null, model: null, preset: inputOf(ctx.task).goal });
    const input = ctx.run.input as { phase?: string; attempt?: number };
    if (input.phase !== 'settle') {
      await ctx.progress({
        phase: 'fan_out',
        statusText: `creating the children of ${inputOf(ctx.task).goal}`,
        pct: 10,
      });
      const result = await fanOut(ctx);
      await ctx.message('assistant', `Swarm fan-out: ${JSON.stringify(result)}`);
      return result;
    }
    await ctx.progress({ phase: 'settle', statusText: 'reading the children', pct: 50 });
    return settle(ctx, input.attempt ?? 0);
  };
}
