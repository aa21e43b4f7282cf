/**
 * The LLM reviewer engine against a local OpenAI-compatible server (test/helpers/openai-double.ts),
 * through the real AI SDK providers: @ai-sdk/openai (baseURL pointed at the double) and
 * @ai-sdk/openai-compatible. No global is patched; the engine takes env and fetch.
 */
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LlmReviewerOptions, runLlmReviewer } from '../../../src/reviewers/llm/engine';
import type { ReviewerResult } from '../../../src/reviewers/types';
import { type Answer, answers, type OpenAIDouble, startOpenAIDouble } from '../../helpers/openai-double';
import { addedFile, appFile, file, hunk, reviewInput } from './diff-fixtures';
import { failure } from './run-failure';

let double: OpenAIDouble;
let expectRejections = false;

beforeEach(async () => {
  double = await startOpenAIDouble({ apiKey: 'sk-test', models: ['gpt-4o-mini', 'llama3.1'] });
  expectRejections = false;
});
afterEach(async () => {
  // Every request the engine sent was one the real API accepts.
  if (!expectRejections) expect(double.rejections).toEqual([]);
  await double.close();
});

const env = () => ({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: double.baseURL,
  SVC_LLM_COMPAT_URL: double.baseURL,
  SVC_LLM_COMPAT_API_KEY: 'sk-test',
  SVC_LLM_COMPAT_NAME: 'ollama',
});

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };

function review(overrides: Partial<LlmReviewerOptions> = {}): Promise<ReviewerResult> {
  return runLlmReviewer({
    reviewerId: 'bug-hunter',
    instructions: 'Hunt for bugs. Flag eval.',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input: reviewInput([appFile()]),
    env: env(),
    retry: FAST_RETRY,
    ...overrides,
  });
}

const finding = (over: Record<string, unknown> = {}) => ({
  severity: 'P0',
  path: 'src/app.ts',
  line: 10,
  end_line: null,
  title: 'eval of user input',
  body: 'Never eval input.',
  category: 'security',
  suggestion: null,
  ...over,
});

describe.each([
  ['openai', '@ai-sdk/openai (chat completions)'],
  ['ollama', '@ai-sdk/openai-compatible'],
])('through provider %s (%s)', (provider) => {
  it('returns validated findings snapped to changed lines', async () => {
    double.enqueue(
      answers.findings([
        finding({ line: 9, end_line: 40, suggestion: 'const y = JSON.parse(input);', category: 'Security ' }),
        finding({
          line: 20,
          end_line: 20,
          severity: 'P2',
          title: 'rename',
          category: 'style',
          suggestion: '  renewed();',
        }),
      ]),
    );
    const result = await review({ provider, model: provider === 'openai' ? 'gpt-4o-mini' : 'llama3.1' });
    expect(result.findings).toEqual([
      {
        severity: 'P0',
        path: 'src/app.ts',
        line: 10, // 9 is context: snapped to the nearest added line
        endLine: 13, // clamped to the end of its hunk
        title: 'eval of user input',
        body: 'Never eval input.',
        rule: 'llm/security',
        category: 'security',
        reviewer: 'bug-hunter',
        suggestion: undefined, // the finding moved: its suggestion would replace the wrong lines
      },
      {
        severity: 'P2',
        path: 'src/app.ts',
        line: 20,
        endLine: 20,
        title: 'rename',
        body: 'Never eval input.',
        rule: 'llm/style',
        category: 'style',
        reviewer: 'bug-hunter',
        suggestion: '  renewed();',
      },
    ]);
    expect(result.gaps).toEqual([]);
    expect(result.backend).toEqual({
      harness: 'llm',
      provider,
      model: provider === 'openai' ? 'gpt-4o-mini' : 'llama3.1',
    });

    const [request] = double.requests;
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    const chat = double.chatRequests()[0];
    expect(chat?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'review_findings', strict: true },
    });
    expect(chat?.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });
});

