/**
 * The webhook handler registry: which code handles which GitHub event. The `webhook` task kind
 * (process.ts) loads a delivery, resolves what the handler needs (installation, project) and
 * calls the handler registered for `event.action`, else for `event`.
 *
 *   registerWebhookHandler('pull_request', handler)          // every action
 *   registerWebhookHandler('pull_request.opened', handler)   // one action; wins over the above
 *   registerWebhookHandler('push', handler, { needs: 'installation' })
 *
 * Handlers run inside a run, never in the HTTP acknowledgement, and may take their time. They
 * must be idempotent: a replacement run (worker crash) executes the same delivery again.
 * They answer `processed(...)` or `ignored(reason)`; throwing a RunFailure fails the run by
 * that name, any other error fails it `unknown`. Either way the delivery row records the outcome.
 */
import type { Logger } from 'pino';
import type { CodeHosts } from '../../codehost';
import type { Engine } from '../../engine/engine';
import type { RunContext } from '../../engine/types';
import type { Database } from '../../storage/database';
import type { installations, projects, webhookDeliveries } from '../../storage/schema';
import type { Json } from './payload';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type InstallationRow = typeof installations.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;

/** The long-lived services webhook handlers may use (given to the task kind in main.ts). */
export interface WebhookDeps {
  engine: Engine;
  codeHosts: CodeHosts;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

export interface WebhookContext {
  delivery: DeliveryRow;
  /** The delivery's JSON object, unvalidated: read it with the helpers in payload.ts. */
  payload: Json;
  event: string;
  action: string | null;
  /** The active installation the delivery names; set when the handler `needs` it (or a project). */
  installation: InstallationRow | null;
  /** The project of `repository.full_name` on that installation; set when the handler `needs: 'project'`. */
  project: ProjectRow | null;
  db: Database;
  run: RunContext;
  deps: WebhookDeps;
}

export type WebhookOutcome =
  | { status: 'processed'; summary?: string; result?: Json }
  | { status: 'ignored'; reason: string };

export type WebhookHandler = (ctx: WebhookContext) => Promise<WebhookOutcome>;

export interface WebhookHandlerOptions {
  /**
   * What must be known before the handler is called; when it is not, the delivery is `ignored`
   * with the reason ("unknown installation 42", "repository acme/x is not a project") and the
   * handler is not called. Default `project`.
   */
  needs?: 'nothing' | 'installation' | 'project';
}

export interface WebhookRegistration {
  key: string;
  handler: WebhookHandler;
  needs: NonNullable<WebhookHandlerOptions['needs']>;
}

const handlers = new Map<string, WebhookRegistration>();

/**
 * Registers (or replaces) the handler of `event` or `event.action`. Returns a function that
 * removes this registration again (tests).
 */
export function registerWebhookHandler(
  key: string,
  handler: WebhookHandler,
  options: WebhookHandlerOptions = {},
): () => void {
  if (!/^[a-z0-9_]+(\.[a-z0-9_-]+)?$/i.test(key)) {
    throw new Error(`webhook handler key must be "event" or "event.action", got "${key}"`);
  }
  const registration: WebhookRegistration = { key, handler, needs: options.needs ?? 'project' };
  handlers.set(key, registration);
  return () => {
    if (handlers.get(key) === registration) handlers.delete(key);
  };
}

/** Registers only when nothing is registered under `key` (built-ins yield to the lead's handlers). */
export function registerDefaultWebhookHandler(
  key: string,
  handler: WebhookHandler,
  options: WebhookHandlerOptions = {},
): void {
  if (!handlers.has(key)) registerWebhookHandler(key, handler, options);
}

/** The handler for a delivery: `event.action` first, then `event`. */
export function findWebhookHandler(event: string, action: string | null): WebhookRegistration | undefined {
  return (action === null ? undefined : handlers.get(`${event}.${action}`)) ?? handlers.get(event);
}

/** Whether anything at all handles `event` (to say "no handler for event X" vs "… for X.action"). */
export function handlesEvent(event: string): boolean {
  for (const key of handlers.keys()) if (key === event || key.startsWith(`${event}.`)) return true;
  return false;
}

export function registeredWebhookHandlers(): string[] {
  return [...handlers.keys()].sort();
}

export const processed = (summary?: string, result?: Json): WebhookOutcome => ({
  status: 'processed',
  ...(summary === undefined ? {} : { summary }),
  ...(result === undefined ? {} : { result }),
});

export const ignored = (reason: string): WebhookOutcome => ({ status: 'ignored', reason });
