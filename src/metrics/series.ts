/**
 * A dashboard panel's series: the daily points of one metric, split by its grouping, with one
 * summary figure over the panel's range. Quiet days are zero for counts and null (no value) for
 * rates, durations and caller values, so a chart shows a gap rather than an invented zero.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { metricRecords } from '../storage/schema';
import { dailyKey, type Grouping, METRICS, type PanelMetric, type Unit } from './catalogue';
import { computeMetrics, type DaySpan, daysOf, lastDays, type Metrics } from './compute';

export interface Panel {
  title: string;
  metric: PanelMetric;
  group_by: Grouping;
  range_days: number;
  chart: 'line' | 'bar' | 'number' | 'table';
  /** custom panels: whose records, and the key before `/<day>`. */
  owner?: string;
  key?: string;
}

export interface Point {
  day: string;
  value: number | null;
}

export interface Series {
  name: string;
  points: Point[];
}

export interface ComputedPanel extends Panel {
  unit: Unit;
  /** Over the whole range: a total for counts and spend, the range's own rate or median otherwise. */
  summary: number | null;
  series: Series[];
}

/** Groups beyond this many are summed into `other`, so a chart stays readable. */
export const MAX_GROUPS = 8;

type Extract = (m: Metrics) => number | null;

/** The groups of a grouped metric and how to read each one's value from a day's figures. */
function groupsOf(metric: PanelMetric, grouping: Grouping, span: Metrics | undefined): [string, Extract][] {
  if (metric === 'reviews' && grouping === 'status')
    return [
      ['completed', (m) => m.reviews.completed],
      ['failed', (m) => m.reviews.failed],
    ];
  if (metric === 'findings' && grouping === 'severity')
    return (['P0', 'P1', 'P2'] as const).map((s) => [s, (m) => m.findings.by_severity[s]]);
  const ranked = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([name]) => name);
  if (metric === 'findings' && (grouping === 'reviewer' || grouping === 'rule')) {
    const table = (m: Metrics) => (grouping === 'reviewer' ? m.findings.by_reviewer : m.findings.by_rule);
    const names = ranked(span ? table(span) : {});
    const shown = names.slice(0, MAX_GROUPS);
    const groups: [string, Extract][] = shown.map((name) => [name, (m) => table(m)[name] ?? 0]);
    if (names.length > MAX_GROUPS) {
      const rest = new Set(names.slice(MAX_GROUPS));
      groups.push([
        'other',
        (m) => Object.entries(table(m)).reduce((sum, [name, n]) => sum + (rest.has(name) ? n : 0), 0),
      ]);
    }
    return groups;
  }
  if (metric === 'dismissal_rate' && (grouping === 'reviewer' || grouping === 'rule')) {
    const table = (m: Metrics) =>
      grouping === 'reviewer' ? m.dismissal_rate.by_reviewer : m.dismissal_rate.by_rule;
    const reportedCounts = Object.fromEntries(
      Object.entries(span ? table(span) : {}).map(([name, e]) => [name, e.reported]),
    );
    // Rates of the rarest groups are noise; only the most reported ones get a line.
    return ranked(reportedCounts)
      .slice(0, MAX_GROUPS)
      .map((name) => [name, (m) => table(m)[name]?.rate ?? null]);
  }
  return [[metric, (m) => ungroupedValue(metric, m)]];
}

/** The ungrouped value of a metric in one bucket. */
function ungroupedValue(metric: PanelMetric, m: Metrics): number | null {
  switch (metric) {
    case 'reviews':
      return m.reviews.completed + m.reviews.failed;
    case 'findings':
      return m.findings.total;
    case 'fix_rate':
      return m.fix_rate.rate;
    case 'dismissal_rate':
      return m.dismissal_rate.rate;
    case 'review_latency':
      return m.review_latency.median_ms;
    case 'time_to_fix':
      return m.time_to_fix.median_ms;
    case 'spend':
      return m.spend.usd;
    case 'custom':
      return null;
  }
}

/** The value a day without any activity has: nothing happened is zero only for counts and spend. */
function quietValue(metric: PanelMetric): number | null {
  return metric === 'reviews' || metric === 'findings' || metric === 'spend' ? 0 : null;
}

function historyPanel(panel: Panel, byDay: Map<string, Metrics>, span: Metrics | undefined, days: string[]) {
  const quiet = quietValue(panel.metric);
  const series = groupsOf(panel.metric, panel.group_by, span).map(([name, extract]) => ({
    name,
    points: days.map((day) => {
      const m = byDay.get(day);
      return { day, value: m ? extract(m) : quiet };
    }),
  }));
  const summary = span ? ungroupedValue(panel.metric, span) : quiet;
  return { series, summary };
}

async function customPanel(db: Database, projectId: string, panel: Panel, days: string[]) {
  const owner = panel.owner ?? '';
  const keyOf = (day: string) => dailyKey(panel.key ?? '', day);
  const rows = await db.orm
    .select({ key: metricRecords.key, value: metricRecords.value })
    .from(metricRecords)
    .where(
      and(
        eq(metricRecords.projectId, projectId),
        eq(metricRecords.owner, owner),
        inArray(metricRecords.key, days.map(keyOf)),
      ),
    );
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  const points = days.map((day) => ({ day, value: numberIn(byKey.get(keyOf(day))) }));
  const latest = [...points].reverse().find((p) => p.value !== null);
  return { series: [{ name: panel.key ?? owner, points }], summary: latest?.value ?? null };
}

/** A caller's value as a number: a number, or an object's numeric `value`; anything else none. */
function numberIn(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value && typeof value === 'object' && 'value' in value)
    return numberIn((value as { value: unknown }).value);
  return null;
}

/**
 * Computes every panel of a board. The history is read once per day for the longest range, and
 * once per distinct range for the summaries (a median or a rate does not add up across days).
 */
export async function computePanels(
  db: Database,
  projectId: string,
  panels: Panel[],
  today?: string,
): Promise<{ panels: ComputedPanel[]; byDay: Map<string, Metrics>; span: DaySpan }> {
  const longest = Math.max(1, ...panels.map((p) => p.range_days));
  const span = lastDays(longest, today);
  const byDay = await computeMetrics(db, projectId, span, 'day');
  const summaries = new Map<number, Metrics | undefined>();
  for (const range of new Set(panels.filter((p) => p.metric !== 'custom').map((p) => p.range_days))) {
    const totals = await computeMetrics(db, projectId, lastDays(range, span.to), 'span');
    summaries.set(range, totals.get('span'));
  }
  const computed: ComputedPanel[] = [];
  for (const panel of panels) {
    const days = daysOf(lastDays(panel.range_days, span.to));
    const { series, summary } =
      panel.metric === 'custom'
        ? await customPanel(db, projectId, panel, days)
        : historyPanel(panel, byDay, summaries.get(panel.range_days), days);
    computed.push({ ...panel, unit: METRICS[panel.metric].unit, summary, series });
  }
  return { panels: computed, byDay, span };
}
