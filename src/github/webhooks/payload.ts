/**
 * Lenient reading of webhook payloads. Real deliveries (and @octokit/webhooks-examples) often
 * break GitHub's own published schemas, so nothing here validates: every reader takes any JSON
 * value and answers undefined for what is missing or of the wrong type. Handlers that need a
 * field decide themselves what its absence means (usually: ignored, with the reason).
 */

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

/**
 * Parses a delivery body: JSON (`application/json`) or GitHub's form encoding
 * (`application/x-www-form-urlencoded` with the JSON in `payload`). Any JSON object is
 * accepted; anything else answers null.
 */
export function parseDeliveryBody(raw: Buffer, contentType: string | undefined): Json | null {
  let text = raw.toString('utf8');
  if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    text = new URLSearchParams(text).get('payload') ?? '';
  }
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}
