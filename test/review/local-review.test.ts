/**
 * The database-free review's check for a model provider: it looks at a few environment variables
 * before loading the provider module (and with it the AI SDK), so that list must agree with
 * `configuredProviders`, which decides what is usable.
 */
import { describe, expect, it } from 'vitest';
import { LLM_PROVIDER_ENV, usableProviders } from '../../src/review/local-review';
import { configuredProviders } from '../../src/reviewers/llm/providers';

const usable = (env: NodeJS.ProcessEnv) =>
  configuredProviders(env)
    .filter((p) => p.usable)
    .map((p) => p.provider)
    .sort();

describe('usableProviders', () => {
  it('finds no provider without any of the variables, as configuredProviders does', async () => {
    const env = { PATH: '/bin', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', SVC_LLM_COMPAT_NAME: 'local' };
    expect(usable(env)).toEqual([]);
    expect([...(await usableProviders(env))]).toEqual([]);
  });

  it.each(LLM_PROVIDER_ENV)('finds the provider %s makes usable', async (name) => {
    const env = { [name]: name === 'SVC_LLM_COMPAT_URL' ? 'http://127.0.0.1:11434/v1' : 'key' };
    expect(usable(env)).toHaveLength(1);
    expect([...(await usableProviders(env))].sort()).toEqual(usable(env));
  });

  it('covers every variable that makes a provider usable', () => {
    // Each provider configuredProviders knows is made usable by exactly one of the variables.
    const providers = configuredProviders({}).map((p) => p.provider);
    const covered = LLM_PROVIDER_ENV.flatMap((name) => usable({ [name]: 'http://127.0.0.1:1/v1' }));
    expect(covered.sort()).toEqual([...providers].sort());
  });
});
