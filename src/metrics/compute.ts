/**
 * Computes a project's metrics from its review history (runs and the findings ledger) for a
 * span of UTC days, either per day or over the whole span. Each metric is one grouped query,
 * so a 90-day board costs the same handful of statements as a single day.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../storage/database';

export interface Metrics {
  reviews: { completed: number; failed: number };
  findings: {
    total: number;
    by_severity: { P0: number; P1: number; P2: number };
    by_reviewer: Record<string, number>;
    by_rule: Record<string, number>;
  };
  fix_rate: { reported: number; fixed: number; rate: number | null };
  dismissal_rate: {
    reported: number;
    dismissed: number;
    rate: number | null;
    by_reviewer: Record<string, { reported: number; dismissed: number; rate: number | null }>;
    by_rule: Record<string, { reported: number; dismissed: number; rate: number | null }>;
  };
  review_latency: { runs: number; median_ms: number | null };
  time_to_fix: { fixed: number; median_ms: number | null };
  spend: { usd: number | null; priced_runs: number; unpriced_runs: number };
}

/** A span of whole UTC days, `from` and `to` inclusive (`YYYY-MM-DD`). */
export interface DaySpan {
  from: string;
  to: string;
}

export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The `days` days ending with `to` (today by default), oldest first. */
export function lastDays(days: number, to = dayOf(new Date())): DaySpan {
  const start = new Date(`${to}T00:00:00Z`);
  start.setUTCDate(start.getUTCDate() - (days - 1));
  return { from: dayOf(start), to };
}

export function daysOf(span: DaySpan): string[] {
  const out: string[] = [];
  const at = new Date(`${span.from}T00:00:00Z`);
  for (let day = dayOf(at); day <= span.to; day = dayOf(at)) {
    out.push(day);
    at.setUTCDate(at.getUTCDate() + 1);
  }
  return out;
}

function bounds(span: DaySpan): { start: Date; end: Date } {
  const end = new Date(`${span.to}T00:00:00Z`);
  end.setUTCDate(end.getUTCDate() + 1);
  return { start: new Date(`${span.from}T00:00:00Z`), end };
}

export type Bucketing = 'day' | 'span';

/** The bucket a timestamp column falls in: its UTC day, or one bucket for the whole span. */
function bucketOf(column: SQL, bucketing: Bucketing): SQL {
  return bucketing === 'day' ? sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : sql`'span'`;
}

const ratio = (count: number, of: number): number | null => (of > 0 ? count / of : null);

function empty(): Metrics {
  return {
    reviews: { completed: 0, failed: 0 },
    findings: { total: 0, by_severity: { P0: 0, P1: 0, P2: 0 }, by_reviewer: {}, by_rule: {} },
    fix_rate: { reported: 0, fixed: 0, rate: null },
    dismissal_rate: { reported: 0, dismissed: 0, rate: null, by_reviewer: {}, by_rule: {} },
    review_latency: { runs: 0, median_ms: null },
    time_to_fix: { fixed: 0, median_ms: null },
    spend: { usd: null, priced_runs: 0, unpriced_runs: 0 },
  };
}

type DismissalCounts = Metrics['dismissal_rate']['by_rule'];

