/**
 * A push to the default branch that changes a file the repository knowledge is derived from
 * refreshes the project's record at the new head; a push that touches none of them does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPush } from '../../src/automation/plans';
import type { AutomationDeps } from '../../src/automation/triggers';
import { Worker } from '../../src/engine/worker';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

describe('knowledge follows the default branch', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let deps: AutomationDeps;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', {
      'package.json': JSON.stringify({ name: 'api', engines: { node: '>=18' } }),
      'src/app.js': 'export const ok = 1;\n',
    });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api') };
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  const push = (paths: string[]) =>
    onPush(deps, {
      installationId: 1,
      repo: 'acme/api',
      ref: 'refs/heads/main',
      after: gitIn(repo, ['rev-parse', 'main']).trim(),
      defaultBranch: 'main',
      paths,
    });
  const knowledge = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/repo-knowledge', headers });
    return res.json().data[0] as {
      commit_sha: string;
      refreshed_by: string;
      content: { runtimes: { name: string; version: string }[] };
    };
  };
  async function settled(taskId: string) {
    for (let i = 0; i < 200; i++) {
      const run = await t.services.engine.latestRun(taskId);
      if (run && ['completed', 'failed'].includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} did not settle`);
  }

  it('refreshes the record at the new head when a manifest changes', async () => {
    commitFiles(
      repo,
      { 'package.json': JSON.stringify({ name: 'api', engines: { node: '>=22' } }) },
      'node 22',
    );
    const result = await push(['package.json']);
    expect(result.knowledge_refresh_task_id).toEqual(expect.any(String));
    expect((await settled(result.knowledge_refresh_task_id ?? '')).status).toBe('completed');
    const record = await knowledge();
    expect(record.commit_sha).toBe(gitIn(repo, ['rev-parse', 'main']).trim());
    expect(record.refreshed_by).toBe('push');
    expect(record.content.runtimes).toContainEqual(
      expect.objectContaining({ name: 'node', version: '>=22' }),
    );
  });

  it('leaves it alone when the push touches no knowledge input', async () => {
    const before = await knowledge();
    commitFiles(repo, { 'src/app.js': 'export const ok = 2;\n' }, 'code only');
    const result = await push(['src/app.js']);
    expect(result.knowledge_refresh_task_id).toBeNull();
    expect((await knowledge()).commit_sha).toBe(before.commit_sha);
  });
});
