/**
 * A review that cannot get what it runs, on a real repository and a real worker: the run fails
 * `missing_expected_tool` (git not on the PATH), `tool_timeout` (git past SVC_GIT_TIMEOUT_MS) or
 * `skill_instance_not_found` (a reviewer whose skill this svc no longer ships), never an
 * unreadable repository or `unknown`, and the transcript's note names the code and its remedy.
 * The git tests change this process's environment while one review runs, so the tests run in turn.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FAILURE_REMEDY, type RunFailureCode } from '../../src/core/failures';
import { Worker } from '../../src/engine/worker';
import { RULES_PIN } from '../../src/operations/reviewers';
import { reviewers } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

describe('a review whose git fails', () => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;
  let base: string;
  let head: string;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'README.md': '# shop\n' });
    base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    head = commitFiles(repo, { 'src/app.js': 'export const x = eval(input);\n' }, 'add app');
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/shop') };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  /** Runs one review with `env` set in this process, and returns its status read and transcript. */
  async function reviewWith(env: Record<string, string>, reviewerIds = ['security']) {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/reviews',
        headers,
        payload: { base, head, reviewers: reviewerIds },
      });
      expect(res.statusCode).toBe(202);
      const id = res.json().id as string;
      for (let i = 0; i < 400; i++) {
        const status = (
          await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/status`, headers })
        ).json();
        if (['completed', 'failed', 'canceled'].includes(status.status)) {
          const messages = (
            await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/messages`, headers })
          ).json().data as { role: string; content: string; data: Record<string, unknown> | null }[];
          return { status, messages };
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`review ${id} did not finish`);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  function expectNamed(
    result: Awaited<ReturnType<typeof reviewWith>>,
    code: RunFailureCode,
    message: string | RegExp,
  ) {
    expect(result.status.status).toBe('failed');
    expect(result.status.error_json.code, result.status.error_json.message).toBe(code);
    expect(result.status.error_json.message).toMatch(message);
    const note = result.messages.at(-1);
    expect(note?.role).toBe('note');
    expect(note?.content).toContain(`Run failed with ${code}`);
    expect(note?.data).toMatchObject({ code, remedy: RUN_FAILURE_REMEDY[code] });
  }

  it('fails missing_expected_tool when git is not on the PATH', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-no-git-'));
    const result = await reviewWith({ PATH: empty });
    expectNamed(result, 'missing_expected_tool', /git is not installed or not on the PATH of svc/);
    expect(result.status.error_json.message).toContain(empty);
  });

  it('fails tool_timeout when git runs past SVC_GIT_TIMEOUT_MS', async () => {
    // One millisecond: no git call finishes within it, so the first one is stopped.
    const result = await reviewWith({ SVC_GIT_TIMEOUT_MS: '1' });
    expectNamed(result, 'tool_timeout', /did not finish within 1 ms and was stopped \(SVC_GIT_TIMEOUT_MS\)/);
  });

  it('fails skill_instance_not_found for a rule reviewer whose skill is no longer in the catalog', async () => {
    // What an upgrade leaves behind when a release retires a rule skill: the workspace's
    // reviewer row still names it.
    await t.services.db.orm.insert(reviewers).values({
      workspaceId: t.workspaceId,
      id: 'retired-lint',
      name: 'Retired lint',
      engine: 'builtin',
      skillId: 'retired-lint',
      modelPin: RULES_PIN,
      source: 'catalog',
    });
    const result = await reviewWith({}, ['retired-lint']);
    expectNamed(
      result,
      'skill_instance_not_found',
      'reviewer retired-lint needs skill retired-lint, which is not in the catalog',
    );
  });

  it('reviews normally once git is back', async () => {
    const result = await reviewWith({});
    expect(result.status.status).toBe('completed');
  });
});