describe('runLlmReviewer', () => {
  it('puts the instructions, guidance, learnings and numbered hunks in the prompt', async () => {
    double.enqueue(answers.findings([]));
    const result = await review({
      input: reviewInput([appFile()], {
        guidance: 'We use Result types, never exceptions.',
        learnings: ['The billing module is frozen.', 'Tests live next to the code.'],
      }),
    });
    expect(result.findings).toEqual([]);
    const [system, user] = double.chatRequests()[0]?.messages ?? [];
    expect(system?.content).toContain('Hunt for bugs. Flag eval.');
    expect(system?.content).toContain('We use Result types, never exceptions.');
    expect(system?.content).toContain('- The billing module is frozen.');
    expect(user?.content).toContain('=== FILE src/app.ts (modified) ===');
    expect(user?.content).toContain('    10 + const y = eval(input);');
    expect(user?.content).toContain('    20 +   fresh();');
  });

  it('drops findings on files outside the diff or without added lines, counting them in gaps', async () => {
    const onlyRemovals = file('src/trim.ts', [hunk(1, 1, [' keep', '-drop'])]);
    double.enqueue(
      answers.findings([
        finding(),
        finding({ path: 'src/elsewhere.ts' }),
        finding({ path: 'README.md' }),
        finding({ path: 'src/trim.ts', line: 1 }),
        finding({ path: './src/app.ts', line: 11 }),
      ]),
    );
    const result = await review({ input: reviewInput([appFile(), onlyRemovals]) });
    expect(result.findings.map((f) => [f.path, f.line])).toEqual([
      ['src/app.ts', 10],
      ['src/app.ts', 11],
    ]);
    expect(result.gaps).toEqual([
      {
        code: 'llm_findings_outside_diff',
        message:
          '2 finding(s) named files that are not in the diff (src/elsewhere.ts, README.md) and were dropped',
      },
      {
        code: 'llm_findings_unanchored',
        message: '1 finding(s) pointed at files with no added lines and were dropped',
      },
    ]);
  });

  it('splits a large diff into requests that each fit the window, and keeps every finding', async () => {
    const files = Array.from({ length: 8 }, (_, i) => addedFile(`src/mod${i}.ts`, 120));
    files.push(addedFile('src/huge.ts', 900));
    const maxContextTokens = 8000;
    double.fallback = (request) => {
      const user = request.messages[1];
      const text = typeof user?.content === 'string' ? user.content : '';
      // One finding per file header seen, on that part's first added line.
      const found = [...text.matchAll(/=== FILE (\S+) [^\n]*\n@@[^\n]*\n\s*(\d+) \+/g)].map((m) =>
        finding({ path: m[1], line: Number(m[2]), severity: 'P2' }),
      );
      return answers.findings(found);
    };
    const result = await review({ input: reviewInput(files), maxContextTokens });
    const chats = double.chatRequests();
    expect(chats.length).toBeGreaterThan(3);
    for (const chat of chats) {
      const promptTokens = Math.ceil(JSON.stringify(chat.messages).length / 4);
      const schemaTokens = Math.ceil(JSON.stringify(chat.response_format).length / 4);
      expect(promptTokens + schemaTokens + (chat.max_tokens ?? 0)).toBeLessThanOrEqual(maxContextTokens);
    }
    // Every file was sent, the huge one in parts, and every part's finding came back.
    const sentParts = chats.flatMap((c) => {
      const user = c.messages[1];
      return [...String(user?.content).matchAll(/=== FILE (\S+) /g)].map((m) => m[1]);
    });
    expect(new Set(sentParts)).toEqual(new Set(files.map((f) => f.path)));
    expect(sentParts.filter((p) => p === 'src/huge.ts').length).toBeGreaterThan(1);
    expect(result.findings).toHaveLength(sentParts.length);
    expect(result.usage).toHaveLength(chats.length * 2);
    expect(String(chats[0]?.messages[1]?.content)).toMatch(/^Review part 1 of \d+ of the diff/);
  });

  it('records usage per call and prices a priced model', async () => {
    double.enqueue(answers.findings([], { prompt_tokens: 1000, completion_tokens: 200 }));
    const result = await review();
    expect(result.usage).toEqual([
      {
        kind: 'llm',
        description: 'openai/gpt-4o-mini call 1/1 input tokens',
        quantity: 1000,
        unit: 'input_tokens',
        cost_usd: 0.00015,
      },
      {
        kind: 'llm',
        description: 'openai/gpt-4o-mini call 1/1 output tokens',
        quantity: 200,
        unit: 'output_tokens',
        cost_usd: 0.00012,
      },
    ]);
  });

  it('leaves the cost of an unpriced model null, never 0', async () => {
    double.enqueue(answers.findings([], { prompt_tokens: 900, completion_tokens: 50 }));
    const result = await review({ provider: 'ollama', model: 'llama3.1' });
    expect(result.usage.map((u) => [u.unit, u.quantity, u.cost_usd])).toEqual([
      ['input_tokens', 900, null],
      ['output_tokens', 50, null],
    ]);
  });

  it('estimates tokens, unpriced, when the provider reports no usage', async () => {
    double.enqueue(answers.content('{"findings":[]}', { usage: null }));
    const result = await review();
    expect(result.usage[0]?.description).toContain('estimated');
    expect(result.usage[0]?.quantity).toBeGreaterThan(100);
    expect(result.usage.map((u) => u.cost_usd)).toEqual([null, null]);
  });

  it('sends no Authorization to a compatible endpoint without a key', async () => {
    const open = await startOpenAIDouble({ requireAuth: false });
    try {
      open.enqueue(answers.findings([]));
      const result = await review({
        provider: 'compat',
        model: 'llama3.1',
        env: { SVC_LLM_COMPAT_URL: open.baseURL },
      });
      expect(result.findings).toEqual([]);
      expect(open.requests[0]?.headers.authorization).toBeUndefined();
      expect(open.rejections).toEqual([]);
    } finally {
      await open.close();
    }
  });

  it('answers a diff with nothing to review without calling the model, by a named gap', async () => {
    const result = await review({
      input: reviewInput([file('src/trim.ts', [hunk(1, 1, [' keep', '-drop'])])]),
    });
    expect(result.findings).toEqual([]);
    expect(result.gaps.map((g) => g.code)).toEqual(['llm_nothing_to_review']);
    expect(double.requests).toHaveLength(0);
  });
});

