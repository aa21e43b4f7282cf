/**
 * Project brakes: checked after a run is claimed and before its handler starts, so a braked
 * project never spends anything and the run says by name why it did not run.
 */
import { and, eq, gt, isNotNull, ne, sql } from 'drizzle-orm';
import { RunFailure } from '../core/failures';
import { PROJECT_SETTINGS } from '../core/settings';
import { messageOf } from '../storage/bound-values';
import { type Database, isConnectionLost } from '../storage/database';
import { projects, runs } from '../storage/schema';
import type { RunRow } from './types';

const BRAKE_KEYS = [
  'svc.brakes.paused',
  'svc.brakes.approval_window',
  'svc.brakes.spend_cap_usd',
  'svc.brakes.run_budget',
] as const;

const DAY_MS = 24 * 60 * 60_000;

interface Brakes {
  paused: boolean;
  approvalWindow: { start: string; end: string } | null;
  spendCapUsd: number | null;
  runBudget: number | null;
}

/**
 * Reads the brake settings strictly: a stored brake value that does not parse is an unreadable
 * run mode, never silently the default (a typo must not lift a spend cap).
 */
export function readBrakes(stored: unknown): Brakes {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) {
    throw new RunFailure('project_run_mode_unreadable', 'project settings are not a JSON object');
  }
  const values: Record<string, unknown> = {};
  for (const key of BRAKE_KEYS) {
    const def = PROJECT_SETTINGS[key];
    if (!(key in stored)) {
      values[key] = def.default;
      continue;
    }
    const parsed = def.schema.safeParse((stored as Record<string, unknown>)[key]);
    if (!parsed.success) {
      throw new RunFailure(
        'project_run_mode_unreadable',
        `project setting ${key} is unreadable: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        {
          setting: key,
        },
      );
    }
    values[key] = parsed.data;
  }
  return {
    paused: values['svc.brakes.paused'] as boolean,
    approvalWindow: values['svc.brakes.approval_window'] as Brakes['approvalWindow'],
    spendCapUsd: values['svc.brakes.spend_cap_usd'] as number | null,
    runBudget: values['svc.brakes.run_budget'] as number | null,
  };
}

/** Throws the brake's RunFailure when one is on; returns quietly otherwise. */
export async function checkBrakes(db: Database, run: RunRow, now = new Date()): Promise<void> {
  if (!run.projectId) return;
  let stored: unknown;
  try {
    const [project] = await db.orm
      .select({ settings: projects.settings })
      .from(projects)
      .where(eq(projects.id, run.projectId))
      .limit(1);
    if (!project) throw new Error(`project ${run.projectId} does not exist`);
    stored = project.settings;
  } catch (error) {
    // The database going away is not an unreadable setting: the worker replaces the run.
    if (isConnectionLost(error)) throw error;
    throw new RunFailure(
      'project_run_mode_unreadable',
      `project settings could not be read: ${messageOf(error)}`,
    );
  }
  const brakes = readBrakes(stored);

  if (brakes.paused) throw new RunFailure('project_paused', 'the project is paused (svc.brakes.paused)');
  if (brakes.approvalWindow) {
    const start = Date.parse(brakes.approvalWindow.start);
    const end = Date.parse(brakes.approvalWindow.end);
    const t = now.getTime();
    if (t < start || t > end) {
      throw new RunFailure(
        'project_paused',
        `the project runs only inside its approval window ${brakes.approvalWindow.start} – ${brakes.approvalWindow.end}`,
        { approval_window: brakes.approvalWindow },
      );
    }
  }
  if (brakes.spendCapUsd !== null) {
    // Only known costs count: an unknown cost is null, and null is not zero.
    const [row] = await db.orm
      .select({ spent: sql<string | number | null>`coalesce(sum(${runs.costUsd}), 0)` })
      .from(runs)
      .where(
        and(
          eq(runs.projectId, run.projectId),
          isNotNull(runs.costUsd),
          gt(runs.createdAt, sql`now() - interval '30 days'`),
        ),
      );
    const spent = Number(row?.spent ?? 0);
    if (spent >= brakes.spendCapUsd) {
      throw new RunFailure(
        'spend_cap_reached',
        `known spend of the last 30 days is $${spent.toFixed(2)}, at or over the cap of $${brakes.spendCapUsd}`,
        { spent_usd: spent, spend_cap_usd: brakes.spendCapUsd },
      );
    }
  }
  if (brakes.runBudget !== null) {
    const [row] = await db.orm
      .select({ started: sql<string | number>`count(*)` })
      .from(runs)
      .where(
        and(
          eq(runs.projectId, run.projectId),
          ne(runs.id, run.id),
          gt(runs.startedAt, sql`now() - ${DAY_MS}::double precision * interval '1 millisecond'`),
        ),
      );
    const started = Number(row?.started ?? 0);
    if (started >= brakes.runBudget) {
      throw new RunFailure(
        'budget_exceeded',
        `${started} runs started in the last 24 hours; the run budget is ${brakes.runBudget}`,
        { runs_started_24h: started, run_budget: brakes.runBudget },
      );
    }
  }
}
