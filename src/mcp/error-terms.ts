/**
 * An error envelope said again in an MCP client's terms. Tool calls go through the HTTP pipeline,
 * whose messages speak REST: headers an MCP client has no way to send ("send the Project-ID
 * header"), and where in the request a value was (`invalid querystring: /limit ...`). A tool's
 * caller has arguments only, so each is named as the argument that carries it.
 */

/** The REST words for what a tool takes as an argument. */
const HEADER_WORDS: readonly [RegExp, string][] = [
  [/send the Project-ID header/g, 'pass the `project_id` argument'],
  [/`?Idempotency-Key`?( header)?/g, 'the `idempotency_key` argument'],
  [/`?If-Match`?( header)?/g, 'the `if_match` argument'],
];

/** Request field names a tool calls otherwise (`id` → `finding_id`; src/operations/tool-arguments.ts). */
type Renames = ReadonlyMap<string, string>;

/** `/id/0` → `finding_id.0`: an issue path as the argument that carries it. */
function argumentOf(path: string, renames: Renames): string {
  const [first, ...rest] = path.split('/').filter(Boolean);
  return first === undefined ? '' : [renames.get(first) ?? first, ...rest].join('.');
}

/** `invalid querystring: /limit must be ...` → `invalid argument \`limit\`: must be ...`. */
function validationInArguments(message: string, renames: Renames): string {
  const m = /^invalid (querystring|body|params|headers): (\/[^ ]*) (.*)$/s.exec(message);
  if (!m) return message;
  const [, , path = '/', rest = ''] = m;
  const argument = argumentOf(path, renames);
  return argument ? `invalid argument \`${argument}\`: ${rest}` : `invalid arguments: ${rest}`;
}

function inArgumentTerms(message: string, renames: Renames): string {
  let out = validationInArguments(message, renames);
  for (const [words, argument] of HEADER_WORDS) out = out.replace(words, argument);
  return out;
}

/**
 * The same envelope with its message (and each validation issue) naming arguments; the code and
 * status stay as they are, so a client handles the error as any REST client would.
 */
export function errorInToolTerms(body: unknown, renames: Renames = new Map()): unknown {
  if (!isRecord(body) || !isRecord(body.error) || typeof body.error.message !== 'string') return body;
  const error: Record<string, unknown> = {
    ...body.error,
    message: inArgumentTerms(body.error.message, renames),
  };
  const details = error.details;
  if (isRecord(details) && Array.isArray(details.issues))
    error.details = {
      ...details,
      issues: details.issues.map((issue: unknown) =>
        isRecord(issue) && typeof issue.path === 'string'
          ? { ...issue, argument: argumentOf(issue.path, renames) || null }
          : issue,
      ),
    };
  return { ...body, error };
}

/** A JSON object (not an array, not null): tool arguments and answer bodies are read through it. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
