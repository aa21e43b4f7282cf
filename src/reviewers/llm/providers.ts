/**
 * LLM providers from the environment, and what their tokens cost.
 *
 * Three kinds of provider:
 * - `openai`: OPENAI_API_KEY, optional OPENAI_BASE_URL (default https://api.openai.com/v1).
 *   Reached through the Chat Completions API (`/chat/completions`), the same protocol as every
 *   OpenAI-compatible server, so one protocol is exercised and tested.
 * - `anthropic`: ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL (default https://api.anthropic.com/v1;
 *   with or without its `/v1`, as the AI SDK and Anthropic's own SDKs write it).
 * - an OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, a gateway): SVC_LLM_COMPAT_URL (its
 *   `/v1` base, e.g. http://127.0.0.1:11434/v1), optional SVC_LLM_COMPAT_API_KEY, and its provider
 *   name SVC_LLM_COMPAT_NAME (default `compat`). SVC_LLM_COMPAT_STRUCTURED_OUTPUTS=0 makes it ask
 *   for plain JSON (`json_object`) for servers without JSON-schema structured outputs. Answers are
 *   streamed, asking for the token counts at the stream's end (`stream_options.include_usage`);
 *   SVC_LLM_COMPAT_STREAM_USAGE=0 leaves that out for a server that refuses it (tokens are then
 *   estimated).
 *
 * Settings are read only from the `env` given, never from process.env behind the caller's back:
 * every value is passed to the provider factory explicitly (the factories would otherwise fall
 * back to process.env themselves).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { RunFailure } from '../../core/failures';
import {
  configuredProviders,
  type Env,
  type FetchFunction,
  nonEmpty,
  type ProviderKind,
} from './provider-config';

export {
  compatProviderName,
  configuredProviders,
  DEFAULT_ANTHROPIC_BASE_URL,
  DEFAULT_COMPAT_NAME,
  DEFAULT_OPENAI_BASE_URL,
  type Env,
  type FetchFunction,
  type ProviderKind,
  type ProviderStatus,
} from './provider-config';

export interface ResolveOptions {
  /** Used for every HTTP request to the provider (tests pass one; default: global fetch). */
  fetch?: FetchFunction | undefined;
}

export interface ResolvedModel {
  model: LanguageModel;
  provider: string;
  kind: ProviderKind;
  modelId: string;
}

/**
 * The AI SDK language model for `provider/model`, or a named failure saying what to set:
 * `provider_auth_failed` when the provider's key is missing, `model_not_available` when the
 * provider is unknown or not configured, or the model id is empty.
 */
export function resolveModel(
  provider: string,
  model: string,
  env: Env = process.env,
  options: ResolveOptions = {},
): ResolvedModel {
  const modelId = model.trim();
  if (!modelId) {
    throw new RunFailure('model_not_available', `no model given for provider '${provider}'`, { provider });
  }
  const fetch = options.fetch;
  const statuses = configuredProviders(env);
  const status = statuses.find((s) => s.provider === provider);
  if (!status) {
    const known = statuses.map((s) => s.provider).join(', ');
    throw new RunFailure(
      'model_not_available',
      `unknown LLM provider '${provider}' (known: ${known}); for an OpenAI-compatible server set ` +
        `SVC_LLM_COMPAT_URL and SVC_LLM_COMPAT_NAME=${provider}`,
      { provider, model: modelId },
    );
  }
  if (!status.usable || status.baseURL === null) {
    const code = status.kind === 'openai-compatible' ? 'model_not_available' : 'provider_auth_failed';
    const variable =
      status.kind === 'openai'
        ? 'OPENAI_API_KEY'
        : status.kind === 'anthropic'
          ? 'ANTHROPIC_API_KEY'
          : 'SVC_LLM_COMPAT_URL';
    throw new RunFailure(
      code,
      `LLM provider '${provider}' is not configured: set ${variable} in the environment of svc`,
      { provider, model: modelId, env_var: variable },
    );
  }
  switch (status.kind) {
    case 'openai': {
      const openai = createOpenAI({
        apiKey: nonEmpty(env.OPENAI_API_KEY),
        baseURL: status.baseURL,
        ...(fetch ? { fetch } : {}),
      });
      return { model: openai.chat(modelId), provider, kind: status.kind, modelId };
    }
    case 'anthropic': {
      const anthropic = createAnthropic({
        apiKey: nonEmpty(env.ANTHROPIC_API_KEY),
        baseURL: status.baseURL,
        ...(fetch ? { fetch } : {}),
      });
      return { model: anthropic(modelId), provider, kind: status.kind, modelId };
    }
    case 'openai-compatible': {
      const apiKey = nonEmpty(env.SVC_LLM_COMPAT_API_KEY);
      const compat = createOpenAICompatible({
        name: provider,
        baseURL: status.baseURL,
        ...(apiKey ? { apiKey } : {}),
        supportsStructuredOutputs: env.SVC_LLM_COMPAT_STRUCTURED_OUTPUTS !== '0',
        includeUsage: env.SVC_LLM_COMPAT_STREAM_USAGE !== '0',
        ...(fetch ? { fetch } : {}),
      });
      return { model: compat.chatModel(modelId), provider, kind: status.kind, modelId };
    }
  }
}

