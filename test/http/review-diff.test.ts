/**
 * review_results_diff: the diff a pass read, from real git at the pass's recorded commits, with
 * the line numbers its findings point at; a page at a time, one file by path, another project's
 * pass unseen, a diff read once kept for the next file, and a pass whose commits are gone named
 * as such. Both engines.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { bearer, createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

type DiffLine = { kind: string; old_line: number | null; new_line: number | null; text: string };
type DiffFile = { path: string; change: string; additions: number; hunks: { lines: DiffLine[] }[] };

describe.each(DATABASE_KINDS)('review_results_diff on %s', (kind) => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;
  let passId: string;
  let reposDir: string;

  const get = (url: string, as = headers) => t.app.inject({ method: 'GET', url, headers: as });
  /** Reviews pull request `pr` with the security reviewer and waits for the run to end. */
  const review = async (pr: number) => {
    const started = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr, reviewers: ['security'] },
    });
    expect(started.statusCode, started.body).toBe(202);
    await settleRuns(t);
  };

  beforeAll(async () => {
    reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', {
      'src/run.js': 'export function run(req) {\n  return req.query.code;\n}\n',
    });
    openPullRequest(
      repo,
      1,
      {
        'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
        'src/calc.js': 'export function calc(req) {\n  return eval(req.body.expr);\n}\n',
        'README.md': '# shop\n',
      },
      'runners',
    );
    makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });
    t = await createTestApp({ kind, reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/shop') };
    otherHeaders = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/other') };
    await review(1);
    const passes = (await get('/api/v1/review-results')).json().data;
    expect(passes).toHaveLength(1);
    passId = passes[0].id;
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('answers every file of the pass with hunks whose new lines are the ones findings point at', async () => {
    const res = await get(`/api/v1/review-results/${passId}/diff`);
    expect(res.statusCode, res.body).toBe(200);
    const files = res.json().data as DiffFile[];
    expect(files.map((f) => f.path).sort()).toEqual(['README.md', 'src/calc.js', 'src/run.js']);
    const run = files.find((f) => f.path === 'src/run.js') as DiffFile;
    expect(run.change).toBe('modified');
    const lines = run.hunks.flatMap((h) => h.lines);
    expect(lines).toContainEqual({
      kind: 'del',
      old_line: 2,
      new_line: null,
      text: '  return req.query.code;',
    });
    expect(lines).toContainEqual({
      kind: 'add',
      old_line: null,
      new_line: 2,
      text: '  return eval(req.query.code);',
    });

    const findings = (await get('/api/v1/findings?limit=200')).json().data as {
      path: string;
      line: number;
    }[];
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) {
      const file = files.find((f) => f.path === finding.path) as DiffFile;
      const at = file.hunks.flatMap((h) => h.lines).find((l) => l.new_line === finding.line);
      expect(at?.text).toContain('eval(');
    }
  });

  it('pages through the files and reads one file by path', async () => {
    const first = (await get(`/api/v1/review-results/${passId}/diff?limit=2`)).json();
    expect(first.data).toHaveLength(2);
    const second = (
      await get(`/api/v1/review-results/${passId}/diff?limit=2&cursor=${first.next_cursor}`)
    ).json();
    expect(second.data).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    const one = (await get(`/api/v1/review-results/${passId}/diff?path=src/calc.js`)).json();
    expect(one.data.map((f: DiffFile) => f.path)).toEqual(['src/calc.js']);
    expect(one.data[0]).toMatchObject({ change: 'added', additions: 3 });
    const none = (await get(`/api/v1/review-results/${passId}/diff?path=nowhere.js`)).json();
    expect(none).toEqual({ object: 'list', data: [], next_cursor: null });
    const bad = await get(`/api/v1/review-results/${passId}/diff?cursor=bm90LW1pbmU`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
  });

  it("keeps another project's pass to itself", async () => {
    const res = await get(`/api/v1/review-results/${passId}/diff`, otherHeaders);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('reads the code host once for a pass read file by file; names a pass whose repository is gone', async () => {
    // A second pass, its diff never read yet.
    openPullRequest(
      join(reposDir, 'acme/shop'),
      2,
      { 'src/more.js': 'export function more(req) {\n  return eval(req.body.more);\n}\n' },
      'more',
      'more',
    );
    await review(2);
    const unread = (await get('/api/v1/review-results'))
      .json()
      .data.find((p: { id: string }) => p.id !== passId);
    expect(unread).toBeDefined();

    rmSync(join(reposDir, 'acme/shop'), { recursive: true, force: true });
    // The first pass's diff was read above and is kept for a while: the same files again,
    // without the code host, one file at a time as the console asks.
    const kept = await get(`/api/v1/review-results/${passId}/diff?path=src/calc.js`);
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().data.map((f: DiffFile) => f.path)).toEqual(['src/calc.js']);
    // The second was never read: its repository is gone, and the answer says so.
    const res = await get(`/api/v1/review-results/${unread.id}/diff`);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().error).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(
        /^the reviewed diff [0-9a-f]{12}\.\.[0-9a-f]{12} of acme\/shop is gone: /,
      ),
    });
  });
});
