/**
 * Which LLM providers the environment configures (see providers.ts for the variables), without
 * loading any provider's SDK: the service lists providers and names the compatible one at
 * start, and the SDKs are loaded only when a model reviewer runs.
 */
export type Env = Record<string, string | undefined>;
export type FetchFunction = typeof globalThis.fetch;

export type ProviderKind = 'openai' | 'anthropic' | 'openai-compatible';

export interface ProviderStatus {
  /** The name a reviewer pin uses: `<reviewer>@<provider>/<model>`. */
  provider: string;
  kind: ProviderKind;
  usable: boolean;
  /** Why it is not usable (which variable to set); null when usable. */
  reason: string | null;
  /** The base URL requests go to, when usable. */
  baseURL: string | null;
}

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const DEFAULT_COMPAT_NAME = 'compat';

/** The trimmed value, or undefined for unset or blank. */
export const nonEmpty = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

export function compatProviderName(env: Env): string {
  return nonEmpty(env.SVC_LLM_COMPAT_NAME) ?? DEFAULT_COMPAT_NAME;
}

/**
 * ANTHROPIC_BASE_URL in either of the forms in use: with `/v1` (the AI SDK's, which svc calls
 * through) or without (Anthropic's own SDKs and Claude Code, which add `/v1/messages`
 * themselves). A value copied from either works; before, the second form answered 404.
 */
function anthropicBaseUrl(env: Env): string {
  const configured = nonEmpty(env.ANTHROPIC_BASE_URL);
  if (!configured) return DEFAULT_ANTHROPIC_BASE_URL;
  const base = trimSlash(configured);
  return /\/v1$/.test(base) ? base : `${base}/v1`;
}

/** Every provider svc knows of, usable or not, and why not. */
export function configuredProviders(env: Env = process.env): ProviderStatus[] {
  const openaiKey = nonEmpty(env.OPENAI_API_KEY);
  const anthropicKey = nonEmpty(env.ANTHROPIC_API_KEY);
  const compatUrl = nonEmpty(env.SVC_LLM_COMPAT_URL);
  return [
    {
      provider: 'openai',
      kind: 'openai',
      usable: openaiKey !== undefined,
      reason: openaiKey ? null : 'OPENAI_API_KEY is not set',
      baseURL: openaiKey ? trimSlash(nonEmpty(env.OPENAI_BASE_URL) ?? DEFAULT_OPENAI_BASE_URL) : null,
    },
    {
      provider: 'anthropic',
      kind: 'anthropic',
      usable: anthropicKey !== undefined,
      reason: anthropicKey ? null : 'ANTHROPIC_API_KEY is not set',
      baseURL: anthropicKey ? anthropicBaseUrl(env) : null,
    },
    {
      provider: compatProviderName(env),
      kind: 'openai-compatible',
      usable: compatUrl !== undefined,
      reason: compatUrl ? null : 'SVC_LLM_COMPAT_URL is not set',
      baseURL: compatUrl ? trimSlash(compatUrl) : null,
    },
  ];
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
