/**
 * Input svc refuses anywhere in a request, before any handler or database sees it:
 *
 * - U+0000 (PostgreSQL text cannot hold it, and no identifier, path or message needs it) and
 *   lone UTF-16 surrogates (not Unicode text: they cannot be stored or re-encoded as UTF-8), in
 *   a path or query parameter, a header or any string or key of a JSON body;
 * - a query string whose percent-escapes are not UTF-8 (`%ED%A0%80`, an encoded surrogate;
 *   `%C0%80`, an overlong NUL), which the query parser would otherwise pass on half-decoded;
 *   a path with such escapes is refused by Fastify itself (FST_ERR_BAD_URL);
 * - JSON nested deeper than {@link MAX_DEPTH} levels (free-form payloads are stored as jsonb,
 *   and PostgreSQL refuses very deep documents with an internal error).
 *
 * Each is 400 `validation_failed` naming where. MCP tool arguments are checked with the same
 * function when a tool call is turned into its HTTP request (src/mcp/server.ts).
 */

/** How deep JSON may nest (objects and arrays); no declared schema comes close. */
export const MAX_DEPTH = 64;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const isUnsafe = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

const UNSAFE_TEXT =
  'holds a NUL character or a lone UTF-16 surrogate; send valid Unicode text without U+0000';

/**
 * What is wrong with `value` (a parsed body, the params, the query, the headers, tool
 * arguments), as a message naming where; null when nothing is.
 */
export function describeUnsafeInput(value: unknown, where: string): string | null {
  const found = findUnsafe(value, where, 0);
  if (!found) return null;
  return found.problem === 'unsafe'
    ? `${found.where} ${UNSAFE_TEXT}`
    : `${found.where} nests JSON deeper than ${MAX_DEPTH} levels`;
}

function findUnsafe(
  value: unknown,
  where: string,
  depth: number,
): { where: string; problem: 'unsafe' | 'too_deep' } | null {
  if (typeof value === 'string') return isUnsafe(value) ? { where, problem: 'unsafe' } : null;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return null;
  if (depth >= MAX_DEPTH) return { where, problem: 'too_deep' };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafe(value[i], `${where}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (isUnsafe(key)) return { where: `${where} (a key)`, problem: 'unsafe' };
    const found = findUnsafe(item, `${where}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}

/** Runs of percent-escapes: a multi-byte UTF-8 character is always one run. */
const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * The refusal for a URL whose query string escapes bytes that are not UTF-8, or null. A `%` not
 * followed by two hex digits stays a literal `%`, as in form decoding.
 */
export function describeBadQueryEncoding(url: string): string | null {
  const start = url.indexOf('?');
  if (start < 0) return null;
  for (const run of url.slice(start + 1).match(ESCAPE_RUN) ?? []) {
    try {
      decodeURIComponent(run);
    } catch {
      return `the query string escapes bytes that are not UTF-8 (${run.slice(0, 24)}); percent-encode valid Unicode text`;
    }
  }
  return null;
}
