/**
 * The metrics svc derives from a project's review history, what each one measures, its unit and
 * the groupings a dashboard panel may split it by. One place, read by the computation, the
 * panel validation and the API's descriptions.
 */
export const METRIC_NAMES = [
  'reviews',
  'findings',
  'fix_rate',
  'dismissal_rate',
  'review_latency',
  'time_to_fix',
  'spend',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** A caller's own daily series: metric records `<key>/<YYYY-MM-DD>` with a number value. */
export const CUSTOM_METRIC = 'custom';
export type PanelMetric = MetricName | typeof CUSTOM_METRIC;

export const GROUPINGS = ['none', 'status', 'severity', 'reviewer', 'rule'] as const;
export type Grouping = (typeof GROUPINGS)[number];

export type Unit = 'count' | 'ratio' | 'ms' | 'usd' | 'value';

export interface MetricDefinition {
  unit: Unit;
  groupings: readonly Grouping[];
  /** What it measures, per day (UTC); said in the API description and the console. */
  measures: string;
}

export const METRICS: Record<PanelMetric, MetricDefinition> = {
  reviews: {
    unit: 'count',
    groupings: ['none', 'status'],
    measures: 'review runs that ended that day, completed or failed',
  },
  findings: {
    unit: 'count',
    groupings: ['none', 'severity', 'reviewer', 'rule'],
    measures: 'findings first reported that day',
  },
  fix_rate: {
    unit: 'ratio',
    groupings: ['none'],
    measures: 'of the findings first reported that day, the share fixed since',
  },
  dismissal_rate: {
    unit: 'ratio',
    groupings: ['none', 'reviewer', 'rule'],
    measures: 'of the findings first reported that day, the share dismissed since',
  },
  review_latency: {
    unit: 'ms',
    groupings: ['none'],
    measures: 'median time from a review run being queued to its completion, for runs completed that day',
  },
  time_to_fix: {
    unit: 'ms',
    groupings: ['none'],
    measures: 'median time from a finding being first reported to its fix, for findings fixed that day',
  },
  spend: {
    unit: 'usd',
    groupings: ['none'],
    measures: 'known model spend of the runs that ended that day (runs without a price are counted apart)',
  },
  custom: {
    unit: 'value',
    groupings: ['none'],
    measures: "a caller's daily values: metric records `<key>/<YYYY-MM-DD>` of an owner, numbers",
  },
};

/** svc's own metric records are written under this owner; callers may not use it. */
export const SVC_OWNER = 'svc';

/** `findings/2026-11-23`: the key of svc's figure of one metric on one day. */
export function dailyKey(metric: string, day: string): string {
  return `${metric}/${day}`;
}
