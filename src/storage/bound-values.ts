/**
 * Database errors without the values bound to their statements. drizzle's DrizzleQueryError
 * writes every parameter of the failed statement into its message and stack ("params: ..."), and
 * PostgreSQL's `detail` quotes the values of a violated key: key digests, webhook payloads,
 * finding bodies. Logs and run failures carry the statement and the reason, never the values.
 */

/** What stands in a message for the parameters of a failed statement. */
const withheld = (count: number) => `params: ${count} withheld`;

interface QueryError extends Error {
  query: string;
  params: unknown[];
}

function isQueryError(error: Error): error is QueryError {
  const e = error as Partial<QueryError>;
  return typeof e.query === 'string' && Array.isArray(e.params) && error.message.startsWith('Failed query: ');
}

/** Bound values shorter than this are not searched for in messages (`1` would mangle every number). */
const SHORTEST_WITHHELD = 4;

/** The text forms in which a statement's parameters can be echoed back by the database. */
function textsOf(params: unknown[]): string[] {
  return params
    .map((p) => (typeof p === 'string' ? p : p instanceof Date || typeof p === 'object' ? null : String(p)))
    .filter((p): p is string => p !== null && p.length >= SHORTEST_WITHHELD)
    .sort((a, b) => b.length - a.length);
}

function withheldFrom(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) out = out.split(value).join('…');
  return out;
}

/**
 * Removes bound values from `error` and the errors it wraps, in place (the same objects stay, so
 * checks on the cause chain still see the driver's error), and returns it: a failed statement's
 * parameters become their count; where the database echoes one back (`invalid input syntax for
 * type integer: "…"`) it becomes `…`; and so do the values in PostgreSQL's `detail`.
 */
export function withoutBoundValues<T>(error: T): T {
  const seen = new Set<unknown>();
  let values: string[] = [];
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (isQueryError(e) && e.params.length > 0) {
      values = [...values, ...textsOf(e.params)];
      const message = `Failed query: ${e.query}\n${withheld(e.params.length)}`;
      if (e.stack?.includes(e.message)) e.stack = e.stack.replace(e.message, message);
      e.message = message;
      e.params = [];
    }
    e.message = withheldFrom(e.message, values);
    if (e.stack) e.stack = withheldFrom(e.stack, values);
    const withDetail = e as Error & { detail?: unknown };
    if (typeof withDetail.detail === 'string') {
      // "Key (key_digest)=(3f9a…) already exists.", 'Token "x" is invalid.': the columns stay, the values go.
      withDetail.detail = withheldFrom(withDetail.detail, values)
        .replace(/\)=\((?:[^()]|\([^()]*\))*\)/g, ')=(…)')
        .replace(/"[^"]*"/g, '"…"');
    }
  }
  return error;
}

/** `error`'s message, bound values removed: for run failures and gaps that quote an error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? withoutBoundValues(error).message : String(error);
}
