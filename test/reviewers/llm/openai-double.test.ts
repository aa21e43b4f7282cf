/** The double refuses what the real Chat Completions API refuses, so a malformed request fails a test. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answers,
  type OpenAIDouble,
  startOpenAIDouble,
  strictSchemaProblems,
} from '../../helpers/openai-double';

let double: OpenAIDouble;

beforeAll(async () => {
  double = await startOpenAIDouble({ apiKey: 'sk-test', models: ['gpt-4o-mini'] });
});
afterAll(async () => {
  await double.close();
});

const valid = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: [{ type: 'text', text: 'Review this.' }] },
  ],
};

async function post(body: unknown, init: { path?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${double.baseURL}${init.path ?? '/chat/completions'}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { message: string; code: string | null } },
  };
}

describe('OpenAI double: request validation', () => {
  it('answers a valid request with a chat.completion', async () => {
    double.enqueue(answers.content('{"findings":[]}'));
    const { status, body } = await post(valid);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [
        { index: 0, message: { role: 'assistant', content: '{"findings":[]}' }, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      },
    });
  });

  it('refuses a request without a bearer key, or with the wrong one (401)', async () => {
    expect((await post(valid, { headers: { authorization: '' } })).status).toBe(401);
    const wrong = await post(valid, { headers: { authorization: 'Bearer sk-other' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error?.code).toBe('invalid_api_key');
  });

  it('refuses a body that is not JSON, or not sent as JSON', async () => {
    expect((await post('{not json')).status).toBe(400);
    expect((await post(valid, { headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });

  it.each([
    ['missing model', { messages: valid.messages }],
    ['missing messages', { model: 'gpt-4o-mini' }],
    ['empty messages', { model: 'gpt-4o-mini', messages: [] }],
    ['unknown role', { ...valid, messages: [{ role: 'robot', content: 'hi' }] }],
    [
      'user content of a wrong shape',
      { ...valid, messages: [{ role: 'user', content: [{ type: 'txt', text: 'x' }] }] },
    ],
    ['tool message without tool_call_id', { ...valid, messages: [{ role: 'tool', content: 'x' }] }],
    ['assistant message without content or tool calls', { ...valid, messages: [{ role: 'assistant' }] }],
    ['temperature out of range', { ...valid, temperature: 3 }],
    ['response_format of an unknown type', { ...valid, response_format: { type: 'xml' } }],
    [
      'json_schema with a bad name',
      { ...valid, response_format: { type: 'json_schema', json_schema: { name: 'a b' } } },
    ],
  ])('refuses %s (400)', async (_name, body) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer.error?.message).toBeTruthy();
  });

  it('refuses an unknown request field the way the API does', async () => {
    const { status, body } = await post({ ...valid, maxTokens: 10 });
    expect(status).toBe(400);
    expect(body.error?.message).toBe('Unrecognized request argument supplied: maxTokens');
  });

  it('refuses a strict json_schema outside the strict subset', async () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a'],
    };
    const { status, body } = await post({
      ...valid,
      response_format: { type: 'json_schema', json_schema: { name: 'out', strict: true, schema } },
    });
    expect(status).toBe(400);
    expect(body.error?.code).toBe('invalid_json_schema');
    expect(strictSchemaProblems(schema)).toEqual([
      "#: 'additionalProperties' is required to be supplied and to be false",
      "#: 'required' must list every property; missing b",
    ]);
    expect(strictSchemaProblems({ ...schema, required: ['a', 'b'], additionalProperties: false })).toEqual(
      [],
    );
    expect(strictSchemaProblems({ anyOf: [{ type: 'object' }] })).toContain(
      'the root schema must be an object, not anyOf',
    );
  });

  it('answers 404 model_not_found for a model it does not serve, and 404 for other paths', async () => {
    const unknown = await post({ ...valid, model: 'gpt-nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe('model_not_found');
    expect((await post({ model: 'gpt-4o-mini', input: 'hi' }, { path: '/responses' })).status).toBe(404);
  });

  it('records every request and every rejection', () => {
    expect(double.requests.length).toBeGreaterThan(10);
    expect(double.rejections.length).toBe(double.requests.length - 1);
    expect(double.chatRequests()).toHaveLength(1);
  });
});
