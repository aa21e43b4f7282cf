/**
 * The Anthropic provider, against the Messages API double (test/helpers/anthropic-double.ts):
 * the double refuses what the real API refuses, in the API's error shape; and svc's model
 * reviewer, configured as a user configures it (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), streams
 * its answer through @ai-sdk/anthropic, notes the first token, writes a redacted transcript and
 * names each failure. Two models, because the SDK asks them for JSON two ways: claude-sonnet-4-0
 * through a forced `json` tool (the answer streams as input_json_delta), claude-sonnet-4-5
 * through `output_config.format` (the answer streams as text_delta).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LlmReviewerOptions, runLlmReviewer } from '../../../src/reviewers/llm/engine';
import type { ReviewerResult } from '../../../src/reviewers/types';
import { type AnthropicDouble, answers, startAnthropicDouble } from '../../helpers/anthropic-double';
import { file, hunk, reviewInput } from './diff-fixtures';
import { recordingTranscript } from './recording-transcript';
import { failure } from './run-failure';

const KEY = 'sk-ant-test-key-of-svc';
const MODELS = ['claude-sonnet-4-0', 'claude-sonnet-4-5'];

describe('Anthropic double: request validation', () => {
  let double: AnthropicDouble;
  beforeAll(async () => {
    double = await startAnthropicDouble({ apiKey: KEY, models: MODELS });
  });
  afterAll(async () => {
    await double.close();
  });

  const valid = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You review code.' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Review this.' }] }],
  };
  const jsonTool = {
    name: 'json',
    description: 'Respond with a JSON object.',
    input_schema: { type: 'object', properties: { findings: { type: 'array' } }, required: ['findings'] },
  };

  function post(body: unknown, headers: Record<string, string | null> = {}) {
    const all: Record<string, string | null> = {
      'x-api-key': KEY,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      ...headers,
    };
    return fetch(`${double.baseURL}/messages`, {
      method: 'POST',
      headers: Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null)),
      body: JSON.stringify(body),
    });
  }

  /** The fields of the stream's events that these tests read. */
  interface StreamEvent {
    type: string;
    message?: {
      role: string;
      content: unknown[];
      stop_reason: string | null;
      usage: { input_tokens: number };
    };
    content_block?: Record<string, unknown>;
    delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
    usage?: { output_tokens: number };
  }

  /** The events of a streamed answer, each checked to carry its type on its `event:` line. */
  async function events(response: Response): Promise<StreamEvent[]> {
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    return text
      .trim()
      .split('\n\n')
      .map((frame) => {
        const [eventLine, dataLine] = frame.split('\n');
        const data = JSON.parse(dataLine?.replace(/^data: /, '') ?? '') as StreamEvent;
        expect(eventLine).toBe(`event: ${data.type}`);
        return data;
      });
  }

  it('answers a valid request with a Message', async () => {
    double.enqueue(answers.text('{"findings":[]}'));
    const response = await post(valid);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: '{"findings":[]}' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
  });

  it('streams a text answer as the API does', async () => {
    const text = '{"findings":[{"title":"a streamed answer"}]}';
    double.enqueue(answers.text(text, { usage: { input_tokens: 321, output_tokens: 12 } }));
    const stream = await events(await post({ ...valid, stream: true }));
    const types = stream.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(stream[0]?.message).toMatchObject({ role: 'assistant', content: [], stop_reason: null });
    expect(stream[0]?.message?.usage.input_tokens).toBe(321);
    expect(stream[1]?.content_block).toEqual({ type: 'text', text: '' });
    const deltas = stream.filter((e) => e.type === 'content_block_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta?.text).join('')).toBe(text);
    expect(stream.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12 } });
  });

  it('streams the answer as the forced tool’s input when tool_choice forces one', async () => {
    const text = '{"findings":[]}';
    double.enqueue(answers.text(text));
    const stream = await events(
      await post({ ...valid, stream: true, tools: [jsonTool], tool_choice: { type: 'any' } }),
    );
    expect(stream[1]?.content_block).toMatchObject({ type: 'tool_use', name: 'json', input: {} });
    const deltas = stream.filter((e) => e.type === 'content_block_delta');
    expect(deltas.every((e) => e.delta?.type === 'input_json_delta')).toBe(true);
    expect(deltas.map((e) => e.delta?.partial_json).join('')).toBe(text);
    expect(stream.at(-2)?.delta?.stop_reason).toBe('tool_use');
  });

  it('accepts consecutive turns of one role, which the API combines into one', async () => {
    double.enqueue(answers.text('ok'));
    const response = await post({
      ...valid,
      messages: [...valid.messages, { role: 'user', content: 'And this.' }],
    });
    expect(response.status).toBe(200);
  });

  const { max_tokens: _, ...withoutMaxTokens } = valid;
  const cases: [string, unknown, Record<string, string | null>, number, string, string | RegExp][] = [
    ['no max_tokens', withoutMaxTokens, {}, 400, 'invalid_request_error', 'max_tokens: Field required'],
    [
      'no x-api-key',
      valid,
      { 'x-api-key': null },
      401,
      'authentication_error',
      'x-api-key header is required',
    ],
    [
      'a wrong x-api-key',
      valid,
      { 'x-api-key': 'sk-ant-other' },
      401,
      'authentication_error',
      'invalid x-api-key',
    ],
    [
      'no anthropic-version',
      valid,
      { 'anthropic-version': null },
      400,
      'invalid_request_error',
      'anthropic-version: header is required',
    ],
    [
      'an unknown field',
      { ...valid, max_output_tokens: 10 },
      {},
      400,
      'invalid_request_error',
      'max_output_tokens: Extra inputs are not permitted',
    ],
    [
      'a model it does not serve',
      { ...valid, model: 'claude-nope' },
      {},
      404,
      'not_found_error',
      'model: claude-nope',
    ],
    ['max_tokens of 0.5', { ...valid, max_tokens: 0.5 }, {}, 400, 'invalid_request_error', /^max_tokens: /],
    [
      'temperature above 1',
      { ...valid, temperature: 1.5 },
      {},
      400,
      'invalid_request_error',
      'temperature: Input should be less than or equal to 1',
    ],
    [
      'a system-role message',
      { ...valid, messages: [{ role: 'system', content: 'x' }] },
      {},
      400,
      'invalid_request_error',
      /^messages\.0\.role: /,
    ],
    [
      'a first message from the assistant',
      { ...valid, messages: [{ role: 'assistant', content: 'Hi' }] },
      {},
      400,
      'invalid_request_error',
      'messages: first message must use the "user" role',
    ],
    [
      'a content block of an unknown type',
      { ...valid, messages: [{ role: 'user', content: [{ type: 'txt', text: 'x' }] }] },
      {},
      400,
      'invalid_request_error',
      /^messages\.0\.content\.0\.type: Input tag "txt" found using 'type'/,
    ],
    [
      'a tool_result answering no tool_use',
      { ...valid, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] }] },
      {},
      400,
      'invalid_request_error',
      /unexpected `tool_use_id` found in `tool_result` blocks: toolu_1/,
    ],
    [
      'a tool name outside the pattern',
      { ...valid, tools: [{ ...jsonTool, name: 'review findings' }] },
      {},
      400,
      'invalid_request_error',
      /^tools\.0\.custom\.name: String should match pattern/,
    ],
    [
      'tool_choice without tools',
      { ...valid, tool_choice: { type: 'any' } },
      {},
      400,
      'invalid_request_error',
      'tool_choice: tool_choice may only be specified while providing tools',
    ],
    [
      'an output format outside the structured-outputs subset',
      {
        ...valid,
        output_config: {
          format: {
            type: 'json_schema',
            schema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } },
          },
        },
      },
      {},
      400,
      'invalid_request_error',
      /^output_config\.format\.schema: #: 'additionalProperties' must be explicitly set to false.*'minimum' is not supported/,
    ],
  ];

  it.each(cases)(
    'refuses %s with the API’s error shape',
    async (_name, body, headers, status, type, message) => {
      const before = double.rejections.length;
      const response = await post(body, headers);
      expect(response.status).toBe(status);
      const answer = (await response.json()) as { type: string; error: { type: string; message: string } };
      expect(answer).toEqual({
        type: 'error',
        error: { type, message: expect.any(String) },
        request_id: expect.any(String),
      });
      expect(answer.error.message).toMatch(message);
      expect(response.headers.get('request-id')).toBe(
        (answer as unknown as { request_id: string }).request_id,
      );
      expect(double.rejections.slice(before)).toEqual([
        { path: '/v1/messages', status, error: answer.error },
      ]);
    },
  );

  it('answers 404 not_found_error for another path', async () => {
    const response = await fetch(`${double.baseURL}/complete`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
  });
});

