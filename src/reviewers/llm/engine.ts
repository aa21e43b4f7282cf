/**
 * The LLM reviewer engine: one reviewer (a skill's instructions) run by one model over a diff.
 *
 * The diff is cut into chunks that fit the model's window (one call each, in order, findings
 * concatenated); each call streams a structured answer (`streamText` with `Output.object`, the AI
 * SDK 6 form; see ./stream-call.ts for why it streams) validated by zod. Findings are anchored on
 * added lines; every call is one input and one output usage line, priced when the model is.
 *
 * Failures are named (see ./errors.ts); an empty or unparseable answer is a failure, never
 * "no findings". Retries are ours, not the SDK's (`maxRetries: 0`): a transient failure (and a
 * call that went silent past its time limit, or whose stream broke) is retried twice with
 * backoff; a 429 is retried once, only when the provider says to wait no longer than
 * `maxRateLimitWaitMs`, and otherwise fails at once with its retry-after in the details, so a
 * rate-limited provider is never hammered. The caller's abort signal stops everything at once.
 *
 * When the input carries a transcript, the system prompt, each chunk's prompt, each answer (also
 * a failed one, as far as it arrived) and any tool calls are written to it, secrets redacted.
 */
import { RunFailure } from '../../core/failures';
import type { Gap } from '../../core/runs';
import type { ModelTranscript, ReviewerResult, ReviewInput, SkillProvenance, UsageItem } from '../types';
import { type ProviderContext, toRunFailure } from './errors';
import { anchorFindings, answerWireSchema, type LlmFinding } from './findings';
import { buildSystemPrompt, buildUserPrompt, chunkDiff, estimateTokens } from './prompt';
import {
  defaultContextTokens,
  type Env,
  type FetchFunction,
  priceOf,
  resolveModel,
  tokenCost,
} from './providers';
import { environmentSecrets, redactSecrets } from './redact';
import { type CallRecord, type CallUsage, streamCall } from './stream-call';

export interface RetryPolicy {
  /** Retries of a transient failure (5xx, timeout, connection refused). */
  transientRetries: number;
  /** First backoff delay; doubled each retry, capped at `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retries of a 429 (only when the provider's retry-after fits `maxRateLimitWaitMs`). */
  rateLimitRetries: number;
  maxRateLimitWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  transientRetries: 2,
  baseDelayMs: 1000,
  maxDelayMs: 8000,
  rateLimitRetries: 1,
  maxRateLimitWaitMs: 10_000,
};

/** How long a call may go without the model sending anything, by default (SVC_LLM_TIMEOUT_MS). */
export const DEFAULT_CALL_TIMEOUT_MS = 180_000;

/** SVC_LLM_TIMEOUT_MS from `env`, or the default; a value that is not a positive number is refused. */
export function callTimeoutFromEnv(env: Env): number {
  const raw = env.SVC_LLM_TIMEOUT_MS?.trim();
  if (!raw) return DEFAULT_CALL_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0)
    throw new RunFailure(
      'unknown',
      `SVC_LLM_TIMEOUT_MS must be a positive number of milliseconds, got "${raw}"`,
    );
  return ms;
}

/** Tokens reserved for the answer by default (at most a quarter of the window). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

export interface LlmReviewerOptions {
  reviewerId: string;
  /** The skill's SKILL.md body. */
  instructions: string;
  provider: string;
  model: string;
  input: ReviewInput;
  /** Where provider settings are read (default process.env). */
  env?: Env;
  /** HTTP client for the provider (default global fetch). */
  fetch?: FetchFunction;
  /** Input + output tokens one call may use (default: the model's window, capped at 128k). */
  maxContextTokens?: number;
  /** Tokens reserved for each answer (default min(8192, window / 4)). */
  maxOutputTokens?: number;
  /**
   * Longest a call may go without the model sending anything: before its first token and between
   * two streamed parts (default SVC_LLM_TIMEOUT_MS, else 180 s). Running out is retried like a
   * transient failure, then fails `instruction_timeout`.
   */
  callTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Provenance of the skill whose instructions run, reported as the result's `skills`. */
  skills?: SkillProvenance[];
}

