/**
 * The review deadline is a hard cap no review can delay: with no worker free (none runs here),
 * the serving process's timer concludes an overdue check neutral 'still reviewing' from the due
 * time persisted on the check (so a timer started after a restart finds it), one process only
 * when several run, and the verdict replaces it when the review lands. Deadlines are moved into
 * the past in the database rather than waited for: the test asserts what happens, not when.
 */
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadlineTimer } from '../../src/automation/deadline-timer';
import { type AutomationDeps, onPullRequestEvent } from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { STILL_REVIEWING_TITLE } from '../../src/core/checks';
import { Worker } from '../../src/engine/worker';
import { checkRuns } from '../../src/storage/schema';
import { createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

type CheckRecord = { id: string; head_sha: string; status: string; conclusion: string | null; title: string };

describe('the deadline timer', () => {
  let t: TestApp;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;
  const logger = pino({ level: 'silent' });

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();
  const records = async (head: string) =>
    (await host.localRecords<CheckRecord>('acme/api', 'checks')).filter((c) => c.head_sha === head);
  const timer = () => new DeadlineTimer(deps, { logger, scanMs: 50 });

  /** Opens pull request `number` from a new branch; its review is queued (no worker takes it). */
  async function open(number: number): Promise<string> {
    const branch = `change-${number}`;
    gitIn(repo, ['checkout', '-q', '-b', branch, 'main']);
    commitFiles(repo, {
      [`src/c${number}.js`]: 'export function run(req) {\n  return eval(req.query.code);\n}\n',
    });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', `refs/pull/${number}/head`, branch]);
    const started = await onPullRequestEvent(deps, {
      action: 'opened',
      installationId: 1,
      repo: 'acme/api',
      number,
      title: `Change ${number}`,
      draft: false,
      merged: false,
      headRef: branch,
      headSha: sha(branch),
      baseRef: 'main',
      author: 'octocat',
    });
    expect(started.outcome).toBe('review_started');
    return sha(branch);
  }
  /** The deadline of the check of `head` has passed. */
  const overdue = (head: string) =>
    t.services.db.orm
      .update(checkRuns)
      .set({ deadlineAt: new Date(Date.now() - 1_000) })
      .where(eq(checkRuns.headSha, head));

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    await createProject(t, 'acme/api');
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  });
  afterAll(() => t.close());

  it('leaves a check whose deadline has not come as it is', async () => {
    const head = await open(1);
    expect(await timer().tick()).toBe(0);
    expect((await records(head)).map((c) => c.status)).toEqual(['queued']);
  });

  it('concludes an overdue check still reviewing while every worker is busy, once', async () => {
    const head = sha('change-1');
    await overdue(head);
    // A timer that never saw the check (a restart): the due time is on the check row.
    expect(await timer().tick()).toBe(1);
    expect((await records(head)).at(-1)).toMatchObject({
      status: 'completed',
      conclusion: 'neutral',
      title: STILL_REVIEWING_TITLE,
    });
    expect(await timer().tick()).toBe(0);
    expect((await records(head)).filter((c) => c.title === STILL_REVIEWING_TITLE)).toHaveLength(1);
  });

  it('two serving processes over one database conclude a check once', async () => {
    const head = await open(2);
    await overdue(head);
    const [a, b] = await Promise.all([timer().tick(), timer().tick()]);
    expect(a + b).toBe(1);
    expect((await records(head)).filter((c) => c.title === STILL_REVIEWING_TITLE)).toHaveLength(1);
  });

  it('started, it concludes a check falling due by itself; the landed review replaces it with the verdict', async () => {
    const head = await open(3);
    const running = timer();
    running.start();
    try {
      await overdue(head);
      for (let i = 0; i < 400 && (await records(head)).at(-1)?.status !== 'completed'; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect((await records(head)).at(-1)).toMatchObject({
        conclusion: 'neutral',
        title: STILL_REVIEWING_TITLE,
      });
    } finally {
      await running.stop();
    }
    const worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    try {
      await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 1200 });
    } finally {
      await worker.stop();
    }
    for (const h of [sha('change-1'), sha('change-2'), head])
      expect((await records(h)).at(-1), h).toMatchObject({
        status: 'completed',
        conclusion: 'action_required',
      });
  });
});
