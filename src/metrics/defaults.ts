/**
 * The board every project starts with: what a team lead asks on Monday morning. How much was
 * reviewed, what was found and how bad, whether findings get fixed or waved away (and by whose
 * reviewer), how long reviews and fixes take, and what it cost.
 */
import type { Panel } from './series';

export const DEFAULT_DASHBOARD = {
  name: 'Review health',
  description: 'The last 30 days of reviews, findings, fixes and spend, computed from the review history.',
};

export function defaultPanels(): Panel[] {
  const panel = (p: Omit<Panel, 'range_days'>): Panel => ({ ...p, range_days: 30 });
  return [
    panel({ title: 'Reviews', metric: 'reviews', group_by: 'status', chart: 'bar' }),
    panel({ title: 'Findings by severity', metric: 'findings', group_by: 'severity', chart: 'bar' }),
    panel({ title: 'Fix rate', metric: 'fix_rate', group_by: 'none', chart: 'line' }),
    panel({
      title: 'Dismissal rate by reviewer',
      metric: 'dismissal_rate',
      group_by: 'reviewer',
      chart: 'line',
    }),
    panel({ title: 'Review latency (median)', metric: 'review_latency', group_by: 'none', chart: 'line' }),
    panel({ title: 'Time to fix (median)', metric: 'time_to_fix', group_by: 'none', chart: 'line' }),
    panel({ title: 'Spend', metric: 'spend', group_by: 'none', chart: 'number' }),
  ];
}
