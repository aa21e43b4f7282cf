/**
 * The study pass: a rule people keep dismissing becomes one scoped learning (downgrade), which a
 * later pass refreshes instead of writing again; the run's result says what it did.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { newId } from '../../src/storage/ids';
import { findings, learnings } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

describe('study pass', () => {
  let t: TestApp;
  let worker: Worker;
  let projectId: string;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/studied', { 'src/app.js': 'export const ok = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    projectId = await createProject(t, 'acme/studied');
    const finding = (rule: string, status: 'open' | 'dismissed', n: number) => ({
      id: newId('finding'),
      workspaceId: t.workspaceId,
      projectId,
      ledgerKey: 'pr:pr_x',
      fingerprint: `${rule}-${status}-${n}`,
      status,
      severity: 'P1' as const,
      path: `src/f${n}.js`,
      line: 1,
      endLine: 1,
      title: 't',
      body: 'b',
      rule,
      category: 'security',
      anchorText: 'x',
      taskId: 'tsk_x',
      firstRunId: 'run_x',
      lastRunId: 'run_x',
      commitSha: 'c'.repeat(40),
    });
    await t.services.db.orm
      .insert(findings)
      .values([
        ...[1, 2, 3, 4].map((n) => finding('security/weak-hash', 'dismissed', n)),
        finding('security/weak-hash', 'open', 5),
        finding('security/xss', 'dismissed', 6),
        finding('security/xss', 'open', 7),
      ]);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  async function study() {
    const { task } = await t.services.engine.createTask({
      workspaceId: t.workspaceId,
      projectId,
      kind: 'study',
      title: 'Study',
      input: {},
    });
    for (let i = 0; i < 200; i++) {
      const run = await t.services.engine.latestRun(task.id);
      if (run && ['completed', 'failed'].includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('study did not finish');
  }

  it('writes one downgrade learning for a rule dismissed again and again, and refreshes it on the next pass', async () => {
    const first = await study();
    expect(first.status).toBe('completed');
    const firstResult = first.result as { learnings: { created: string[]; refreshed: string[] } };
    expect(firstResult.learnings.refreshed).toEqual([]);
    expect(firstResult.learnings.created).toHaveLength(1);
    const [id] = firstResult.learnings.created;
    const rows = await t.services.db.orm.select().from(learnings).where(eq(learnings.projectId, projectId));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, scope: { rule: 'security/weak-hash', action: 'downgrade' } });
    expect(rows[0]?.learning).toContain('dismissed 4 of 5 times');

    const second = await study();
    expect((second.result as typeof firstResult).learnings).toEqual({ created: [], refreshed: [id] });
    const again = await t.services.db.orm.select().from(learnings).where(eq(learnings.projectId, projectId));
    expect(again).toHaveLength(1);
    expect(again[0]?.learnedAt.getTime()).toBeGreaterThan(rows[0]?.learnedAt.getTime() ?? 0);

    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/v1/learnings',
      headers: { ...bearer(t.workspaceKey), 'project-id': projectId },
    });
    expect(listed.json().data.map((l: { scope: unknown }) => l.scope)).toEqual([
      { rule: 'security/weak-hash', action: 'downgrade' },
    ]);
  });
});
