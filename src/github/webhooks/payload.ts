/**
 * Lenient reading of webhook payloads. Real deliveries (and @octokit/webhooks-examples) often
 * break GitHub's own published schemas, so nothing here validates: every reader takes any JSON
 * value and answers undefined for what is missing or of the wrong type. Handlers that need a
 * field decide themselves what its absence means (usually: ignored, with the reason).
 */
import { nestsDeeperThan } from '../../core/json-nesting';

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function obj(value: unknown): Json | undefined {
  return isObject(value) ? value : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A positive safe integer (ids), also from a numeric string. */
export function int(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `owner/repo` of a repository object: `full_name`, else `owner.login` + `name`. */
export function repoFullName(repository: unknown): string | undefined {
  const repo = obj(repository);
  if (!repo) return undefined;
  const full = str(repo.full_name);
  if (full) return full;
  const owner = str(obj(repo.owner)?.login) ?? str(obj(repo.owner)?.name);
  const name = str(repo.name);
  return owner && name ? `${owner}/${name}` : undefined;
}

/** The routing facts stored on the delivery row, read without trusting the payload's shape. */
export interface DeliveryFacts {
  action: string | null;
  installationId: number | null;
  repository: string | null;
}

export function deliveryFacts(payload: Json): DeliveryFacts {
  return {
    action: str(payload.action) ?? null,
    installationId: int(obj(payload.installation)?.id) ?? null,
    repository: repoFullName(payload.repository) ?? null,
  };
}

/** A delivery body read: its payload, or why it cannot be one. */
export type ParsedDelivery = { payload: Json } | { problem: 'body_unreadable' | 'body_too_deep' };

/**
 * Parses a delivery body: JSON (`application/json`) or GitHub's form encoding
 * (`application/x-www-form-urlencoded` with the JSON in `payload`). Any JSON object is
 * accepted; JSON nested deeper than JSON_NESTING_LIMIT is refused before it is parsed (every
 * later walk over it would recurse once per level), anything else that is not a JSON object is
 * unreadable.
 */
export function parseDeliveryBody(raw: Buffer, contentType: string | undefined): ParsedDelivery {
  let text = raw.toString('utf8');
  if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    text = new URLSearchParams(text).get('payload') ?? '';
  }
  if (nestsDeeperThan(text)) return { problem: 'body_too_deep' };
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? { payload: value } : { problem: 'body_unreadable' };
  } catch {
    return { problem: 'body_unreadable' };
  }
}