describe('provider failures, by name', () => {
  const cases: [string, Answer[], string, number][] = [
    ['401', [answers.unauthorized()], 'provider_auth_failed', 1],
    ['404 model_not_found', [answers.modelNotFound('gpt-4o-mini')], 'model_not_available', 1],
    ['400 context too long', [answers.contextTooLong()], 'provider_terminal', 1],
    [
      '500, three times',
      [answers.serverError(), answers.serverError(), answers.serverError(503)],
      'provider_transient',
      3,
    ],
    [
      'malformed JSON',
      [answers.content('{"findings": [ {"severity": "P0", ')],
      'payload_contract_violation',
      1,
    ],
    [
      'JSON outside the schema',
      [answers.content('{"findings":[{"severity":"P9","path":"a"}]}')],
      'payload_contract_violation',
      1,
    ],
    ['an empty answer', [answers.content('')], 'payload_contract_violation', 1],
    [
      'a refusal',
      [answers.content(null, { refusal: 'I cannot help with that.' })],
      'payload_contract_violation',
      1,
    ],
    [
      'an answer cut off at the token limit',
      [answers.content('{"findings":[{"severity":"P1"', { finishReason: 'length' })],
      'payload_contract_violation',
      1,
    ],
    [
      'a 200 whose body is not a chat completion',
      [{ kind: 'raw', status: 200, body: '<html>proxy</html>' }],
      'provider_terminal',
      1,
    ],
  ];

  it.each(cases)('%s → %s', async (_name, queued, code, requests) => {
    double.enqueue(...queued);
    const error = await failure(review());
    expect(error.code).toBe(code);
    expect(error.details).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', chunk: 1, chunks: 1 });
    expect(double.requests).toHaveLength(requests);
  });

  it('keeps the usage of a paid call whose answer broke the contract', async () => {
    double.enqueue(answers.content('not json', { usage: { prompt_tokens: 500, completion_tokens: 3 } }));
    const error = await failure(review());
    expect(error.code).toBe('payload_contract_violation');
    const usage = (error.details?.usage ?? []) as { quantity: number }[];
    expect(usage.map((u) => u.quantity)).toEqual([500, 3]);
  });

  it('names the model a server does not serve', async () => {
    expectRejections = true; // the double refuses the unknown model as the API would
    const error = await failure(review({ model: 'gpt-5-imaginary' }));
    expect(error.code).toBe('model_not_available');
    expect(error.message).toContain("model 'gpt-5-imaginary' is not available at provider 'openai'");
  });

  it('names a base URL without /v1 as a model that is not available, with a hint', async () => {
    expectRejections = true;
    const root = double.baseURL.replace(/\/v1$/, '');
    const error = await failure(review({ env: { ...env(), OPENAI_BASE_URL: root } }));
    expect(error.code).toBe('model_not_available');
    expect(error.message).toContain(`check the model id and that ${root}/chat/completions is the API's URL`);
  });

  it('names refused credentials and the variable to fix', async () => {
    expectRejections = true;
    const error = await failure(review({ env: { ...env(), OPENAI_API_KEY: 'sk-wrong' } }));
    expect(error.code).toBe('provider_auth_failed');
    expect(error.message).toContain('OPENAI_API_KEY');
  });

  it('fails a 429 at once with its retry-after, without hammering', async () => {
    double.enqueue(answers.rateLimited(30));
    const error = await failure(review());
    expect(error.code).toBe('provider_rate_limited');
    expect(error.details).toMatchObject({ retry_after_s: 30, status: 429, attempts: 1 });
    expect(double.requests).toHaveLength(1);
  });

  it('retries a 429 once when the wait asked for is short, and never twice', async () => {
    double.enqueue(answers.rateLimited(0), answers.findings([finding()]));
    expect((await review()).findings).toHaveLength(1);
    expect(double.requests).toHaveLength(2);

    double.enqueue(answers.rateLimited(0), answers.rateLimited(0), answers.findings([]));
    const error = await failure(review());
    expect(error.code).toBe('provider_rate_limited');
    expect(double.requests).toHaveLength(4);
  });

  it('retries a transient failure and succeeds', async () => {
    double.enqueue(answers.serverError(502), answers.findings([finding()]));
    const result = await review();
    expect(result.findings).toHaveLength(1);
    expect(double.requests).toHaveLength(2);
  });

  it('fails a call whose model sends nothing within its time limit as instruction_timeout', async () => {
    double.enqueue(answers.delay(5000, answers.findings([])));
    const started = Date.now();
    const error = await failure(
      review({ callTimeoutMs: 200, retry: { ...FAST_RETRY, transientRetries: 0 } }),
    );
    expect(error.code).toBe('instruction_timeout');
    expect(error.details).toMatchObject({ timeout_ms: 200, received_chars: 0 });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('fails a refused connection as transient, after its retries', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const error = await failure(
      review({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } }),
    );
    expect(error.code).toBe('provider_transient');
    expect(error.details).toMatchObject({ attempts: 3 });
  });

  it('fails by name before any request when the provider is not configured', async () => {
    const error = await failure(review({ env: {} }));
    expect(error.code).toBe('provider_auth_failed');
    expect(error.message).toContain('OPENAI_API_KEY');
    const compat = await failure(review({ provider: 'ollama', env: {} }));
    expect(compat.code).toBe('model_not_available');
    expect(double.requests).toHaveLength(0);
  });
});

describe('abort', () => {
  it('stops a call in flight with the abort reason', async () => {
    double.enqueue(answers.delay(5000, answers.findings([])));
    const controller = new AbortController();
    const reason = new Error('run canceled');
    const started = Date.now();
    const pending = review({ input: reviewInput([appFile()], { signal: controller.signal }) });
    setTimeout(() => controller.abort(reason), 100);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(double.requests).toHaveLength(1);
  });

  it('stops a retry wait, and sends nothing when already aborted', async () => {
    double.enqueue(answers.serverError());
    const controller = new AbortController();
    const pending = review({
      input: reviewInput([appFile()], { signal: controller.signal }),
      retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 },
    });
    setTimeout(() => controller.abort(new Error('stop')), 200);
    await expect(pending).rejects.toThrow('stop');
    expect(double.requests).toHaveLength(1);

    const aborted = AbortSignal.abort(new Error('already'));
    await expect(review({ input: reviewInput([appFile()], { signal: aborted }) })).rejects.toThrow('already');
    expect(double.requests).toHaveLength(1);
  });
});
