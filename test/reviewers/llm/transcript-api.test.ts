/**
 * A model reviewer's run as the API shows it, on a real git repository, a real worker and the
 * OpenAI double streaming its answers: the transcript (`GET /tasks/{id}/messages`) carries the
 * prompts, the answer and, for a failed run, a note naming the code and its remedy, all with
 * secrets redacted; the status read's `first_token_at` is the streamed answer's first token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FAILURE_REMEDY } from '../../../src/core/failures';
import { Worker } from '../../../src/engine/worker';
import { bearer, createProject, createTestApp, type TestApp } from '../../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../../helpers/git';
import { answers, type OpenAIDouble, startOpenAIDouble } from '../../helpers/openai-double';

// An OpenAI key in the shape secretlint detects, assembled here so no key sits in the source.
const COMMITTED_KEY = `sk-${'Q1w2E3r4T5'.repeat(2)}${'T3Blbk'}FJ${'y6U7i8O9p0'.repeat(2)}`;
const PROVIDER_KEY = 'svc-compat-provider-token-31337';
const TIMEOUT_MS = 1500;

const CHANGE = [
  'export function run(req) {',
  `  const client = new Client("${COMMITTED_KEY}");`,
  '  return eval(req.query.code);',
  '}',
  '',
].join('\n');

const FINDING = {
  severity: 'P0',
  path: 'src/run.js',
  line: 3,
  end_line: null,
  title: 'eval of request input',
  body: `The key ${COMMITTED_KEY} is committed and the query reaches eval.`,
  category: 'security',
  suggestion: null,
};

describe('a model reviewer run over the API', () => {
  let t: TestApp;
  let worker: Worker;
  let double: OpenAIDouble;
  let headers: Record<string, string>;
  let base: string;
  let head: string;

  beforeAll(async () => {
    double = await startOpenAIDouble({ apiKey: PROVIDER_KEY });
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'README.md': '# shop\n' });
    base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    head = commitFiles(repo, { 'src/run.js': CHANGE }, 'add run');
    t = await createTestApp({
      reposDir,
      env: {
        SVC_POLL_MS: '50',
        SVC_LLM_COMPAT_URL: double.baseURL,
        SVC_LLM_COMPAT_API_KEY: PROVIDER_KEY,
        SVC_LLM_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    const projectId = await createProject(t, 'acme/shop');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  async function reviewToEnd(): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { base, head, reviewers: ['general@compat/llama3.1'] },
    });
    expect(res.statusCode).toBe(202);
    const id = res.json().id as string;
    for (let i = 0; i < 600; i++) {
      const read = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${id}`, headers });
      if (['completed', 'failed', 'canceled'].includes(read.json().run?.status)) return id;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`review ${id} did not finish`);
  }

  async function transcriptOf(id: string) {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/messages?limit=100`, headers });
    expect(res.statusCode).toBe(200);
    return res.json().data as { role: string; content: string; data: Record<string, unknown> | null }[];
  }

  async function statusOf(id: string) {
    return (await t.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/status`, headers })).json();
  }

  it('writes the prompt, the answer and the first token, with secrets redacted', async () => {
    double.enqueue(answers.findings([FINDING]));
    const id = await reviewToEnd();
    const status = await statusOf(id);
    expect(status.status).toBe('completed');

    const messages = await transcriptOf(id);
    const roles = messages.map((m) => m.role);
    expect(roles.slice(roles.indexOf('system'))).toEqual(['system', 'user', 'assistant', 'note']);
    const byRole = (role: string) => messages.find((m) => m.role === role);
    expect(byRole('system')?.content).toContain('You are a code reviewer.');
    expect(byRole('system')?.data).toMatchObject({
      reviewer: 'general',
      provider: 'compat',
      model: 'llama3.1',
    });
    expect(byRole('user')?.content).toContain('eval(req.query.code)');
    expect(byRole('user')?.content).toContain('new Client("[REDACTED]")');
    expect(byRole('assistant')?.content).toContain('eval of request input');
    expect(byRole('assistant')?.content).toContain('The key [REDACTED] is committed');
    // The model was sent the diff as it is; the transcript keeps neither it nor svc's provider key.
    expect(JSON.stringify(double.chatRequests().at(-1)?.messages)).toContain(COMMITTED_KEY);
    const all = JSON.stringify(messages);
    expect(all).not.toContain(COMMITTED_KEY);
    expect(all).not.toContain(PROVIDER_KEY);

    // first_token_at: set by the streamed answer, between the run's start and its end.
    const clock = status.lifecycle;
    expect(clock.first_token_at).not.toBeNull();
    const at = (s: string) => new Date(s).getTime();
    expect(at(clock.first_token_at)).toBeGreaterThanOrEqual(at(clock.started_at));
    expect(at(clock.first_token_at)).toBeLessThanOrEqual(at(clock.finished_at));
    expect(status.runner_clock.first_token_at).not.toBeNull();
  });

  it.each([
    [
      'instruction_timeout',
      'the model stays silent past SVC_LLM_TIMEOUT_MS',
      () => answers.delay(TIMEOUT_MS * 4, answers.findings([])),
    ],
    [
      'stream_transport_failed',
      'the connection breaks mid-answer',
      () => answers.brokenStream(JSON.stringify({ findings: [FINDING] }), 40),
    ],
  ])(
    'fails %s when %s, and the transcript names the code and its remedy',
    async (code, _when, answer) => {
      // Three attempts: the first and two retries.
      double.enqueue(answer(), answer(), answer());
      const id = await reviewToEnd();
      const status = await statusOf(id);
      expect(status.status).toBe('failed');
      expect(status.error_json.code).toBe(code);
      expect(status.error_json).toMatchObject({ provider: 'compat', model: 'llama3.1', attempts: 3 });

      const messages = await transcriptOf(id);
      const note = messages.at(-1);
      expect(note?.role).toBe('note');
      expect(note?.content).toContain(`Run failed with ${code}`);
      expect(note?.content).toContain(RUN_FAILURE_REMEDY[code as keyof typeof RUN_FAILURE_REMEDY]);
      expect(note?.data).toMatchObject({
        code,
        remedy: RUN_FAILURE_REMEDY[code as keyof typeof RUN_FAILURE_REMEDY],
      });
      // Each attempt's answer is on the transcript, as far as it arrived.
      const attempts = messages.filter((m) => m.role === 'assistant').map((m) => m.data?.attempt);
      expect(attempts).toEqual([1, 2, 3]);
      expect(JSON.stringify(messages)).not.toContain(COMMITTED_KEY);
    },
    30_000,
  );
});
