/**
 * Every move of a pull request's review status is a timeline event: a second review of a
 * reviewed pull request records the move back to `planning` (it used to be written straight into
 * the row, leaving `reviewed → reviewing` on the timeline). And no code but setReviewStatus
 * (src/storage/review-status.ts) writes the status, so no move can skip the event.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { pullRequests } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

interface Move {
  before: string | null;
  after: string;
  run: string | null;
}

describe('review status moves', () => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;

  const review = async () => {
    const started = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 1, reviewers: ['security'] },
    });
    expect(started.statusCode, started.body).toBe(202);
    for (let i = 0; ; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${started.json().id}`, headers });
      const run = res.json().run;
      if (run?.status === 'completed') return run.id as string;
      if (i > 400 || ['failed', 'canceled'].includes(run?.status)) throw new Error(res.body);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const moves = async (): Promise<Move[]> => {
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/pull-requests/${pr?.id}/events?limit=200`,
      headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { kind: string; payload: Record<string, unknown> }[])
      .filter((e) => e.kind === 'review_status_changed')
      .map(({ payload }) => ({
        before: (payload.before as { review_status: string | null }).review_status,
        after: (payload.after as { review_status: string }).review_status,
        run: payload.run_id as string | null,
      }));
  };

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/moves', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(
      repo,
      1,
      { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' },
      'runner',
    );
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/moves') };
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('records the move back to planning when a reviewed pull request is reviewed again', async () => {
    await review();
    const second = await review();
    const all = await moves();
    // Each event's `before` is the previous event's `after`: no move went unrecorded.
    for (let i = 1; i < all.length; i++) expect(all[i]?.before).toBe(all[i - 1]?.after);
    const back = all.find((m) => m.before === 'reviewed' && m.after === 'planning');
    expect(back).toEqual({ before: 'reviewed', after: 'planning', run: second });
    expect(all.at(-1)?.after).toBe('reviewed');
  });

  it('leaves writing the status to setReviewStatus alone', () => {
    const root = join(__dirname, '../../src');
    const writers = sourceFiles(root)
      .filter((file) => !file.endsWith('storage/review-status.ts'))
      .filter((file) =>
        /reviewStatus:\s*['"`]|\.set\(\{[^}]*\breviewStatus\b/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(root, file));
    expect(writers).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}
