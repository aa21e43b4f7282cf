/**
 * A review through the service runs version-dependent rules on the runtime versions in the
 * project's repository knowledge (here derived on first review from pyproject.toml): the same
 * change is reported where requires-python starts at 3.12 and left alone where it allows 3.9.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

const CLOCK = 'from datetime import datetime\n\ndef stamp():\n    return datetime.utcnow()\n';
const pyproject = (requires: string) => `[project]\nname = "app"\nrequires-python = "${requires}"\n`;

interface ReviewBody {
  run?: { status: string };
  findings: { rule: string; line: number; body: string }[];
}

describe('runtime versions from the repository knowledge in a review', () => {
  let t: TestApp;
  let worker: Worker;
  const reposDir = makeReposDir();
  const ranges = new Map<string, { base: string; head: string }>();

  beforeAll(async () => {
    for (const [name, requires] of [
      ['acme/py312', '>=3.12'],
      ['acme/py39', '>=3.9,<4'],
    ] as const) {
      const repo = makeRepo(reposDir, name, { 'pyproject.toml': pyproject(requires) });
      const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
      ranges.set(name, { base, head: commitFiles(repo, { 'app/clock.py': CLOCK }) });
    }
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  async function review(name: string): Promise<ReviewBody> {
    const headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, name) };
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { ...ranges.get(name), reviewers: ['correctness'] },
    });
    expect(res.statusCode).toBe(202);
    let body: ReviewBody = { findings: [] };
    for (let i = 0; i < 300 && !['completed', 'failed'].includes(body.run?.status ?? ''); i++) {
      await new Promise((r) => setTimeout(r, 50));
      body = (await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${res.json().id}`, headers })).json();
    }
    expect(body.run?.status).toBe('completed');
    return body;
  }

  it('reports where the lowest declared version is in the rule`s range', async () => {
    const body = await review('acme/py312');
    expect(body.findings.map((f) => [f.rule, f.line])).toEqual([['correctness/deprecated-utcnow', 4]]);
    expect(body.findings[0]?.body).toContain(
      'the repository targets python `>=3.12` (pyproject.toml#project.requires-python)',
    );
  });

  it('stays quiet where the declared range still allows an older version', async () => {
    expect((await review('acme/py39')).findings).toEqual([]);
  });
});