/** The environment variable that holds a provider's credentials (for failure messages). */
export function credentialVariable(kind: ProviderKind): string {
  return kind === 'openai'
    ? 'OPENAI_API_KEY'
    : kind === 'anthropic'
      ? 'ANTHROPIC_API_KEY'
      : 'SVC_LLM_COMPAT_API_KEY';
}

// ---------------------------------------------------------------------------------------------
// Prices and context windows

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

/**
 * List prices (USD per million tokens) of a few models at their first-party provider. Only the
 * first-party providers are priced: the same model id behind an OpenAI-compatible gateway may cost
 * anything, so its cost is unknown (null), never 0.
 */
export const PRICES: Record<'openai' | 'anthropic', Record<string, ModelPrice>> = {
  openai: {
    'gpt-4o-mini': { input: 0.15, output: 0.6 },
    'gpt-4o': { input: 2.5, output: 10 },
    'gpt-4.1': { input: 2, output: 8 },
    'gpt-4.1-mini': { input: 0.4, output: 1.6 },
    'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  },
  anthropic: {
    'claude-sonnet-4': { input: 3, output: 15 },
    'claude-3-7-sonnet': { input: 3, output: 15 },
    'claude-3-5-haiku': { input: 0.8, output: 4 },
  },
};

/** Model windows in tokens (input + output). */
const CONTEXT_WINDOWS: Record<string, number> = {
  'gpt-4o-mini': 128_000,
  'gpt-4o': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'claude-sonnet-4': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
};

/**
 * The base name a model id is a snapshot or alias of: `gpt-4o-mini-2024-07-18` → `gpt-4o-mini`,
 * `claude-3-5-haiku-20241022` / `-latest` → `claude-3-5-haiku`, `claude-sonnet-4-0` → `claude-sonnet-4`.
 * Only date, `-latest` and `-0` suffixes are stripped, so `gpt-4o` never matches `gpt-4o-mini`.
 */
function baseModelName(model: string, table: Record<string, unknown>): string | null {
  if (Object.hasOwn(table, model)) return model;
  const stripped = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest|0)$/, '');
  return Object.hasOwn(table, stripped) ? stripped : null;
}

export function priceOf(kind: ProviderKind, model: string): ModelPrice | null {
  if (kind === 'openai-compatible') return null;
  const table = PRICES[kind];
  const base = baseModelName(model, table);
  return base ? (table[base] ?? null) : null;
}

/** USD for `tokens` of one direction, or null when the model has no known price. */
export function tokenCost(
  price: ModelPrice | null,
  direction: 'input' | 'output',
  tokens: number,
): number | null {
  if (!price) return null;
  return Math.round(((tokens * price[direction]) / 1_000_000) * 1e9) / 1e9;
}

/** Default working window for one call: the model's window, at most this. */
export const DEFAULT_CONTEXT_CEILING = 128_000;
/** Window assumed for an unknown model at a first-party provider. */
export const DEFAULT_CONTEXT_TOKENS = 128_000;
/** Window assumed for an unknown model behind an OpenAI-compatible endpoint (local models are small). */
export const DEFAULT_COMPAT_CONTEXT_TOKENS = 32_000;

/**
 * The input+output tokens one call may use by default: the model's window capped at 128k (a
 * review of a million tokens in one call is slow and poor; more calls cost the same tokens), or
 * SVC_LLM_MAX_CONTEXT_TOKENS when set.
 */
export function defaultContextTokens(kind: ProviderKind, model: string, env: Env = {}): number {
  const fromEnv = Number.parseInt(env.SVC_LLM_MAX_CONTEXT_TOKENS ?? '', 10);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  const base = baseModelName(model, CONTEXT_WINDOWS);
  const window = base
    ? (CONTEXT_WINDOWS[base] ?? DEFAULT_CONTEXT_TOKENS)
    : kind === 'openai-compatible'
      ? DEFAULT_COMPAT_CONTEXT_TOKENS
      : DEFAULT_CONTEXT_TOKENS;
  return Math.min(window, DEFAULT_CONTEXT_CEILING);
}
