/** Project setup end to end: the setup task runs on a worker and records what it found. */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

describe('project setup', () => {
  let t: TestApp;
  let worker: Worker;
  let reposDir: string;

  beforeAll(async () => {
    reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/shop', {
      'package.json': `${JSON.stringify({
        name: 'shop',
        engines: { node: '>=20' },
        scripts: { test: 'vitest run' },
        devDependencies: { vitest: '3.2.4' },
      })}\n`,
      'package-lock.json': '{"lockfileVersion":3}\n',
      'src/index.ts': 'export {};\n',
      'src/cart.ts': 'export const cart = [];\n',
      'src/cart.test.ts': 'test("x", () => {});\n',
      'tools/seed.py': 'print(1)\n',
      '.github/workflows/ci.yml':
        'on: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm ci\n      - run: npm test\n',
      'docs/plans/search.md': '# Search\n',
    });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  async function waitForTerminal(taskId: string, projectId: string) {
    const headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    for (let i = 0; i < 200; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${taskId}/status`, headers });
      const status = res.json().status;
      if (status === 'completed' || status === 'failed' || status === 'canceled') return res.json();
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} did not finish`);
  }

  it('creates the project and a real setup task in one call, which records the evidence', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: { name: 'shop', repository: { full_name: 'acme/shop', installation_id: 1 }, setup: true },
    });
    expect(res.statusCode).toBe(201);
    const { project, setup } = res.json();
    expect(setup.task).toMatchObject({
      id: expect.stringMatching(/^tsk_/),
      run_id: expect.stringMatching(/^run_/),
      status_url: `/api/v1/tasks/${setup.task.id}/status`,
    });
    const status = await waitForTerminal(setup.task.id, project.id);
    expect(status.status).toBe('completed');
    expect(status.terminal_event_count).toBe(1);
    expect(status.seed_graph.counts).toMatchObject({
      files: 8,
      manifests: 1,
      ci_files: 1,
      plan_documents: 1,
    });

    const evidence = await t.app.inject({
      method: 'GET',
      url: `/api/v1/projects/${project.id}/setup`,
      headers: bearer(t.workspaceKey),
    });
    expect(evidence.statusCode).toBe(200);
    expect(evidence.json()).toMatchObject({
      status: 'completed',
      task_id: setup.task.id,
      evidence: {
        repository: 'acme/shop',
        files: 8,
        languages: { typescript: 3, python: 1 },
        manifests: ['package.json'],
        ci: ['.github/workflows/ci.yml'],
        plan_documents: ['docs/plans/search.md'],
        test_paths: 1,
      },
    });
    // tools/seed.py is Python and nothing states a Python version: named, not guessed.
    const pythonUnknown = expect.objectContaining({
      code: 'runtime_version_unknown',
      message: expect.stringContaining('python'),
    });
    expect(evidence.json().missing).toEqual([pythonUnknown]);

    // The repository knowledge it wrote: one record for the project, each fact with its evidence.
    const headers = { ...bearer(t.workspaceKey), 'project-id': project.id };
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/repo-knowledge', headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toHaveLength(1);
    const knowledge = list.json().data[0];
    expect(knowledge).toMatchObject({
      object: 'repo_knowledge',
      id: expect.stringMatching(/^rkn_/),
      refreshed_by: 'setup',
      commit_sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      gaps: [pythonUnknown],
    });
    expect(knowledge.content.runtimes).toEqual([
      { name: 'node', version: '>=20', source: 'package.json#engines.node', declared: false },
    ]);
    expect(knowledge.content.package_managers).toEqual([
      expect.objectContaining({ name: 'npm', manifest: 'package.json', lockfile: 'package-lock.json' }),
    ]);
    expect(knowledge.content.ci).toEqual([
      expect.objectContaining({
        path: '.github/workflows/ci.yml',
        provider: 'github_actions',
        triggers: ['push', 'pull_request'],
        runs: ['npm ci', 'npm test'],
      }),
    ]);
    // Enforced: the workflow runs `npm test`, and the test script runs vitest.
    expect(knowledge.content.tooling.test_runners).toEqual([
      {
        name: 'vitest',
        config: null,
        source: 'package.json#devDependencies.vitest',
        enforced_in: ['package.json#scripts.test'],
      },
    ]);
    const one = await t.app.inject({ method: 'GET', url: `/api/v1/repo-knowledge/${knowledge.id}`, headers });
    expect(one.json()).toEqual(knowledge);
    const other = await t.app.inject({ method: 'GET', url: '/api/v1/repo-knowledge/rkn_nope', headers });
    expect(other.statusCode).toBe(404);
  });

  it('makes plans of the plan documents already on the default branch, once', async () => {
    makeRepo(reposDir, 'acme/planned', {
      'README.md': '# planned\n',
      'docs/plans/search.md': '# Search\n\nAdd search.\n',
      'prds/export.markdown': '# Export\n\nAdd export.\n',
      'docs/notes.md': '# Not a plan\n',
    });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: {
        name: 'planned',
        repository: { full_name: 'acme/planned', installation_id: 1 },
        setup: true,
      },
    });
    const projectId = created.json().project.id;
    const headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const first = await waitForTerminal(created.json().setup.task.id, projectId);
    expect(first.status).toBe('completed');
    const plans = async () =>
      (await t.app.inject({ method: 'GET', url: '/api/v1/plans', headers })).json().data as {
        id: string;
        repo_artifact_path: string;
      }[];
    const made = await plans();
    expect(made.map((p) => p.repo_artifact_path).sort()).toEqual([
      'docs/plans/search.md',
      'prds/export.markdown',
    ]);
    const evidence = await t.app.inject({
      method: 'GET',
      url: `/api/v1/projects/${projectId}/setup`,
      headers,
    });
    expect(evidence.json().evidence.plan_documents).toEqual(['docs/plans/search.md', 'prds/export.markdown']);

    // A second setup finds the same documents and makes no second plan of either.
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/setup`, headers });
    expect((await waitForTerminal(again.json().task.id, projectId)).status).toBe('completed');
    expect((await plans()).map((p) => p.id).sort()).toEqual(made.map((p) => p.id).sort());
  });

  it('says setup has not run before it is started, and starts it on POST', async () => {
    makeRepo(reposDir, 'acme/empty-ish', { 'README.md': '# hi\n' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: { name: 'empty-ish', repository: { full_name: 'acme/empty-ish', installation_id: 1 } },
    });
    const projectId = created.json().project.id;
    expect(created.json().setup).toBeUndefined();
    const before = await t.app.inject({
      method: 'GET',
      url: `/api/v1/projects/${projectId}/setup`,
      headers: bearer(t.workspaceKey),
    });
    expect(before.json()).toMatchObject({ status: 'not_started', task_id: null });
    expect(before.json().missing[0].code).toBe('setup_not_run');
    const start = await t.app.inject({
      method: 'POST',
      url: `/api/v1/projects/${projectId}/setup`,
      headers: bearer(t.workspaceKey),
    });
    expect(start.statusCode).toBe(202);
    const status = await waitForTerminal(start.json().task.id, projectId);
    expect(status.status).toBe('completed');
    expect(status.seed_graph.gaps.map((g: { code: string }) => g.code)).toContain('no_manifest_found');
  });

  it('fails by name when the repository cannot be read', async () => {
    // A repository with no commits: it exists, but setup has nothing to read.
    const dir = join(reposDir, 'acme/unborn');
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: { name: 'unborn', repository: { full_name: 'acme/unborn', installation_id: 1 }, setup: true },
    });
    expect(created.statusCode).toBe(201);
    const status = await waitForTerminal(created.json().setup.task.id, created.json().project.id);
    expect(status.status).toBe('failed');
    expect(status.error_json).toMatchObject({
      code: 'tool_failed',
      message: expect.stringMatching(/no commits/),
    });
    const messages = await t.app.inject({
      method: 'GET',
      url: `/api/v1/tasks/${created.json().setup.task.id}/messages`,
      headers: { ...bearer(t.workspaceKey), 'project-id': created.json().project.id },
    });
    expect(JSON.stringify(messages.json())).toMatch(/tool_failed/);
  });
});
