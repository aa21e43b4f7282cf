/**
 * The metrics a board plots, computed from a history written across several days: findings are
 * counted on the day they were first reported, rates follow that day's cohort to what became of
 * it later, medians are medians, quiet days have no figures, and unknown spend stays unknown.
 * Both engines (the SQL uses percentile_cont and jsonb; PGlite must agree with PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeMetrics, daysOf, lastDays } from '../../src/metrics/compute';
import { refreshSvcRecords } from '../../src/metrics/records';
import { computePanels } from '../../src/metrics/series';
import { newId } from '../../src/storage/ids';
import { findings, metricRecords, runs, tasks } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

const PROJECT = 'prj_metrics';
const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;

describe.each(DATABASE_KINDS)('computed metrics on %s', (kind) => {
  let t: TestDatabase;

  async function run(input: {
    finishedAt: string;
    status: 'completed' | 'failed';
    queuedMs: number;
    cost: number | null;
    kind?: string;
  }) {
    const taskId = newId('task');
    await t.db.orm
      .insert(tasks)
      .values({ id: taskId, workspaceId: 'ws_m', projectId: PROJECT, kind: 'review' });
    const finished = at(input.finishedAt);
    await t.db.orm.insert(runs).values({
      id: newId('run'),
      taskId,
      workspaceId: 'ws_m',
      projectId: PROJECT,
      kind: input.kind ?? 'review',
      status: input.status,
      queuedAt: new Date(finished.getTime() - input.queuedMs),
      finishedAt: finished,
      costUsd: input.cost,
    });
  }

  async function finding(input: {
    createdAt: string;
    severity: 'P0' | 'P1' | 'P2';
    rule: string;
    reviewers: string[];
    status?: 'open' | 'fixed' | 'dismissed';
    fixedAt?: string;
  }) {
    const id = newId('finding');
    await t.db.orm.insert(findings).values({
      id,
      workspaceId: 'ws_m',
      projectId: PROJECT,
      ledgerKey: 'pr:pr_1',
      fingerprint: id,
      status: input.status ?? 'open',
      severity: input.severity,
      path: 'a.js',
      line: 1,
      endLine: 1,
      title: 't',
      body: 'b',
      rule: input.rule,
      category: 'security',
      reviewers: input.reviewers,
      anchorText: 'x',
      taskId: 'tsk_x',
      firstRunId: 'run_x',
      lastRunId: 'run_x',
      fixedAt: input.fixedAt ? at(input.fixedAt) : null,
      createdAt: at(input.createdAt),
    });
  }

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    // Monday: two reviews (latency 1 min and 3 min), one failed; three findings reported.
    await run({ finishedAt: '2026-11-02T09:00:00Z', status: 'completed', queuedMs: 60_000, cost: null });
    await run({ finishedAt: '2026-11-02T10:00:00Z', status: 'completed', queuedMs: 180_000, cost: 0.25 });
    await run({ finishedAt: '2026-11-02T11:00:00Z', status: 'failed', queuedMs: 1_000, cost: null });
    await finding({
      createdAt: '2026-11-02T09:00:00Z',
      severity: 'P0',
      rule: 'security/eval',
      reviewers: ['security'],
      status: 'fixed',
      fixedAt: '2026-11-04T09:00:00Z',
    });
    await finding({
      createdAt: '2026-11-02T09:00:00Z',
      severity: 'P1',
      rule: 'security/eval',
      reviewers: ['security', 'llm'],
      status: 'dismissed',
    });
    await finding({
      createdAt: '2026-11-02T10:00:00Z',
      severity: 'P2',
      rule: 'style/naming',
      reviewers: ['llm'],
    });
    // Tuesday: nothing. Wednesday: one finding, fixed the same day after 4 hours.
    await finding({
      createdAt: '2026-11-04T05:00:00Z',
      severity: 'P2',
      rule: 'style/naming',
      reviewers: ['llm'],
      status: 'fixed',
      fixedAt: '2026-11-04T09:00:00Z',
    });
    // Another project's history stays out.
    await t.db.orm.insert(findings).values({
      id: newId('finding'),
      workspaceId: 'ws_m',
      projectId: 'prj_other',
      ledgerKey: 'pr:x',
      fingerprint: 'f',
      status: 'open',
      severity: 'P0',
      path: 'a',
      line: 1,
      endLine: 1,
      title: 't',
      body: 'b',
      rule: 'r',
      category: 'c',
      reviewers: ['security'],
      anchorText: 'x',
      taskId: 't',
      firstRunId: 'r',
      lastRunId: 'r',
      createdAt: at('2026-11-02T09:00:00Z'),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const span = { from: '2026-11-02', to: '2026-11-04' };

  it('counts each day on its own and leaves a quiet day out', async () => {
    const byDay = await computeMetrics(t.db, PROJECT, span, 'day');
    expect([...byDay.keys()].sort()).toEqual(['2026-11-02', '2026-11-04']);
    const monday = byDay.get('2026-11-02');
    expect(monday?.reviews).toEqual({ completed: 2, failed: 1 });
    expect(monday?.findings).toEqual({
      total: 3,
      by_severity: { P0: 1, P1: 1, P2: 1 },
      by_reviewer: { security: 2, llm: 2 },
      by_rule: { 'security/eval': 2, 'style/naming': 1 },
    });
    expect(monday?.review_latency).toEqual({ runs: 2, median_ms: 120_000 });
  });

  it("follows a day's cohort: Monday's fix and dismissal rates count what happened to it later", async () => {
    const monday = (await computeMetrics(t.db, PROJECT, span, 'day')).get('2026-11-02');
    expect(monday?.fix_rate).toEqual({ reported: 3, fixed: 1, rate: 1 / 3 });
    expect(monday?.dismissal_rate).toMatchObject({ reported: 3, dismissed: 1, rate: 1 / 3 });
    expect(monday?.dismissal_rate.by_reviewer).toEqual({
      security: { reported: 2, dismissed: 1, rate: 0.5 },
      llm: { reported: 2, dismissed: 1, rate: 0.5 },
    });
    expect(monday?.dismissal_rate.by_rule['style/naming']).toEqual({ reported: 1, dismissed: 0, rate: 0 });
  });

  it('measures time to fix on the day of the fix, as a median', async () => {
    const byDay = await computeMetrics(t.db, PROJECT, span, 'day');
    // Fixed on Wednesday: after 48 hours and after 4 hours.
    expect(byDay.get('2026-11-04')?.time_to_fix).toEqual({ fixed: 2, median_ms: 26 * HOUR });
    expect(byDay.get('2026-11-02')?.time_to_fix).toEqual({ fixed: 0, median_ms: null });
  });

  it('keeps unknown spend unknown: priced runs summed, unpriced counted apart', async () => {
    const monday = (await computeMetrics(t.db, PROJECT, span, 'day')).get('2026-11-02');
    expect(monday?.spend).toEqual({ usd: 0.25, priced_runs: 1, unpriced_runs: 2 });
  });

  it('computes rates and medians over a whole span from the span, not by adding days', async () => {
    const whole = (await computeMetrics(t.db, PROJECT, span, 'span')).get('span');
    expect(whole?.findings.total).toBe(4);
    expect(whole?.fix_rate).toEqual({ reported: 4, fixed: 2, rate: 0.5 });
    expect(whole?.time_to_fix.median_ms).toBe(26 * HOUR);
  });

  it('plots panels day by day with gaps where there was nothing to measure', async () => {
    const { panels } = await computePanels(
      t.db,
      PROJECT,
      [
        { title: 'f', metric: 'findings', group_by: 'severity', range_days: 3, chart: 'bar' },
        { title: 'r', metric: 'fix_rate', group_by: 'none', range_days: 3, chart: 'line' },
        { title: 'd', metric: 'dismissal_rate', group_by: 'reviewer', range_days: 3, chart: 'line' },
      ],
      '2026-11-04',
    );
    const [bySeverity, fixRate, byReviewer] = panels;
    expect(bySeverity?.series.find((s) => s.name === 'P2')?.points).toEqual([
      { day: '2026-11-02', value: 1 },
      { day: '2026-11-03', value: 0 },
      { day: '2026-11-04', value: 1 },
    ]);
    expect(fixRate?.series[0]?.points.map((p) => p.value)).toEqual([1 / 3, null, 1]);
    expect(fixRate?.summary).toBe(0.5);
    // Ranked by how many findings each reviewer reported over the range.
    expect(byReviewer?.series.map((s) => s.name)).toEqual(['llm', 'security']);
  });

  it("stores svc's daily figures once, rewriting a row only when its value changed", async () => {
    expect(await refreshSvcRecords(t.db, { workspaceId: 'ws_m', projectId: PROJECT }, span)).toBe(14);
    expect(await refreshSvcRecords(t.db, { workspaceId: 'ws_m', projectId: PROJECT }, span)).toBe(0);
    const rows = await t.db.orm.select().from(metricRecords);
    expect(rows.map((r) => r.key).sort()).toContain('findings/2026-11-02');
    expect(rows.every((r) => r.owner === 'svc' && r.projectId === PROJECT)).toBe(true);
  });

  it('spans whole UTC days', () => {
    expect(lastDays(3, '2026-03-01')).toEqual({ from: '2026-02-27', to: '2026-03-01' });
    expect(daysOf({ from: '2026-12-30', to: '2027-01-02' })).toEqual([
      '2026-12-30',
      '2026-12-31',
      '2027-01-01',
      '2027-01-02',
    ]);
  });
});