/** A JSON Schema of the answer, only to count the tokens it adds to each request. */
const ANSWER_SCHEMA_TOKENS = estimateTokens(JSON.stringify(answerWireSchema()));
/** Message framing, role markers and the chunk's lead sentence. */
const REQUEST_OVERHEAD_TOKENS = 100;
/** The estimate is ~4 chars/token; code often runs denser, so keep a tenth in reserve. */
const ESTIMATE_MARGIN = 0.9;
const MIN_DIFF_BUDGET = 256;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function usageLines(
  ctx: ProviderContext,
  call: { index: number; total: number; estimatedInput: number },
  usage: CallUsage,
): UsageItem[] {
  const price = priceOf(ctx.kind, ctx.model);
  const label = `${ctx.provider}/${ctx.model} call ${call.index + 1}/${call.total}`;
  const line = (direction: 'input' | 'output', reported: number | undefined, estimate: number): UsageItem =>
    reported === undefined
      ? {
          kind: 'llm',
          description: `${label} ${direction} tokens (estimated: the provider reported none)`,
          quantity: estimate,
          unit: `${direction}_tokens`,
          cost_usd: null,
        }
      : {
          kind: 'llm',
          description: `${label} ${direction} tokens`,
          quantity: reported,
          unit: `${direction}_tokens`,
          cost_usd: tokenCost(price, direction, reported),
        };
  return [line('input', usage.inputTokens, call.estimatedInput), line('output', usage.outputTokens, 0)];
}

export async function runLlmReviewer(options: LlmReviewerOptions): Promise<ReviewerResult> {
  const { input } = options;
  const env = options.env ?? process.env;
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const callTimeoutMs = options.callTimeoutMs ?? callTimeoutFromEnv(env);
  if (input.signal.aborted) throw input.signal.reason;

  const resolved = resolveModel(options.provider, options.model, env, { fetch: options.fetch });
  const ctx: ProviderContext = { provider: resolved.provider, kind: resolved.kind, model: resolved.modelId };
  const backend = { harness: 'llm', provider: resolved.provider, model: resolved.modelId };

  const system = buildSystemPrompt({
    instructions: options.instructions,
    guidance: input.guidance,
    learnings: input.learnings,
    knowledge: input.knowledge,
  });
  const contextTokens =
    options.maxContextTokens ?? defaultContextTokens(resolved.kind, resolved.modelId, env);
  const maxOutputTokens =
    options.maxOutputTokens ?? Math.min(DEFAULT_MAX_OUTPUT_TOKENS, Math.floor(contextTokens / 4));
  const fixedTokens = estimateTokens(system) + ANSWER_SCHEMA_TOKENS + REQUEST_OVERHEAD_TOKENS;
  const diffBudget = Math.floor((contextTokens - maxOutputTokens - fixedTokens) * ESTIMATE_MARGIN);
  if (diffBudget < MIN_DIFF_BUDGET) {
    throw new RunFailure(
      'provider_terminal',
      `the reviewer instructions, guidance and learnings (~${fixedTokens} tokens) leave no room for the diff in ` +
        `the ${contextTokens}-token window of ${ctx.provider}/${ctx.model}; shorten them or pin a model with a larger window`,
      { provider: ctx.provider, model: ctx.model, context_tokens: contextTokens, fixed_tokens: fixedTokens },
    );
  }

  const chunks = chunkDiff(input.diff.files, diffBudget);
  const gaps: Gap[] = [];
  if (chunks.length === 0) {
    gaps.push({
      code: 'llm_nothing_to_review',
      message: 'the diff has no added text lines for the model to review',
    });
    return { findings: [], gaps, usage: [], skills: options.skills ?? [], backend };
  }

  const usage: UsageItem[] = [];
  const answers: LlmFinding[] = [];
  const transcript = input.transcript ? redactingTranscript(input.transcript, env) : null;
  const who = { reviewer: options.reviewerId, provider: ctx.provider, model: ctx.model };
  await transcript?.write('system', system, who);
  for (const [index, chunk] of chunks.entries()) {
    const prompt = buildUserPrompt(chunk, index, chunks.length);
    const call = {
      index,
      total: chunks.length,
      estimatedInput: estimateTokens(system) + estimateTokens(prompt),
    };
    const where = { ...who, chunk: index + 1, chunks: chunks.length };
    await transcript?.write('user', prompt, where);
    let attempt = 0;
    const attemptCall = async () => {
      attempt++;
      let received: CallRecord | null = null;
      try {
        return await streamCall({
          model: resolved.model,
          system,
          prompt,
          maxOutputTokens,
          signal: input.signal,
          timeoutMs: callTimeoutMs,
          onUsage: (u) => usage.push(...usageLines(ctx, call, u)),
          onFirstToken: () => input.transcript?.firstToken(),
          onRecord: (record) => {
            received = record;
          },
        });
      } finally {
        if (received) await transcript?.answer(received, { ...where, attempt });
      }
    };
    try {
      const answer = await callWithRetries(attemptCall, ctx, retry, input.signal);
      answers.push(...answer.findings);
    } catch (error) {
      if (input.signal.aborted) throw input.signal.reason;
      const failure = toRunFailure(error, ctx);
      throw new RunFailure(failure.code, failure.message, {
        ...failure.details,
        chunk: index + 1,
        chunks: chunks.length,
        usage,
      });
    }
  }

  const anchored = anchorFindings(answers, input.diff, options.reviewerId);
  gaps.push(...anchored.gaps);
  return { findings: anchored.findings, gaps, usage, skills: options.skills ?? [], backend };
}

