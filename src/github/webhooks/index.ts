/** Receiving GitHub webhooks: signatures, storage of deliveries, the handler registry, the task kind. */
export { type Accepted, acceptDelivery } from './deliveries';
export { registerInstallationHandlers } from './installations';
export { deliveryFacts, type Json, type ParsedDelivery, parseDeliveryBody } from './payload';
export { WEBHOOK_IGNORED_GAP, webhookTaskHandler } from './process';
export {
  findWebhookHandler,
  ignored,
  processed,
  registeredWebhookHandlers,
  registerWebhookHandler,
  type WebhookContext,
  type WebhookDeps,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookOutcome,
} from './registry';
export { type Rejection, type RejectionReason, RejectionTally } from './rejections';
export { checkSignature, type SignatureProblem, signPayload, verifySignature } from './signature';