// ---------------------------------------------------------------------------------------------

const FINDING = {
  severity: 'P0',
  path: 'src/app.ts',
  line: 2,
  end_line: null,
  title: 'eval of input',
  body: 'Never eval input.',
  category: 'security',
  suggestion: null,
};
const ANSWER = JSON.stringify({ findings: [FINDING] });
const NO_RETRY = { baseDelayMs: 1, maxDelayMs: 5, transientRetries: 0 };

describe.each([
  ['claude-sonnet-4-0', 'a forced json tool'],
  ['claude-sonnet-4-5', 'output_config.format'],
])('svc’s model reviewer through the Anthropic provider, %s (%s)', (model) => {
  let double: AnthropicDouble;
  let expectRejections = false;
  beforeEach(async () => {
    double = await startAnthropicDouble({ apiKey: KEY, models: MODELS });
    expectRejections = false;
  });
  afterEach(async () => {
    // Every request svc sent was one the real API accepts.
    if (!expectRejections) expect(double.rejections).toEqual([]);
    await double.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ANTHROPIC_API_KEY: KEY,
    ANTHROPIC_BASE_URL: double.baseURL,
    ...extra,
  });
  const diffFile = (lines: string[]) => file('src/app.ts', [hunk(1, 1, [' import x;', ...lines])]);

  function review(overrides: Partial<LlmReviewerOptions> = {}): Promise<ReviewerResult> {
    return runLlmReviewer({
      reviewerId: 'bug-hunter',
      instructions: 'Hunt for bugs.',
      provider: 'anthropic',
      model,
      input: reviewInput([diffFile(['+const y = eval(input);'])]),
      env: env(),
      retry: NO_RETRY,
      ...overrides,
    });
  }

  it('returns findings from a streamed answer, asked for as the SDK asks this model', async () => {
    double.enqueue(answers.findings([FINDING], { input_tokens: 1000, output_tokens: 200 }));
    const result = await review();
    expect(result.findings.map((f) => [f.path, f.line, f.severity, f.title])).toEqual([
      ['src/app.ts', 2, 'P0', 'eval of input'],
    ]);
    expect(result.backend).toEqual({ harness: 'llm', provider: 'anthropic', model });
    expect(result.usage.map((u) => [u.unit, u.quantity])).toEqual([
      ['input_tokens', 1000],
      ['output_tokens', 200],
    ]);

    const [sent] = double.requests;
    expect(sent?.headers['x-api-key']).toBe(KEY);
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    const request = double.messageRequests()[0];
    expect(request).toMatchObject({ model, stream: true, max_tokens: 8192 });
    expect(request?.messages.map((m) => m.role)).toEqual(['user']);
    expect(JSON.stringify(request?.system)).toContain('Hunt for bugs.');
    if (model === 'claude-sonnet-4-0') {
      expect(request?.tools?.map((t) => t.name)).toEqual(['json']);
      expect(request?.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
      expect(request?.output_config).toBeUndefined();
      // A priced model: 1000 input tokens at $3/M, 200 output tokens at $15/M.
      expect(result.usage.map((u) => u.cost_usd)).toEqual([0.003, 0.003]);
    } else {
      expect(request?.output_config?.format?.type).toBe('json_schema');
      expect(request?.tools).toBeUndefined();
    }
  });

  it('notes the first token and writes the transcript, secrets redacted', async () => {
    // An Anthropic key in the shape secretlint detects, assembled here so no key sits in the source.
    const committedKey = `sk-ant-api03-${'Ab3_x-9Zq1'.repeat(9)}xyzAA`;
    const { events, transcript } = recordingTranscript();
    double.enqueue(answers.text(ANSWER.replace('Never eval input.', `Leaked ${committedKey} here.`)));
    await review({
      input: reviewInput([diffFile([`+const key = "${committedKey}";`, '+const y = eval(input);'])], {
        transcript,
        guidance: `Our provider key is ${KEY}, keep it.`,
      }),
    });
    expect(events.map((e) => e.role)).toEqual(['system', 'user', 'first-token', 'assistant']);
    const [system, user, , assistant] = events;
    expect(system?.content).toContain('Hunt for bugs.');
    expect(system?.data).toMatchObject({ reviewer: 'bug-hunter', provider: 'anthropic', model });
    expect(user?.content).toContain('const y = eval(input);');
    expect(assistant?.content).toContain('"title":"eval of input"');
    expect(assistant?.data).toMatchObject({ attempt: 1, finish_reason: 'stop' });
    // The model saw the diff and guidance as they are; the transcript keeps no secret.
    expect(JSON.stringify(double.messageRequests()[0])).toContain(committedKey);
    const written = JSON.stringify(events);
    expect(written).not.toContain(committedKey);
    expect(written).not.toContain(KEY);
    expect(user?.content).toContain('const key = "[REDACTED]";');
    expect(assistant?.content).toContain('Leaked [REDACTED] here.');
    expect(system?.content).toContain('Our provider key is [REDACTED], keep it.');
  });

  it('fails stream_transport_failed when the connection breaks mid-answer, keeping what arrived', async () => {
    const { events, transcript } = recordingTranscript();
    double.enqueue(answers.brokenStream(ANSWER, 30));
    const error = await failure(review({ input: reviewInput([diffFile(['+x();'])], { transcript }) }));
    expect(error.code, error.message).toBe('stream_transport_failed');
    expect(error.details).toMatchObject({ provider: 'anthropic', model, received_chars: 30, attempts: 1 });
    expect(events.find((e) => e.role === 'assistant')?.content).toBe(ANSWER.slice(0, 30));
  });

  it('fails instruction_timeout when the answer stalls past SVC_LLM_TIMEOUT_MS', async () => {
    // A first call pays the SDK's lazy loading, which would count as silence on a busy machine.
    double.enqueue(answers.findings([]));
    await review();
    double.enqueue(answers.stalledStream(ANSWER, 20, 3000));
    const started = Date.now();
    const error = await failure(review({ env: env({ SVC_LLM_TIMEOUT_MS: '300' }) }));
    expect(error.code, error.message).toBe('instruction_timeout');
    expect(error.details).toMatchObject({ timeout_ms: 300, attempts: 1 });
    expect(error.details?.received_chars as number).toBeGreaterThanOrEqual(20);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('fails provider_transient on 529 overloaded_error, after its retries', async () => {
    double.enqueue(answers.overloaded(), answers.overloaded(), answers.overloaded());
    const error = await failure(review({ retry: { ...NO_RETRY, transientRetries: 2 } }));
    expect(error.code, error.message).toBe('provider_transient');
    expect(error.message).toContain('HTTP 529');
    expect(error.message).toContain('Overloaded');
    expect(error.details).toMatchObject({ status: 529, attempts: 3 });
    expect(double.messageRequests()).toHaveLength(3);
  });

  it('fails provider_transient on an overloaded_error event in a stream that had begun', async () => {
    double.enqueue(answers.overloadedMidStream(ANSWER, 25));
    const error = await failure(review());
    expect(error.code, error.message).toBe('provider_transient');
    expect(error.message).toContain('Overloaded');
  });

  it('fails provider_rate_limited on 429 at once, with its retry-after', async () => {
    double.enqueue(answers.rateLimited(30));
    const error = await failure(review());
    expect(error.code, error.message).toBe('provider_rate_limited');
    expect(error.details).toMatchObject({ status: 429, retry_after_s: 30, attempts: 1 });
    expect(double.requests).toHaveLength(1);
  });

  it('fails provider_terminal on a 200 whose body is not the event stream (a proxy’s page)', async () => {
    // @ai-sdk/anthropic ends such a stream without a finish part; svc must not read it as the
    // model's empty answer (payload_contract_violation). See stream-call.ts.
    double.enqueue({ kind: 'raw', status: 200, body: '<html>proxy</html>', contentType: 'text/html' });
    const error = await failure(review());
    expect(error.code, error.message).toBe('provider_terminal');
    expect(error.message).toContain("no event of the provider's stream");
  });

  it('names refused credentials and a model the API does not serve', async () => {
    expectRejections = true;
    const auth = await failure(review({ env: env({ ANTHROPIC_API_KEY: 'sk-ant-wrong-key' }) }));
    expect(auth.code).toBe('provider_auth_failed');
    expect(auth.message).toContain('ANTHROPIC_API_KEY');
    const unknown = await failure(review({ model: 'claude-imaginary-9' }));
    expect(unknown.code).toBe('model_not_available');
    // Named as the model, not as a URL to check: the API's 404 says which model.
    expect(unknown.message).toContain('claude-imaginary-9');
    expect(unknown.message).not.toContain("is the API's URL");
    expect(double.rejections.map((r) => [r.status, r.error.type])).toEqual([
      [401, 'authentication_error'],
      [404, 'not_found_error'],
    ]);
  });

  it('reaches the API with ANTHROPIC_BASE_URL written with or without /v1 (the AI SDK’s and Anthropic’s SDKs’ forms)', async () => {
    const root = double.baseURL.replace(/\/v1$/, '');
    for (const base of [root, `${root}/`, double.baseURL, `${double.baseURL}/`]) {
      double.enqueue(answers.findings([]));
      const result = await review({ env: env({ ANTHROPIC_BASE_URL: base }) });
      expect(result.findings, base).toEqual([]);
    }
    expect(double.requests.map((r) => r.path)).toEqual(Array(4).fill('/v1/messages'));
  });
});
