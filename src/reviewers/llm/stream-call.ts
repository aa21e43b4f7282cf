/**
 * One model call, streamed. The answer arrives token by token (`streamText` with
 * `Output.object`), which gives svc three things a single response cannot: the moment of the
 * first token (the run's `first_token_at`), a time limit on silence rather than on the whole
 * answer (a slow model that keeps sending is not cut off; one that stops is, by
 * `instruction_timeout`), and a named failure when the connection breaks mid-answer
 * (`stream_transport_failed`, told apart from a provider that refused before answering).
 *
 * The AI SDK reports stream failures as `error` parts, not as rejections; they are collected here
 * and rethrown as the errors ./errors.ts names.
 */
import { APICallError, type generateText, NoOutputGeneratedError, Output, streamText } from 'ai';
import { CallTimeoutError, StreamBrokenError, StreamErrorEvent } from './errors';
import { type LlmFinding, llmAnswerOutputSchema } from './findings';

export interface CallUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** What the model sent back, whole or in part: for the transcript, success or not. */
export interface CallRecord {
  text: string;
  finishReason: string | null;
  toolCalls: { name: string; input: unknown }[];
  toolResults: { name: string; output: unknown }[];
}

export interface StreamCallArgs {
  model: Parameters<typeof generateText>[0]['model'];
  system: string;
  prompt: string;
  maxOutputTokens: number;
  signal: AbortSignal;
  /** Longest silence allowed: before the first token and between streamed parts. */
  timeoutMs: number;
  onUsage: (usage: CallUsage) => void;
  /** The first token of the answer arrived. */
  onFirstToken: () => void;
  /** What was received, once the call ended (also when it failed). */
  onRecord: (record: CallRecord) => void;
}

const NOT_THE_STREAM = "the answer carried no event of the provider's stream (not an event stream?)";

/** Errors of the protocol itself (a body that is not the provider's stream), not of the transport. */
const PROTOCOL_ERROR = /InvalidResponseData|EmptyResponseBody|TypeValidation|JSONParse/;

export async function streamCall(args: StreamCallArgs): Promise<{ findings: LlmFinding[] }> {
  const timeout = new AbortController();
  const record: CallRecord = { text: '', finishReason: null, toolCalls: [], toolResults: [] };
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => timeout.abort(new CallTimeoutError(args.timeoutMs, record.text.length)),
      args.timeoutMs,
    );
  };
  let opened = false;
  let failure: unknown = null;
  let rawFinishReason: string | null = null;
  let usageCounted = false;
  try {
    arm();
    const result = streamText({
      model: args.model,
      system: args.system,
      prompt: args.prompt,
      output: Output.object({
        schema: llmAnswerOutputSchema,
        name: 'review_findings',
        description: 'Defects found in the diff',
      }),
      temperature: 0,
      maxOutputTokens: args.maxOutputTokens,
      maxRetries: 0,
      abortSignal: AbortSignal.any([args.signal, timeout.signal]),
      // Failures are read from the stream below; the default handler would only log them.
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      arm();
      switch (part.type) {
        case 'start-step':
          // The provider answered 2xx and its stream began.
          opened = true;
          break;
        case 'text-delta':
          if (record.text === '' && part.text !== '') args.onFirstToken();
          record.text += part.text;
          break;
        case 'tool-call':
          if (record.text === '' && record.toolCalls.length === 0) args.onFirstToken();
          record.toolCalls.push({ name: part.toolName, input: part.input });
          break;
        case 'tool-result':
          record.toolResults.push({ name: part.toolName, output: part.output });
          break;
        case 'finish-step':
          record.finishReason = part.finishReason;
          rawFinishReason = part.rawFinishReason ?? null;
          break;
        case 'error':
          failure ??= part.error;
          break;
      }
    }
    clearTimeout(timer);
    if (args.signal.aborted) throw args.signal.reason;
    if (timeout.signal.aborted) throw timeout.signal.reason;
    if (failure !== null) throw classify(failure, opened, record);
    if (rawFinishReason === null && record.text === '' && record.toolCalls.length === 0) {
      // Every chat stream ends with a finish reason: a 2xx body without one was not the stream.
      throw new ProtocolError(NOT_THE_STREAM);
    }
    const usage = await result.usage;
    usageCounted = true;
    args.onUsage({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens });
    // Throws NoObjectGeneratedError when the answer was empty, refused, cut off or off-schema.
    return await result.output;
  } catch (error) {
    if (args.signal.aborted) throw args.signal.reason;
    if (timeout.signal.aborted) throw timeout.signal.reason;
    // A call whose answer failed validation was still paid for.
    const maybeUsage = (error as { usage?: { inputTokens?: number; outputTokens?: number } }).usage;
    if (!usageCounted && maybeUsage && typeof maybeUsage === 'object') {
      args.onUsage({ inputTokens: maybeUsage.inputTokens, outputTokens: maybeUsage.outputTokens });
    }
    // A 2xx whose body then failed is thrown rather than streamed; anything else is the SDK's own.
    throw APICallError.isInstance(error) ? classify(error, opened, record) : error;
  } finally {
    clearTimeout(timer);
    args.onRecord(record);
  }
}

/** A 2xx body outside the provider's protocol; named like the AI SDK's own such errors. */
class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidResponseDataError';
  }
}

/** What a stream's error part means: refused before answering, a provider event, or a broken stream. */
function classify(error: unknown, opened: boolean, record: CallRecord): unknown {
  if (error instanceof StreamBrokenError || error instanceof StreamErrorEvent) return error;
  if (APICallError.isInstance(error)) {
    // "Failed to process successful response": the provider answered 2xx and the body's
    // transport then failed (the socket closed); a body that does not parse is the protocol's.
    const status = error.statusCode ?? 0;
    const cause = error.cause;
    if (status >= 200 && status < 300 && cause instanceof Error && !PROTOCOL_ERROR.test(cause.name))
      return new StreamBrokenError(record.text.length, cause);
    return error;
  }
  if (!(error instanceof Error)) return new StreamErrorEvent(error);
  if (PROTOCOL_ERROR.test(error.name)) return error;
  // A 2xx body that carried no event at all (an HTML page from a proxy, an empty body): the
  // OpenAI providers still end such a stream with a finish part, checked after the loop above,
  // but @ai-sdk/anthropic ends it with none, which the AI SDK reports as "no output generated".
  // Without this it would read as the model's empty answer (payload_contract_violation) instead of
  // a body outside the provider's protocol (provider_terminal), as errors.ts names it.
  if (!opened && NoOutputGeneratedError.isInstance(error)) return new ProtocolError(NOT_THE_STREAM);
  // Before the stream opened, a failed fetch is the provider not being reachable (transient).
  if (!opened) return error;
  return new StreamBrokenError(record.text.length, error);
}