function countDismissals(table: DismissalCounts, name: string, status: string, n: number) {
  const entry = table[name] ?? { reported: 0, dismissed: 0, rate: null };
  entry.reported += n;
  if (status === 'dismissed') entry.dismissed += n;
  table[name] = entry;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The project's metrics over `span`, keyed by bucket (a day, or `span`). Buckets without any
 * activity are absent: a quiet day has no figures rather than a row of zeros.
 */
export async function computeMetrics(
  db: Database,
  projectId: string,
  span: DaySpan,
  bucketing: Bucketing,
): Promise<Map<string, Metrics>> {
  const { start, end } = bounds(span);
  const out = new Map<string, Metrics>();
  const at = (bucket: string): Metrics => {
    let m = out.get(bucket);
    if (!m) {
      m = empty();
      out.set(bucket, m);
    }
    return m;
  };
  const within = (column: SQL) => sql`${column} >= ${start} AND ${column} < ${end}`;

  const reviewRuns = await db.rows<{ bucket: string; status: string; n: unknown; median: unknown }>(sql`
    SELECT ${bucketOf(sql`finished_at`, bucketing)} AS bucket, status, count(*) AS n,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - queued_at) * 1000) AS median
    FROM runs
    WHERE project_id = ${projectId} AND kind = 'review' AND status IN ('completed', 'failed')
      AND ${within(sql`finished_at`)}
    GROUP BY 1, 2`);
  for (const row of reviewRuns) {
    const m = at(row.bucket);
    if (row.status === 'completed') {
      m.reviews.completed = num(row.n);
      m.review_latency = { runs: num(row.n), median_ms: numOrNull(row.median) };
    } else m.reviews.failed = num(row.n);
  }

  // The cohort of findings first reported in the bucket, by what became of them since.
  const reported = await db.rows<{
    bucket: string;
    severity: string;
    rule: string;
    status: string;
    n: unknown;
  }>(sql`
    SELECT ${bucketOf(sql`created_at`, bucketing)} AS bucket, severity, rule, status, count(*) AS n
    FROM findings
    WHERE project_id = ${projectId} AND ${within(sql`created_at`)}
    GROUP BY 1, 2, 3, 4`);
  for (const row of reported) {
    const m = at(row.bucket);
    const n = num(row.n);
    m.findings.total += n;
    const severity = row.severity as keyof Metrics['findings']['by_severity'];
    if (severity in m.findings.by_severity) m.findings.by_severity[severity] += n;
    m.findings.by_rule[row.rule] = (m.findings.by_rule[row.rule] ?? 0) + n;
    m.fix_rate.reported += n;
    m.dismissal_rate.reported += n;
    if (row.status === 'fixed') m.fix_rate.fixed += n;
    if (row.status === 'dismissed') m.dismissal_rate.dismissed += n;
    countDismissals(m.dismissal_rate.by_rule, row.rule, row.status, n);
  }

  // A finding two reviewers agreed on counts for each of them.
  const perReviewer = await db.rows<{ bucket: string; reviewer: string; status: string; n: unknown }>(sql`
    SELECT ${bucketOf(sql`f.created_at`, bucketing)} AS bucket, r.reviewer, f.status, count(*) AS n
    FROM findings f CROSS JOIN LATERAL jsonb_array_elements_text(f.reviewers) AS r(reviewer)
    WHERE f.project_id = ${projectId} AND ${within(sql`f.created_at`)}
    GROUP BY 1, 2, 3`);
  for (const row of perReviewer) {
    const m = at(row.bucket);
    const n = num(row.n);
    m.findings.by_reviewer[row.reviewer] = (m.findings.by_reviewer[row.reviewer] ?? 0) + n;
    countDismissals(m.dismissal_rate.by_reviewer, row.reviewer, row.status, n);
  }

  const fixes = await db.rows<{ bucket: string; n: unknown; median: unknown }>(sql`
    SELECT ${bucketOf(sql`fixed_at`, bucketing)} AS bucket, count(*) AS n,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM fixed_at - created_at) * 1000) AS median
    FROM findings
    WHERE project_id = ${projectId} AND status = 'fixed' AND ${within(sql`fixed_at`)}
    GROUP BY 1`);
  for (const row of fixes)
    at(row.bucket).time_to_fix = { fixed: num(row.n), median_ms: numOrNull(row.median) };

  const spend = await db.rows<{ bucket: string; priced: unknown; unpriced: unknown; usd: unknown }>(sql`
    SELECT ${bucketOf(sql`finished_at`, bucketing)} AS bucket,
      count(cost_usd) AS priced, count(*) - count(cost_usd) AS unpriced, sum(cost_usd) AS usd
    FROM runs
    WHERE project_id = ${projectId} AND status IN ('completed', 'failed', 'canceled')
      AND ${within(sql`finished_at`)}
    GROUP BY 1`);
  for (const row of spend) {
    at(row.bucket).spend = {
      usd: numOrNull(row.usd),
      priced_runs: num(row.priced),
      unpriced_runs: num(row.unpriced),
    };
  }

  for (const m of out.values()) {
    m.fix_rate.rate = ratio(m.fix_rate.fixed, m.fix_rate.reported);
    m.dismissal_rate.rate = ratio(m.dismissal_rate.dismissed, m.dismissal_rate.reported);
    for (const entry of [
      ...Object.values(m.dismissal_rate.by_reviewer),
      ...Object.values(m.dismissal_rate.by_rule),
    ]) {
      entry.rate = ratio(entry.dismissed, entry.reported);
    }
  }
  return out;
}
