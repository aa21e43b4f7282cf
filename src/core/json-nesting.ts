/**
 * How deep JSON text nests, counted on the text before it is parsed. Parsing is not where deep
 * JSON hurts (V8's JSON.parse does not recurse) but everything after it does: every walk over the
 * value (input checks, serializing, storing as jsonb) recurses once per level, and 10,000 levels
 * overflow the stack. Refusing it first keeps every later walk safe.
 */

/**
 * The deepest nesting of arrays and objects svc accepts in a request body or webhook delivery.
 * Real GitHub deliveries nest at most 7 levels (the @octokit/webhooks-examples payloads) and API
 * request bodies fewer; 64 leaves room for any honest sender and stays far from a stack limit.
 */
export const JSON_NESTING_LIMIT = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether `text` opens more than `limit` arrays or objects inside one another. One pass, no
 * recursion, no allocation: brackets are counted outside strings (a string's escaped quote does
 * not end it). Text that is not JSON still gets an answer; parsing judges it afterwards.
 */
export function nestsDeeperThan(text: string, limit: number = JSON_NESTING_LIMIT): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** The message of the refusal, the same for the API and webhooks. */
export function nestingRefusal(where: string, limit: number = JSON_NESTING_LIMIT): string {
  return `${where} nests arrays and objects more than ${limit} levels deep; svc accepts at most ${limit}`;
}
