/**
 * `kill -9` of an embedded-mode `svc serve` in the middle of a review, then a restart on the same
 * data directory, with real processes: the review's model reviewer waits on a provider double
 * that stalls its answer, so the run is certainly mid-flight when the process dies. The next
 * start takes the dead process's data-dir lock over, the killed run ends by name at once, without
 * waiting out its lease (`run_invocation_died`, never `unknown`, never left running), one
 * replacement run executes and
 * completes, and what was there before (the project, the keys, an earlier review and its
 * findings) reads the same.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';
import { freePort } from '../helpers/net';
import { answers, type OpenAIDouble, startOpenAIDouble } from '../helpers/openai-double';
import { apiClient, eventually, type SvcProcesses, svcProcesses } from '../helpers/svc-processes';

const KEY = 'svc_ws_embedded_kill_fault_test';
const UNSAFE = [
  'export function run(req) {',
  '  const code = req.query.code;',
  '  return eval(code);',
  '}',
  '',
].join('\n');

interface Run {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
  retry_of?: string | null;
}

describe('embedded mode: kill -9 mid-review, then a restart on the same data directory', () => {
  let procs: SvcProcesses;
  let double: OpenAIDouble;
  let dataDir: string;
  let reposDir: string;
  let port: number;
  let api: ReturnType<typeof apiClient>;
  let projectId: string;

  const project = () => ({ headers: { 'project-id': projectId } });
  const startServe = (): ChildProcess =>
    procs.start(['serve'], {
      DATABASE_URL: '',
      PORT: String(port),
      SVC_DATA_DIR: dataDir,
      SVC_REPOS_DIR: reposDir,
      SVC_BOOTSTRAP_KEY: KEY,
      SVC_LLM_COMPAT_URL: double.baseURL,
      SVC_LLM_COMPAT_API_KEY: 'test',
      // A lease far longer than the test: the restart must end the dead run because the lock
      // proves its process gone, not because its lease ran out.
      SVC_LEASE_MS: '600000',
      SVC_HEARTBEAT_MS: '300',
      SVC_POLL_MS: '200',
    });
  const healthy = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3_000) });
    await res.body?.cancel();
    return res.status === 200;
  };
  const taskRuns = async (taskId: string) =>
    ((await api('GET', `/api/v1/tasks/${taskId}/runs`, project())).body as { data: Run[] }).data;

  beforeAll(async () => {
    procs = svcProcesses();
    double = await startOpenAIDouble({ apiKey: null });
    dataDir = join(mkdtempSync(join(tmpdir(), 'svc-kill-')), 'data');
    reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(repo, 1, { 'src/run.js': UNSAFE }, 'add run');
    port = await freePort();
    api = apiClient(() => `http://127.0.0.1:${port}`, KEY);
  });

  afterAll(async () => {
    await procs?.killAll();
    await double?.close();
    if (dataDir) rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });

  it('ends the killed run by name, replaces it once, and keeps every earlier record', async () => {
    // How long each step took, printed at the end: a slow run says where its time went.
    const t0 = Date.now();
    const took: Record<string, number> = {};
    const mark = (step: string) => {
      took[step] = Date.now() - t0;
    };
    const first = startServe();
    // A first start runs initdb for the new data directory: seconds, or a minute on a busy machine.
    await eventually(healthy, 'the first serve to answer /healthz', 90_000, () => procs.tails());

    // Earlier data: a project, a second key, and a review that completed with findings.
    const created = await api('POST', '/api/v1/projects', {
      body: { name: 'shop', repository: { full_name: 'acme/shop', installation_id: 1 } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    projectId = (created.body as { project: { id: string } }).project.id;
    const minted = await api('POST', '/api/v1/keys', { body: { name: 'ci', kind: 'workspace' } });
    expect(minted.status).toBe(201);
    const ciKey = (minted.body as { secret: string }).secret;
    mark('first start');
    const earlier = await api('POST', '/api/v1/reviews', {
      ...project(),
      body: { pr: 1, reviewers: ['security'] },
    });
    expect(earlier.status).toBe(202);
    const earlierId = (earlier.body as { id: string }).id;
    const earlierReview = await eventually(
      async () => {
        const r = await api('GET', `/api/v1/reviews/${earlierId}`, project());
        const body = r.body as { run?: Run; findings?: unknown[] | null };
        return body.run?.status === 'completed' ? body : null;
      },
      'the earlier review to complete',
      30_000,
      () => procs.tails(),
    );
    expect(earlierReview.findings?.length).toBeGreaterThan(0);
    const keysBefore = (await api('GET', '/api/v1/keys')).body;
    mark('earlier review');

    // The review to kill: its model reviewer's call stalls until the process is gone.
    double.enqueue(answers.delay(120_000, answers.findings([])));
    double.fallback = () =>
      answers.findings([
        {
          severity: 'P1',
          path: 'src/run.js',
          line: 3,
          end_line: 3,
          title: 'eval of request input',
          body: 'The query string reaches eval; parse the value instead of evaluating it.',
          category: 'security',
          suggestion: null,
        },
      ]);
    const killed = await api('POST', '/api/v1/reviews', {
      ...project(),
      body: { pr: 1, reviewers: ['security', 'general@compat/llama3.1'] },
    });
    expect(killed.status).toBe(202);
    const { id: reviewId, run_id: killedRunId } = killed.body as { id: string; run_id: string };
    await eventually(
      async () => double.chatRequests().length >= 1,
      'the model reviewer to call the provider',
      30_000,
      () => procs.tails(),
    );
    expect((await taskRuns(reviewId)).map((r) => [r.id, r.status])).toEqual([[killedRunId, 'running']]);
    mark('review mid-run');
    first.kill('SIGKILL');
    await procs.exited(first);
    expect(first.signalCode).toBe('SIGKILL');

    // The same data directory, the same port: the dead process's lock is taken over at once.
    const second = startServe();
    await eventually(healthy, 'the restarted serve to answer /healthz', 40_000, () => procs.tails());
    mark('restart');
    expect(procs.output(second)).toMatch(/which no longer runs \(killed\?\); taking the lock over/);

    // The killed run ends by name and exactly one replacement executes and completes.
    const runs = await eventually(
      async () => {
        const list = await taskRuns(reviewId);
        return list.length >= 2 && list.every((r) => r.status !== 'pending' && r.status !== 'running')
          ? list
          : null;
      },
      'the killed run to end and its replacement to finish',
      40_000,
      () => `${JSON.stringify(procs.alive(second))}\n${procs.tails()}`,
    );
    mark('replacement done');
    const dead = runs.find((r) => r.id === killedRunId);
    expect(dead).toMatchObject({ status: 'failed', error: { code: 'run_invocation_died' } });
    expect(runs, JSON.stringify(runs)).toHaveLength(2);
    const replacement = runs.find((r) => r.id !== killedRunId) as Run;
    expect(replacement.status, JSON.stringify(replacement.error)).toBe('completed');
    const review = (await api('GET', `/api/v1/reviews/${reviewId}`, project())).body as {
      run: Run;
      findings: { reviewers: string[]; path: string }[];
    };
    expect(review.run.id).toBe(replacement.id);
    expect(review.findings.some((f) => f.path === 'src/run.js' && f.reviewers.includes('general'))).toBe(
      true,
    );
    // The provider was asked once by the killed run and once by its replacement, no more.
    expect(double.chatRequests()).toHaveLength(2);
    expect(double.rejections).toEqual([]);

    // Earlier data reads the same: the project, the keys (the minted one still works), the
    // earlier review and its findings.
    expect((await api('GET', `/api/v1/projects/${projectId}`)).status).toBe(200);
    expect((await api('GET', '/api/v1/keys')).body).toEqual(keysBefore);
    const withCiKey = await apiClient(() => `http://127.0.0.1:${port}`, ciKey)('GET', '/api/v1/projects');
    expect(withCiKey.status).toBe(200);
    const earlierAfter = (await api('GET', `/api/v1/reviews/${earlierId}`, project()))
      .body as typeof earlierReview;
    expect(earlierAfter.run).toEqual(earlierReview.run);
    expect(earlierAfter.findings?.map((f) => (f as { id: string }).id)).toEqual(
      earlierReview.findings?.map((f) => (f as { id: string }).id),
    );
    expect(procs.alive(second)).toBe(true);
    console.info(`embedded kill -9, ms since the first start began: ${JSON.stringify(took)}`);
  }, 240_000);
});