/** Failures worth another attempt with backoff: the next call may well go through. */
const RETRIED_AS_TRANSIENT = new Set<string>([
  'provider_transient',
  'instruction_timeout',
  'stream_transport_failed',
]);

/** The transcript a reviewer writes to, with every text redacted of secrets first. */
function redactingTranscript(sink: ModelTranscript, env: Env) {
  const known = environmentSecrets(env);
  const redacted = (text: string) => redactSecrets(text, known);
  return {
    async write(
      role: 'system' | 'user' | 'assistant' | 'tool',
      content: string,
      data: Record<string, unknown>,
    ) {
      await sink.write(role, await redacted(content), data);
    },
    /** One attempt's answer (as far as it arrived) and its tool calls and results. */
    async answer(record: CallRecord, data: Record<string, unknown>) {
      const meta = { ...data, finish_reason: record.finishReason };
      await sink.write('assistant', await redacted(record.text), meta);
      for (const call of record.toolCalls) {
        await sink.write('tool', await redacted(JSON.stringify(call.input)), {
          ...meta,
          tool: call.name,
          kind: 'call',
        });
      }
      for (const result of record.toolResults) {
        await sink.write('tool', await redacted(JSON.stringify(result.output ?? null)), {
          ...meta,
          tool: result.name,
          kind: 'result',
        });
      }
    },
  };
}

async function callWithRetries<T>(
  call: () => Promise<T>,
  ctx: ProviderContext,
  policy: RetryPolicy,
  signal: AbortSignal,
): Promise<T> {
  let transient = 0;
  let rateLimited = 0;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const failure = toRunFailure(error, ctx);
      let wait: number | null = null;
      if (RETRIED_AS_TRANSIENT.has(failure.code) && transient < policy.transientRetries) {
        wait = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** transient);
        transient++;
      } else if (failure.code === 'provider_rate_limited' && rateLimited < policy.rateLimitRetries) {
        const after = failure.details?.retry_after_s;
        if (typeof after === 'number' && after * 1000 <= policy.maxRateLimitWaitMs) {
          wait = after * 1000;
          rateLimited++;
        }
      }
      if (wait === null) {
        throw new RunFailure(failure.code, failure.message, {
          ...failure.details,
          attempts: 1 + transient + rateLimited,
        });
      }
      await sleep(wait, signal);
    }
  }
}
