/**
 * A `Service / Review` check never waits on a run that will not report: an API-created review
 * delivered to the code host gets its check queued with its deadline, like an automatic one —
 * as its run's first step, before the run reports in progress (the acknowledgement asks the code
 * host nothing) — and a review no worker picks up is ended by the sweeper and its check
 * completed skipped, naming why.
 */
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { SKIPPED_ERRORED_TITLE } from '../../src/core/checks';
import { Sweeper } from '../../src/engine/sweeper';
import { Worker } from '../../src/engine/worker';
import { checkRuns, pullRequests } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

type CheckRecord = {
  id: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  title: string;
  summary: string;
};

const PICKUP_MS = 300;

describe('a check never stuck', () => {
  let t: TestApp;
  let repo: string;
  let host: LocalCodeHost;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    gitIn(repo, ['checkout', '-q', '-b', 'other']);
    commitFiles(repo, { 'src/other.js': 'export const other = 2;\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/2/head', 'other']);
    t = await createTestApp({ reposDir, env: { SVC_PICKUP_TIMEOUT_MS: String(PICKUP_MS) } });
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api') };
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
  });
  afterAll(() => t.close());

  const checks = () => host.localRecords<CheckRecord>('acme/api', 'checks');
  const latestCheck = async () => (await checks()).at(-1);

  it('queues the check of an API review delivered to the code host, with its deadline, before it reviews', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 1, delivery: 'codehost' },
    });
    expect(res.statusCode).toBe(202);
    // The acknowledgement asked the code host nothing: no check yet, until the run starts.
    expect(await checks()).toEqual([]);
    const worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    try {
      for (let i = 0; i < 400; i++) {
        const run = await t.services.engine.latestRun(res.json().id);
        if (run && ['completed', 'failed', 'canceled'].includes(run.status)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await worker.stop();
    }
    expect((await t.services.engine.latestRun(res.json().id))?.status).toBe('completed');
    const head = gitIn(repo, ['rev-parse', 'feature']).trim();
    const states = (await checks()).filter((c) => c.head_sha === head);
    // One check on the head, queued first (with the deadline below), then in progress, then the verdict.
    expect(new Set(states.map((c) => c.id)).size).toBe(1);
    expect(states.map((c) => c.status)).toEqual(['queued', 'in_progress', 'completed']);
    expect(states[0]).toMatchObject({ title: 'Queued for review' });
    // The deadline is persisted on the check, for the serving process's timer (deadline-timer.ts).
    const [row] = await t.services.db.orm.select().from(checkRuns).where(eq(checkRuns.headSha, head));
    expect(row?.deadlineAt).toBeInstanceOf(Date);
    expect(row?.reviewTaskId).toBe(res.json().id);
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    expect(pr?.reviewStatus).toBe('reviewed');
  });

  it('completes the check skipped, naming the pickup timeout, when no worker takes the review', async () => {
    // No worker runs from here on: the run stays pending, as it would with every worker down.
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 2, delivery: 'codehost' },
    });
    expect(res.statusCode).toBe(202);
    await new Promise((r) => setTimeout(r, PICKUP_MS + 100));
    const engine = t.services.engine;
    const sweeper = new Sweeper(engine.db, engine.limits, pino({ level: 'silent' }), (run, error) =>
      engine.settleAbandoned(run, error),
    );
    const swept = await sweeper.sweepOnce();
    expect(swept.pickupTimeouts).toBeGreaterThanOrEqual(1);
    const check = await latestCheck();
    expect(check).toMatchObject({
      head_sha: gitIn(repo, ['rev-parse', 'other']).trim(),
      status: 'completed',
      conclusion: 'skipped',
      title: SKIPPED_ERRORED_TITLE,
    });
    expect(check?.summary).toContain('queue_pickup_timeout');
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 2));
    expect(pr?.reviewStatus).toBe('errored');
  });
});
