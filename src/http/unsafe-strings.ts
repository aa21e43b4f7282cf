/**
 * Strings svc refuses anywhere in a request: U+0000 (PostgreSQL text cannot hold it, and no
 * identifier, path or message needs it) and lone UTF-16 surrogates (not Unicode text: they
 * cannot be stored or re-encoded as UTF-8). Either, in a path or query parameter, a header or
 * any string or key of a JSON body, is 400 `validation_failed` naming where, before any handler
 * or database sees it.
 */

/** How deep a body is searched; deeper JSON is refused by the schemas long before this. */
const MAX_DEPTH = 64;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const isUnsafe = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/** Where `value` holds an unsafe string (`body.items[2].name`), or null when it holds none. */
export function findUnsafeString(value: unknown, where: string, depth = 0): string | null {
  if (typeof value === 'string') return isUnsafe(value) ? where : null;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || Buffer.isBuffer(value)) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeString(value[i], `${where}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (isUnsafe(key)) return `${where} (a key)`;
    const found = findUnsafeString(item, `${where}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}
