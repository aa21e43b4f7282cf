/** The configuration refuses a bad value at start, naming the variable, instead of failing later. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';

describe('loadConfig', () => {
  it('works with nothing set', () => {
    expect(loadConfig({})).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: './.svc' });
  });

  it.each([
    ['SVC_LLM_TIMEOUT_MS', 'soon', /SVC_LLM_TIMEOUT_MS must be a non-negative number, got "soon"/],
    ['SVC_LLM_TIMEOUT_MS', '0', /SVC_LLM_TIMEOUT_MS must be a positive number, got "0"/],
    ['SVC_GIT_TIMEOUT_MS', '-5', /SVC_GIT_TIMEOUT_MS must be a non-negative number/],
    ['PORT', 'eighty', /PORT must be a non-negative number/],
  ])('refuses %s=%s by name', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('takes the tool limits when they are positive numbers', () => {
    expect(() => loadConfig({ SVC_LLM_TIMEOUT_MS: '5000', SVC_GIT_TIMEOUT_MS: '60000' })).not.toThrow();
  });
});
