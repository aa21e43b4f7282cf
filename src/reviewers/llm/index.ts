/** The LLM reviewer engine: run a reviewer's instructions with a model over a diff. */
export { DEFAULT_RETRY, type LlmReviewerOptions, type RetryPolicy, runLlmReviewer } from './engine';
export { toRunFailure } from './errors';
export { llmAnswerSchema, llmFindingSchema } from './findings';
export {
  configuredProviders,
  defaultContextTokens,
  type Env,
  type FetchFunction,
  PRICES,
  type ProviderKind,
  type ProviderStatus,
  priceOf,
  resolveModel,
  tokenCost,
} from './providers';
