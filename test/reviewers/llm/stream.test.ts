/**
 * The LLM engine's streamed calls against the OpenAI double streaming real server-sent events:
 * silence past the time limit (`instruction_timeout`), a connection that breaks mid-answer
 * (`stream_transport_failed`), and the transcript a reviewer writes (prompts, answers, first
 * token), redacted of secrets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LlmReviewerOptions, runLlmReviewer } from '../../../src/reviewers/llm/engine';
import type { ReviewerResult } from '../../../src/reviewers/types';
import { answers, type OpenAIDouble, startOpenAIDouble } from '../../helpers/openai-double';
import { file, hunk, reviewInput } from './diff-fixtures';
import { recordingTranscript } from './recording-transcript';
import { failure } from './run-failure';

let double: OpenAIDouble;

beforeEach(async () => {
  double = await startOpenAIDouble({ apiKey: 'sk-test-key-of-svc', models: ['gpt-4o-mini'] });
});
afterEach(async () => {
  expect(double.rejections).toEqual([]);
  await double.close();
});

const env = () => ({ OPENAI_API_KEY: 'sk-test-key-of-svc', OPENAI_BASE_URL: double.baseURL });
const NO_RETRY = { baseDelayMs: 1, maxDelayMs: 5, transientRetries: 0 };

const diffFile = (lines: string[]) => file('src/app.ts', [hunk(1, 1, [' import x;', ...lines])]);

function review(overrides: Partial<LlmReviewerOptions> = {}): Promise<ReviewerResult> {
  return runLlmReviewer({
    reviewerId: 'bug-hunter',
    instructions: 'Hunt for bugs.',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input: reviewInput([diffFile(['+const y = eval(input);'])]),
    env: env(),
    retry: NO_RETRY,
    ...overrides,
  });
}

const ANSWER = JSON.stringify({
  findings: [
    {
      severity: 'P0',
      path: 'src/app.ts',
      line: 2,
      end_line: null,
      title: 'eval of input',
      body: 'Never eval input.',
      category: 'security',
      suggestion: null,
    },
  ],
});

describe('streamed calls', () => {
  /** A first call pays the SDK's lazy loading, which would count as silence on a busy machine. */
  async function warm() {
    double.enqueue(answers.findings([]));
    await review();
  }

  it('streams the request, and a slow model that keeps sending is not cut off', async () => {
    await warm();
    // 500 ms of silence before the first token and 500 ms mid-answer: each under the 800 ms
    // limit, together over it. The limit is on silence, not on the whole answer.
    double.enqueue(answers.delay(500, answers.stalledStream(ANSWER, 20, 500)));
    const started = Date.now();
    const result = await review({ callTimeoutMs: 800 });
    expect(Date.now() - started).toBeGreaterThan(800);
    expect(result.findings.map((f) => f.title)).toEqual(['eval of input']);
    expect(double.chatRequests()[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    // Usage arrives at the stream's end and is counted once.
    expect(result.usage.map((u) => u.unit)).toEqual(['input_tokens', 'output_tokens']);
  });

  it('fails instruction_timeout when the model goes silent mid-answer past the limit', async () => {
    await warm();
    double.enqueue(answers.stalledStream(ANSWER, 20, 3000));
    const started = Date.now();
    const error = await failure(review({ callTimeoutMs: 300 }));
    expect(error.code).toBe('instruction_timeout');
    expect(error.message).toContain('went silent for 300 ms after');
    expect((error.details?.received_chars as number) >= 20).toBe(true);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('takes the time limit from SVC_LLM_TIMEOUT_MS, and retries a timeout before failing', async () => {
    double.enqueue(answers.delay(3000, answers.findings([])), answers.delay(3000, answers.findings([])));
    const error = await failure(
      review({ env: { ...env(), SVC_LLM_TIMEOUT_MS: '200' }, retry: { ...NO_RETRY, transientRetries: 1 } }),
    );
    expect(error.code).toBe('instruction_timeout');
    expect(error.details).toMatchObject({ timeout_ms: 200, received_chars: 0, attempts: 2 });
    expect(double.requests).toHaveLength(2);
  });

  it('refuses an SVC_LLM_TIMEOUT_MS that is not a positive number, by name', async () => {
    await expect(review({ env: { ...env(), SVC_LLM_TIMEOUT_MS: 'soon' } })).rejects.toThrow(
      'SVC_LLM_TIMEOUT_MS must be a positive number',
    );
    expect(double.requests).toHaveLength(0);
  });

  it('fails stream_transport_failed when the connection breaks mid-answer', async () => {
    double.enqueue(answers.brokenStream(ANSWER, 30));
    const error = await failure(review());
    expect(error.code, error.message).toBe('stream_transport_failed');
    expect(error.message).toContain('the streamed answer broke off after');
    expect(error.details).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', attempts: 1 });
  });

  it('retries a broken stream and takes the next whole answer', async () => {
    double.enqueue(answers.brokenStream(ANSWER, 30), answers.content(ANSWER));
    const result = await review({ retry: { ...NO_RETRY, transientRetries: 1 } });
    expect(result.findings).toHaveLength(1);
    expect(double.requests).toHaveLength(2);
  });
});

describe('transcript', () => {
  // An OpenAI key in the shape secretlint detects, assembled here so no key sits in the source.
  const committedKey = `sk-${'a1B2c3D4e5'.repeat(2)}${'T3Blbk'}FJ${'z9Y8x7W6v5'.repeat(2)}`;

  it('writes the prompts, the answer and the first token, with secrets redacted', async () => {
    const { events, transcript } = recordingTranscript();
    double.enqueue(answers.content(ANSWER.replace('Never eval input.', `Leaked ${committedKey} here.`)));
    await review({
      input: reviewInput([diffFile([`+const key = "${committedKey}";`, '+const y = eval(input);'])], {
        transcript,
        guidance: 'Our provider key is sk-test-key-of-svc, keep it.',
      }),
    });
    expect(events.map((e) => e.role)).toEqual(['system', 'user', 'first-token', 'assistant']);
    const [system, user, , assistant] = events;
    expect(system?.content).toContain('Hunt for bugs.');
    expect(system?.data).toMatchObject({ reviewer: 'bug-hunter', provider: 'openai', model: 'gpt-4o-mini' });
    expect(user?.content).toContain('const y = eval(input);');
    expect(user?.data).toMatchObject({ chunk: 1, chunks: 1 });
    expect(assistant?.content).toContain('eval of input');
    expect(assistant?.data).toMatchObject({ attempt: 1, finish_reason: 'stop' });
    // The model saw the diff as it is; the transcript does not keep the secrets.
    expect(JSON.stringify(double.chatRequests()[0]?.messages)).toContain(committedKey);
    const written = JSON.stringify(events);
    expect(written).not.toContain(committedKey);
    expect(written).not.toContain('sk-test-key-of-svc');
    expect(user?.content).toContain('const key = "[REDACTED]";');
    expect(assistant?.content).toContain('Leaked [REDACTED] here.');
    expect(system?.content).toContain('Our provider key is [REDACTED], keep it.');
  });

  it('writes each attempt, also one that failed, as far as its answer arrived', async () => {
    const { events, transcript } = recordingTranscript();
    double.enqueue(answers.brokenStream(ANSWER, 30), answers.content(ANSWER));
    await review({
      input: reviewInput([diffFile(['+const y = eval(input);'])], { transcript }),
      retry: { ...NO_RETRY, transientRetries: 1 },
    });
    const assistants = events.filter((e) => e.role === 'assistant');
    expect(assistants.map((a) => a.data?.attempt)).toEqual([1, 2]);
    expect(assistants[0]?.content).toBe(ANSWER.slice(0, 30));
    expect(assistants[1]?.content).toBe(ANSWER);
    // The first token is the first of the run's answers, noted once by the engine per attempt that sent one.
    expect(events.findIndex((e) => e.role === 'first-token')).toBeLessThan(
      events.findIndex((e) => e.role === 'assistant'),
    );
  });
});
