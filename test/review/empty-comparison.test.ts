/**
 * Never clean without looking (issue 23.1): a review whose base and head are the same commit, or
 * whose diff lists no file, names the gap `empty_comparison` with both commits, and its pull
 * request's `Service / Review` check is skipped with the spec's "no reviewable diff" title. And a
 * pull request's branch checked out in the served work tree changes nothing of what it is
 * compared with: the review still finds the defect planted on it.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { SKIPPED_FILTERED_TITLE } from '../../src/core/checks';
import { Worker } from '../../src/engine/worker';
import { pullRequests } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

type CheckRecord = { id: string; head_sha: string; status: string; conclusion: string | null; title: string };
type Review = {
  run: { status: string; gaps: { code: string; message: string }[] };
  findings: { rule: string; severity: string; path: string }[];
};

describe('an empty comparison is never a clean review', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let headers: Record<string, string>;
  const rev = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();

  async function review(payload: Record<string, unknown>): Promise<Review> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/reviews', headers, payload });
    expect(res.statusCode).toBe(202);
    const id = res.json().id as string;
    for (let i = 0; i < 400; i++) {
      const body = (await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${id}`, headers })).json();
      if (['completed', 'failed', 'canceled'].includes(body.run?.status)) return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`review ${id} did not finish`);
  }

  /** The latest state of each check svc recorded for `sha` in the repository's git dir. */
  async function checksOf(sha: string): Promise<CheckRecord[]> {
    const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const records = await host.localRecords<CheckRecord>('acme/shop', 'checks');
    return [...new Map(records.map((c) => [c.id, c] as const)).values()].filter((c) => c.head_sha === sha);
  }

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    // #1: its head is the default branch's tip, so base and head are one commit.
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'main']);
    // #2: a commit that changes no file: two commits, no difference.
    gitIn(repo, ['checkout', '-q', '-b', 'empty']);
    gitIn(repo, ['commit', '-q', '--allow-empty', '-m', 'nothing']);
    gitIn(repo, ['update-ref', 'refs/pull/2/head', 'empty']);
    // #3: a real change with a planted defect, its branch left checked out as while editing it.
    gitIn(repo, ['checkout', '-q', '-b', 'feature', 'main']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    gitIn(repo, ['symbolic-ref', 'refs/pull/3/head', 'refs/heads/feature']);

    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    const projectId = await createProject(t, 'acme/shop');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('with the pull request branch checked out, compares it with main and finds the planted defect', async () => {
    expect(gitIn(repo, ['symbolic-ref', '--short', 'HEAD']).trim()).toBe('feature');
    const result = await review({ pr: 3, reviewers: ['security'], delivery: 'codehost' });
    expect(result.run.status).toBe('completed');
    expect(result.run.gaps.map((g) => g.code)).not.toContain('empty_comparison');
    expect(result.findings).toContainEqual(
      expect.objectContaining({ rule: 'security/code-injection', severity: 'P0', path: 'src/run.js' }),
    );
    expect(await checksOf(rev('feature'))).toEqual([
      expect.objectContaining({ status: 'completed', conclusion: 'action_required' }),
    ]);
  });

  it('head and base one commit: the gap names it, the check is skipped "no reviewable diff"', async () => {
    const main = rev('main');
    const result = await review({ pr: 1, reviewers: ['security'], delivery: 'codehost' });
    expect(result.run.status).toBe('completed');
    const gap = result.run.gaps.find((g) => g.code === 'empty_comparison');
    expect(gap?.message).toContain(`same commit ${main}`);
    expect(result.findings).toEqual([]);
    expect(await checksOf(main)).toEqual([
      expect.objectContaining({ status: 'completed', conclusion: 'skipped', title: SKIPPED_FILTERED_TITLE }),
    ]);
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    expect(pr?.reviewStatus).toBe('skipped');
  });

  it('two commits with no difference: the gap names both, the check is skipped', async () => {
    const result = await review({ pr: 2, reviewers: ['security'], delivery: 'codehost' });
    expect(result.run.status).toBe('completed');
    const gap = result.run.gaps.find((g) => g.code === 'empty_comparison');
    expect(gap?.message).toBe(
      `base ${rev('main')} and head ${rev('empty')} differ in no file, so nothing was reviewed`,
    );
    expect(await checksOf(rev('empty'))).toEqual([
      expect.objectContaining({ conclusion: 'skipped', title: SKIPPED_FILTERED_TITLE }),
    ]);
  });

  it('a commit range with one commit at both ends names the gap too', async () => {
    const main = rev('main');
    const result = await review({ base: main, head: main, reviewers: ['security'] });
    expect(result.run.status).toBe('completed');
    expect(result.run.gaps.find((g) => g.code === 'empty_comparison')?.message).toContain(main);
  });
});
