/**
 * Hostile inputs the fuzz tests send (test/http/fuzz.test.ts, test/http/openapi-fuzz.test.ts):
 * one list, so a value found to matter once is tried everywhere.
 */

/** Must be 400 `validation_failed` wherever they are (src/http/unsafe-strings.ts). */
export const UNSAFE_STRINGS: [string, string][] = [
  ['NUL', 'a\u0000b'],
  ['lone high surrogate', 'a\ud800b'],
  ['lone low surrogate', '\udc00'],
];

/** Longer than any field svc declares. */
export const LONG = 'x'.repeat(10_000);

/** Values of the wrong type for most fields: must never be a 5xx. */
export const WRONG_TYPES: [string, unknown][] = [
  ['10k-character string', LONG],
  ['huge number', 1e308],
  ['negative number', -1],
  ['boolean', true],
  ['null', null],
  ['array', ['x']],
  ['object', { x: 'y' }],
];

/**
 * Valid Unicode that has broken services elsewhere (injection, escaping, normalisation,
 * prototype keys, numbers in disguise): a field may accept them, but never with a 5xx.
 */
export const SURPRISING_STRINGS: [string, string][] = [
  ['SQL quote', "' OR '1'='1' --"],
  ['SQL statement', '"); DROP TABLE projects; --'],
  ['script tag', '<script>alert(1)</script>'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder is the hostile part.
  ['template expression', '${7*7}{{7*7}}#{7*7}'],
  ['format specifiers', '%s%n%x%d%%'],
  ['path traversal', '../../../../etc/passwd'],
  ['right-to-left override', 'abc\u202edcba'],
  ['zero-width and BOM', '\ufeff\u200b\u200d'],
  ['astral and combining', '🚀Z\u0351\u0360\u0489'],
  ['highest code point', '\u{10ffff}'],
  ['only spaces', '   '],
  ['CR LF', 'a\r\nb: c'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['number-like', '-0'],
  ['full-width digits', '１２３'],
];

/** Deeply nested JSON texts (deeper than MAX_DEPTH must be a 400, never a stack overflow). */
export const deepObjectText = (depth: number) => `${'{"a":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`;
export const deepArrayText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Percent-encoded path/query values that must be 400 `validation_failed`. */
export const UNSAFE_ENCODED: [string, string][] = [
  ['encoded NUL', 'a%00b'],
  ['encoded high surrogate (CESU-8)', '%ED%A0%80'],
  ['encoded low surrogate (CESU-8)', 'x%ED%B0%80'],
  ['overlong NUL', '%C0%80'],
  ['truncated UTF-8', '%E2%82'],
];

/** Percent-encoded path/query values that must never be a 5xx. */
export const OTHER_ENCODED: [string, string][] = [
  ['10k characters', LONG],
  ['__proto__', '__proto__'],
  ['dot-dot', '..'],
  ['encoded slash', 'a%2F..%2Fb'],
  ['astral', encodeURIComponent('🚀')],
  ['bad escape', '%zz'],
  ['negative', '-1'],
  ['huge', '1e309'],
];
