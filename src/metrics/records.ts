/**
 * svc's own metric records: the daily figures of `computeMetrics`, stored one row per metric and
 * day under owner `svc`. They are derived data, rewritten whenever they are read (the history
 * they come from changes: a finding reported on Monday and fixed on Friday moves Monday's fix
 * rate), and a row is only written when its value changed.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { metricRecords } from '../storage/schema';
import { dailyKey, METRIC_NAMES, SVC_OWNER } from './catalogue';
import { computeMetrics, type DaySpan, type Metrics } from './compute';

export interface ProjectRef {
  workspaceId: string;
  projectId: string;
}

/** Writes svc's figures for every day of `span` with activity; returns how many rows changed. */
export async function refreshSvcRecords(db: Database, project: ProjectRef, span: DaySpan): Promise<number> {
  return writeSvcRecords(db, project, await computeMetrics(db, project.projectId, span, 'day'));
}

/** Stores daily figures already computed (a dashboard's read computes them anyway). */
export async function writeSvcRecords(
  db: Database,
  project: ProjectRef,
  byDay: Map<string, Metrics>,
): Promise<number> {
  const now = new Date();
  const rows = [...byDay].flatMap(([day, metrics]) =>
    METRIC_NAMES.map((metric) => ({
      id: newId('metricRecord'),
      workspaceId: project.workspaceId,
      projectId: project.projectId,
      owner: SVC_OWNER,
      key: dailyKey(metric, day),
      value: metrics[metric] as unknown,
      writtenBy: null,
      createdAt: now,
      updatedAt: now,
    })),
  );
  if (rows.length === 0) return 0;
  const written = await db.orm
    .insert(metricRecords)
    .values(rows)
    .onConflictDoUpdate({
      target: [metricRecords.projectId, metricRecords.owner, metricRecords.key],
      set: { value: sql`excluded.value`, updatedAt: now },
      setWhere: sql`${metricRecords.value} IS DISTINCT FROM excluded.value`,
    })
    .returning({ id: metricRecords.id });
  return written.length;
}
