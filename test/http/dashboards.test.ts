/**
 * Dashboards, metric records and preferences over a real review: the default board's panels
 * carry the ledger's real numbers, a dismissal moves the dismissal rate, svc's daily figures are
 * stored as metric records, callers write their own (newest write wins) and plot them, panels
 * are validated, and each caller keeps their own notification markers and is notified only of
 * what they chose among the four kinds a person acts on. Both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { createApiKey } from '../../src/storage/keys';
import { appendObjectEvent } from '../../src/storage/object-events';
import { bearer, createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

type Point = { day: string; value: number | null };
type ComputedPanel = {
  title: string;
  metric: string;
  group_by: string;
  unit: string;
  summary: number | null;
  series: { name: string; points: Point[] }[];
};
type Finding = { id: string; severity: 'P0' | 'P1' | 'P2'; status: string };

const today = () => new Date().toISOString().slice(0, 10);

describe.each(DATABASE_KINDS)('dashboards and metric records on %s', (kind) => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;
  let findings: Finding[];

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, as = headers) =>
    t.app.inject({
      method,
      url,
      headers: as,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, as = headers) => {
    const res = await call(method, url, payload, as);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const defaultBoard = async (as = headers) => {
    const list = await ok('GET', '/api/v1/dashboards', undefined, as);
    const board = list.data.find((d: { is_default: boolean }) => d.is_default);
    return ok('GET', `/api/v1/dashboards/${board.id}`, undefined, as);
  };
  const panel = (board: { panels: ComputedPanel[] }, title: string) => {
    const found = board.panels.find((p) => p.title === title);
    if (!found) throw new Error(`no panel ${title}`);
    return found;
  };
  const todayOf = (p: ComputedPanel, series: string) =>
    p.series.find((s) => s.name === series)?.points.at(-1) as Point;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(
      repo,
      1,
      {
        'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
        'src/calc.js': 'export function calc(req) {\n  return eval(req.body.expr);\n}\n',
      },
      'runners',
    );
    makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });
    t = await createTestApp({ kind, reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/shop') };
    otherHeaders = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/other') };

    const started = await ok('POST', '/api/v1/reviews', { pr: 1, reviewers: ['security'] });
    for (let i = 0; ; i++) {
      const body = await ok('GET', `/api/v1/reviews/${started.id}`);
      if (body.run?.status === 'completed') break;
      if (i > 400 || ['failed', 'canceled'].includes(body.run?.status))
        throw new Error(JSON.stringify(body.run));
      await new Promise((r) => setTimeout(r, 50));
    }
    findings = (await ok('GET', '/api/v1/findings?limit=200')).data;
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('gives every project one default board, created with the project', async () => {
    const first = await ok('GET', '/api/v1/dashboards');
    const again = await ok('GET', '/api/v1/dashboards');
    const defaults = again.data.filter((d: { is_default: boolean }) => d.is_default);
    expect(defaults).toHaveLength(1);
    expect(again.data.map((d: { id: string }) => d.id)).toEqual(first.data.map((d: { id: string }) => d.id));
    const created = await ok(
      'GET',
      `/api/v1/timeline-events?subject_type=dashboard&subject_id=${defaults[0].id}`,
    );
    expect(created.data.map((e: { kind: string }) => e.kind)).toEqual(['created']);
  });

  it("draws the default board from the ledger's real numbers", async () => {
    expect(findings.length).toBeGreaterThanOrEqual(2);
    const board = await defaultBoard();
    const bySeverity = panel(board, 'Findings by severity');
    expect(bySeverity.unit).toBe('count');
    for (const severity of ['P0', 'P1', 'P2'] as const) {
      expect(todayOf(bySeverity, severity)).toEqual({
        day: today(),
        value: findings.filter((f) => f.severity === severity).length,
      });
    }
    expect(bySeverity.summary).toBe(findings.length);
    expect(bySeverity.series[0]?.points).toHaveLength(30);
    const reviews = panel(board, 'Reviews');
    expect(todayOf(reviews, 'completed')?.value).toBe(1);
    expect(todayOf(reviews, 'failed')?.value).toBe(0);
    // A quiet day is zero for counts, no value for rates.
    expect(reviews.series[0]?.points[0]?.value).toBe(0);
    const fixRate = panel(board, 'Fix rate');
    expect(fixRate.series[0]?.points[0]?.value).toBeNull();
    expect(todayOf(fixRate, 'fix_rate')?.value).toBe(0);
    expect(panel(board, 'Review latency (median)').summary).toBeGreaterThan(0);
  });

  it('moves the dismissal rate when a finding is dismissed, and stores the day as metric records', async () => {
    const target = findings[0] as Finding;
    const dismissed = await call('POST', `/api/v1/findings/${target.id}/events`, {
      kind: 'dismissed',
      payload: { reason: 'reviewed: the expression is a constant' },
    });
    expect(dismissed.statusCode, dismissed.body).toBe(201);
    const board = await defaultBoard();
    const byReviewer = panel(board, 'Dismissal rate by reviewer');
    expect(byReviewer.series.map((s) => s.name)).toEqual(['security']);
    expect(todayOf(byReviewer, 'security')?.value).toBeCloseTo(1 / findings.length);

    const records = await ok('GET', `/api/v1/metric-records?owner=svc&key_prefix=dismissal_rate/`);
    expect(records.data).toHaveLength(1);
    expect(records.data[0]).toMatchObject({
      object: 'metric_record',
      owner: 'svc',
      key: `dismissal_rate/${today()}`,
      written_by: null,
      value: { reported: findings.length, dismissed: 1 },
    });
    const findingsRecord = (await ok('GET', `/api/v1/metric-records?owner=svc&since=${today()}`)).data.find(
      (r: { key: string }) => r.key === `findings/${today()}`,
    );
    expect(findingsRecord.value.total).toBe(findings.length);
    expect(findingsRecord.value.by_reviewer).toEqual({ security: findings.length });
    const one = await ok('GET', `/api/v1/metric-records/${findingsRecord.id}`);
    expect(one).toEqual(findingsRecord);

    await call('POST', `/api/v1/findings/${target.id}/events`, { kind: 'reopened', payload: {} });
    const reread = await ok('GET', `/api/v1/metric-records/${records.data[0].id}`);
    expect(reread.value.dismissed).toBe(0);
  });

  it("writes a caller's records, newest write winning, and plots them on a custom panel", async () => {
    const key = `coverage/${today()}`;
    const first = await call('POST', '/api/v1/metric-records', { owner: 'ci', key, value: 81.5 });
    expect(first.statusCode, first.body).toBe(201);
    const second = await call('POST', '/api/v1/metric-records', { owner: 'ci', key, value: { value: 83 } });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toMatchObject({
      id: first.json().id,
      value: { value: 83 },
      written_by: expect.stringMatching(/^key_/),
    });
    const events = await ok(
      'GET',
      `/api/v1/timeline-events?subject_type=metric_record&subject_id=${first.json().id}`,
    );
    expect(events.data.map((e: { kind: string }) => e.kind)).toEqual(['written', 'written']);
    expect(events.data[0].payload).toEqual({ before: { value: 81.5 }, after: { value: { value: 83 } } });

    const reserved = await call('POST', '/api/v1/metric-records', { owner: 'svc', key: 'x', value: 1 });
    expect(reserved.statusCode).toBe(400);
    expect(reserved.json().error.message).toMatch(/svc/);

    const board = await call('POST', '/api/v1/dashboards', {
      name: 'Coverage',
      panels: [
        { title: 'Coverage', metric: 'custom', owner: 'ci', key: 'coverage', range_days: 7, chart: 'line' },
      ],
    });
    expect(board.statusCode, board.body).toBe(201);
    const computed = await ok('GET', `/api/v1/dashboards/${board.json().id}`);
    const coverage = computed.panels[0] as ComputedPanel;
    expect(coverage.unit).toBe('value');
    expect(coverage.series[0]?.points).toHaveLength(7);
    expect(coverage.series[0]?.points.at(-1)).toEqual({ day: today(), value: 83 });
    expect(coverage.series[0]?.points[0]?.value).toBeNull();
    expect(coverage.summary).toBe(83);
  });

  it('validates panels by name, and records what an update changed', async () => {
    const wrongGroup = await call('POST', '/api/v1/dashboards', {
      name: 'Bad',
      panels: [{ title: 'x', metric: 'fix_rate', group_by: 'reviewer' }],
    });
    expect(wrongGroup.statusCode).toBe(400);
    expect(wrongGroup.json().error.message).toMatch(/fix_rate can be grouped by none/);
    const customWithoutOwner = await call('POST', '/api/v1/dashboards', {
      name: 'Bad',
      panels: [{ title: 'x', metric: 'custom' }],
    });
    expect(customWithoutOwner.statusCode).toBe(400);
    const unknownMetric = await call('POST', '/api/v1/dashboards', {
      name: 'Bad',
      panels: [{ title: 'x', metric: 'happiness' }],
    });
    expect(unknownMetric.statusCode).toBe(400);

    const created = await ok('POST', '/api/v1/dashboards', {
      name: 'Noise',
      panels: [{ title: 'By rule', metric: 'findings', group_by: 'rule', chart: 'table' }],
    });
    expect(created.panels[0]).toMatchObject({ range_days: 30, group_by: 'rule' });
    const updated = await ok('PATCH', `/api/v1/dashboards/${created.id}`, { name: 'Noise by rule' });
    expect(updated).toMatchObject({ name: 'Noise by rule', panels: created.panels });
    const events = await ok('GET', `/api/v1/timeline-events?subject_type=dashboard&subject_id=${created.id}`);
    expect(events.data[0]).toMatchObject({
      kind: 'updated',
      payload: { before: { name: 'Noise' }, after: { name: 'Noise by rule' } },
    });
    const empty = await call('PATCH', `/api/v1/dashboards/${created.id}`, {});
    expect(empty.statusCode).toBe(400);

    const computed = await ok('GET', `/api/v1/dashboards/${created.id}`);
    const byRule = computed.panels[0] as ComputedPanel;
    expect(byRule.series.reduce((sum, s) => sum + (s.points.at(-1)?.value ?? 0), 0)).toBe(findings.length);
  });

  it("keeps another project's boards and records out", async () => {
    const board = await defaultBoard();
    expect((await call('GET', `/api/v1/dashboards/${board.id}`, undefined, otherHeaders)).statusCode).toBe(
      404,
    );
    const theirs = await defaultBoard(otherHeaders);
    expect(theirs.id).not.toBe(board.id);
    expect(panel(theirs, 'Findings by severity').summary).toBe(0);
    const records = await ok('GET', '/api/v1/metric-records', undefined, otherHeaders);
    expect(records.data).toEqual([]);
  });

  it("keeps each caller's notification markers, read with `me` and set with a patch", async () => {
    const mine = await ok('GET', '/api/v1/preferences/me');
    expect(mine).toMatchObject({ object: 'preference', notifications_read_at: null, dashboard_id: null });
    expect(mine.unread_notifications).toBeGreaterThan(0);
    expect(await ok('GET', `/api/v1/preferences/${mine.id}`)).toEqual(mine);

    const board = await defaultBoard();
    const read = await ok('PATCH', `/api/v1/preferences/${mine.id}`, {
      notifications_read_at: 'now',
      dashboard_id: board.id,
    });
    expect(read.unread_notifications).toBe(0);
    expect(read.dashboard_id).toBe(board.id);
    expect(Date.parse(read.notifications_read_at)).toBeGreaterThan(0);

    // A new review after the marker that opens nothing new: its run's bookkeeping and the pull
    // request's status moves are on the timeline, but nothing a person must act on.
    await new Promise((r) => setTimeout(r, 5));
    await ok('POST', '/api/v1/reviews', { pr: 1, reviewers: ['security'] });
    await settleRuns(t);
    const since = (await ok('GET', `/api/v1/timeline-events?since=${read.notifications_read_at}&limit=200`))
      .data as { subject_type: string; kind: string }[];
    expect(since.map((e) => `${e.subject_type} ${e.kind}`)).toEqual(
      expect.arrayContaining([
        'run queued',
        'run claimed',
        'run completed',
        'pull_request review_status_changed',
      ]),
    );
    expect((await ok('GET', '/api/v1/preferences/me')).unread_notifications).toBe(0);

    // A failed run is one (the project paused: the next review fails before it starts).
    await ok('PATCH', `/api/v1/projects/${headers['project-id']}/settings`, { 'svc.brakes.paused': true });
    await ok('POST', '/api/v1/reviews', { pr: 1, reviewers: ['security'] });
    await settleRuns(t);
    await ok('PATCH', `/api/v1/projects/${headers['project-id']}/settings`, { 'svc.brakes.paused': false });
    const after = await ok('GET', '/api/v1/preferences/me');
    expect(after.notify).toEqual(['new_p0', 'run_failed', 'plan_awaiting_approval', 'quick_action_result']);
    expect(after.unread_notifications).toBe(1);
    const listed = await ok(
      'GET',
      `/api/v1/timeline-events?only=notifications&since=${read.notifications_read_at}&limit=200`,
    );
    expect(
      listed.data.map((e: { subject_type: string; kind: string }) => `${e.subject_type} ${e.kind}`),
    ).toEqual(['run failed']);

    // The caller chooses: without failed runs, the failure is no longer unread, nor listed.
    const chosen = await ok('PATCH', `/api/v1/preferences/${mine.id}`, { notify: ['new_p0', 'new_p0'] });
    expect(chosen.notify).toEqual(['new_p0']);
    expect(chosen.unread_notifications).toBe(0);
    const none = await ok(
      'GET',
      `/api/v1/timeline-events?only=notifications&since=${read.notifications_read_at}`,
    );
    expect(none.data).toEqual([]);
    const unknown = await call('PATCH', `/api/v1/preferences/${mine.id}`, { notify: ['everything'] });
    expect(unknown.statusCode).toBe(400);
    await ok('PATCH', `/api/v1/preferences/${mine.id}`, { notify: ['run_failed'] });
    expect((await ok('GET', '/api/v1/preferences/me')).unread_notifications).toBe(1);

    const foreignBoard = await call('PATCH', `/api/v1/preferences/${mine.id}`, { dashboard_id: 'dsh_nope' });
    expect(foreignBoard.statusCode).toBe(404);

    const other = await createApiKey(
      t.services.db,
      { workspaceId: t.workspaceId, kind: 'workspace', name: 'lead' },
      { actor: null },
    );
    const lead = { ...bearer(other.secret), 'project-id': headers['project-id'] as string };
    expect((await call('GET', `/api/v1/preferences/${mine.id}`, undefined, lead)).statusCode).toBe(404);
    const theirs = await ok('GET', '/api/v1/preferences/me', undefined, lead);
    expect(theirs.id).not.toBe(mine.id);
    expect(theirs.notifications_read_at).toBeNull();
  });

  it('notifies of the four kinds a person acts on, and of nothing else on the timeline', async () => {
    const projectId = headers['project-id'] as string;
    const lead = await createApiKey(
      t.services.db,
      { workspaceId: t.workspaceId, kind: 'workspace', name: 'notified' },
      { actor: null },
    );
    const as = { ...bearer(lead.secret), 'project-id': projectId };
    const marker = await ok('GET', '/api/v1/preferences/me', undefined, as);
    const read = await ok('PATCH', `/api/v1/preferences/${marker.id}`, { notifications_read_at: 'now' }, as);
    await new Promise((r) => setTimeout(r, 5));
    const append = (objectType: string, kind: string, payload: Record<string, unknown>) =>
      appendObjectEvent(t.services.db.orm, {
        workspaceId: t.workspaceId,
        projectId,
        objectType,
        objectId: `${objectType}_${kind}_${JSON.stringify(payload).length}`,
        kind,
        payload,
        actor: null,
      });
    // Acted on:
    await append('pull_request', 'review_status_changed', {
      after: { review_status: 'reviewed' },
      counts: { p0: 2, opened: 1, opened_p0: 1 },
    });
    await append('run', 'failed', { after: { status: 'failed' }, kind: 'review' });
    await append('plan', 'reviewed', { score: 0.8, requires_approval: true });
    await append('run', 'completed', { after: { status: 'completed' }, kind: 'quick_action' });
    // Not acted on: bookkeeping, a review that opened no P0, a plan approved by svc, settings.
    await append('pull_request', 'review_status_changed', { counts: { p0: 2, opened: 1, opened_p0: 0 } });
    await append('pull_request', 'review_status_changed', { after: { review_status: 'reviewing' } });
    await append('run', 'queued', { kind: 'review' });
    await append('run', 'completed', { after: { status: 'completed' }, kind: 'review' });
    await append('plan', 'reviewed', { score: 1, requires_approval: false });
    await append('project_settings', 'updated', { after: { 'svc.review.enabled': true } });

    const listed = await ok(
      'GET',
      `/api/v1/timeline-events?only=notifications&since=${read.notifications_read_at}`,
      undefined,
      as,
    );
    const kinds = (list: { data: { subject_type: string; kind: string }[] }) =>
      list.data.map((e) => `${e.subject_type} ${e.kind}`).sort();
    expect(kinds(listed)).toEqual([
      'plan reviewed',
      'pull_request review_status_changed',
      'run completed',
      'run failed',
    ]);
    expect((await ok('GET', '/api/v1/preferences/me', undefined, as)).unread_notifications).toBe(4);

    await ok(
      'PATCH',
      `/api/v1/preferences/${marker.id}`,
      { notify: ['plan_awaiting_approval', 'quick_action_result'] },
      as,
    );
    const fewer = await ok(
      'GET',
      `/api/v1/timeline-events?only=notifications&since=${read.notifications_read_at}`,
      undefined,
      as,
    );
    expect(kinds(fewer)).toEqual(['plan reviewed', 'run completed']);
    await ok('PATCH', `/api/v1/preferences/${marker.id}`, { notify: [] }, as);
    expect((await ok('GET', '/api/v1/preferences/me', undefined, as)).unread_notifications).toBe(0);
  });
});
