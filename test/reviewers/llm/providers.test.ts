import { describe, expect, it } from 'vitest';
import { RunFailure } from '../../../src/core/failures';
import {
  configuredProviders,
  defaultContextTokens,
  priceOf,
  resolveModel,
  tokenCost,
} from '../../../src/reviewers/llm/providers';

function failureOf(fn: () => unknown): RunFailure {
  try {
    fn();
  } catch (error) {
    if (error instanceof RunFailure) return error;
    throw error;
  }
  throw new Error('expected a RunFailure');
}

describe('configuredProviders', () => {
  it('lists every provider with why it is not usable', () => {
    expect(configuredProviders({})).toEqual([
      {
        provider: 'openai',
        kind: 'openai',
        usable: false,
        reason: 'OPENAI_API_KEY is not set',
        baseURL: null,
      },
      {
        provider: 'anthropic',
        kind: 'anthropic',
        usable: false,
        reason: 'ANTHROPIC_API_KEY is not set',
        baseURL: null,
      },
      {
        provider: 'compat',
        kind: 'openai-compatible',
        usable: false,
        reason: 'SVC_LLM_COMPAT_URL is not set',
        baseURL: null,
      },
    ]);
  });

  it('reads keys, base URLs and the compatible endpoint name from the env given', () => {
    const statuses = configuredProviders({
      OPENAI_API_KEY: 'sk-1',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/',
      ANTHROPIC_API_KEY: 'sk-ant',
      SVC_LLM_COMPAT_URL: 'http://127.0.0.1:11434/v1',
      SVC_LLM_COMPAT_NAME: 'ollama',
    });
    expect(statuses.map((s) => [s.provider, s.usable, s.baseURL])).toEqual([
      ['openai', true, 'http://127.0.0.1:9/v1'],
      ['anthropic', true, 'https://api.anthropic.com/v1'],
      ['ollama', true, 'http://127.0.0.1:11434/v1'],
    ]);
  });

  it('treats a blank key as missing', () => {
    expect(configuredProviders({ OPENAI_API_KEY: '  ' })[0]?.usable).toBe(false);
  });
});

describe('resolveModel', () => {
  it('fails by name, saying which variable to set, when a provider has no key', () => {
    const openai = failureOf(() => resolveModel('openai', 'gpt-4o-mini', {}));
    expect(openai.code).toBe('provider_auth_failed');
    expect(openai.message).toContain('OPENAI_API_KEY');
    const anthropic = failureOf(() => resolveModel('anthropic', 'claude-sonnet-4-0', {}));
    expect(anthropic.code).toBe('provider_auth_failed');
    expect(anthropic.message).toContain('ANTHROPIC_API_KEY');
  });

  it('fails with model_not_available for an unconfigured compatible endpoint or an unknown provider', () => {
    const compat = failureOf(() => resolveModel('compat', 'llama3.1', {}));
    expect(compat.code).toBe('model_not_available');
    expect(compat.message).toContain('SVC_LLM_COMPAT_URL');
    const unknown = failureOf(() => resolveModel('ollama', 'llama3.1', {}));
    expect(unknown.code).toBe('model_not_available');
    expect(unknown.message).toContain('SVC_LLM_COMPAT_NAME=ollama');
    expect(failureOf(() => resolveModel('openai', ' ', { OPENAI_API_KEY: 'k' })).code).toBe(
      'model_not_available',
    );
  });

  it('builds a model for each configured provider', () => {
    const env = { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', SVC_LLM_COMPAT_URL: 'http://127.0.0.1:1/v1' };
    expect(resolveModel('openai', 'gpt-4o-mini', env)).toMatchObject({
      provider: 'openai',
      modelId: 'gpt-4o-mini',
    });
    const anthropic = resolveModel('anthropic', 'claude-sonnet-4-0', env);
    expect(anthropic.kind).toBe('anthropic');
    expect(typeof anthropic.model === 'object' && anthropic.model.modelId).toBe('claude-sonnet-4-0');
    expect(resolveModel('compat', 'llama3.1', env).kind).toBe('openai-compatible');
  });
});

describe('prices and windows', () => {
  it('prices known first-party models and their snapshots, nothing else', () => {
    expect(priceOf('openai', 'gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('openai', 'gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('openai', 'gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(priceOf('anthropic', 'claude-3-5-haiku-20241022')).toEqual({ input: 0.8, output: 4 });
    expect(priceOf('anthropic', 'claude-sonnet-4-0')).toEqual({ input: 3, output: 15 });
    expect(priceOf('openai', 'gpt-4o-mini-turbo')).toBeNull();
    expect(priceOf('openai-compatible', 'gpt-4o-mini')).toBeNull();
  });

  it('computes a cost, or null (never 0) without a price', () => {
    expect(tokenCost({ input: 0.15, output: 0.6 }, 'input', 1_000_000)).toBe(0.15);
    expect(tokenCost({ input: 0.15, output: 0.6 }, 'output', 2000)).toBe(0.0012);
    expect(tokenCost(null, 'input', 1000)).toBeNull();
  });

  it('defaults the working window per model, capped at 128k', () => {
    expect(defaultContextTokens('openai', 'gpt-4o-mini')).toBe(128_000);
    expect(defaultContextTokens('openai', 'gpt-4.1')).toBe(128_000);
    expect(defaultContextTokens('openai-compatible', 'llama3.1')).toBe(32_000);
    expect(defaultContextTokens('openai', 'x', { SVC_LLM_MAX_CONTEXT_TOKENS: '50000' })).toBe(50_000);
  });
});
