/**
 * The requests an OpenAPI fuzz sends to one operation (test/http/openapi-fuzz.test.ts), each
 * with what its answer must be: one broken place at a time on top of a valid baseline — the
 * key, the `Project-ID`/`Idempotency-Key`/`If-Match` headers, each path and query parameter,
 * the body as a whole (Content-Type, non-objects, bad JSON) and each place in it (from
 * test/helpers/schema-mutations.ts) — then a seeded random mix of two or three of them.
 */
import {
  deepArrayText,
  deepObjectText,
  LONG,
  OTHER_ENCODED,
  SURPRISING_STRINGS,
  UNSAFE_ENCODED,
  UNSAFE_STRINGS,
} from './hostile-values';
import type { DocumentedOperation } from './openapi-operations';
import {
  OMIT,
  type Path,
  paramViolationsOf,
  placesOf,
  type Schema,
  type SchemaOracle,
  setAt,
  violationsOf,
} from './schema-mutations';

/** Random multi-place requests per operation, on top of the one-place ones. */
const RANDOM_PER_OPERATION = 8;

export type Expectation =
  /** 400 validation_failed: NUL or a lone surrogate somewhere. */
  | 'validation_failed'
  /** Any 4xx: malformed per the document, or naming what does not exist. */
  | 'refused'
  /** Anything but a 5xx: hostile, yet possibly valid. */
  | 'any';

export interface Probe {
  /** The place it breaks; a batch is the probes of one site. */
  site: string;
  label: string;
  expect: Expectation;
  /** Path parameter texts (already percent-encoded), query string, headers, body. */
  params?: Record<string, string>;
  query?: string;
  headers?: Record<string, string | undefined>;
  /** A JSON value for the body, or raw text with its Content-Type. */
  body?: { json: unknown } | { raw: string; type?: string } | { none: true; type?: string };
}

const stricter = (a: Expectation, b: Expectation): Expectation =>
  a === 'validation_failed' || b === 'validation_failed'
    ? 'validation_failed'
    : a === 'refused' || b === 'refused'
      ? 'refused'
      : 'any';

/** A PRNG (mulberry32) so that FUZZ_SEED replays a run exactly. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T,
    sample: <T>(list: readonly T[], n: number): T[] => {
      const copy = [...list];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
      }
      return copy.slice(0, n);
    },
  };
}
export type Random = ReturnType<typeof prng>;

const pathText = (path: Path) => path.join('.') || '(top level)';

/** JSON text of `base` with raw JSON text `raw` in place of the value at `path`. */
function rawAt(base: unknown, path: Path, raw: string): string {
  const marker = '"__FUZZ_RAW_MARKER__"';
  return JSON.stringify(setAt(base, path, JSON.parse(marker))).replace(marker, raw);
}

/** An object's JSON text with a raw `"key":value` member added first (JSON.stringify drops `__proto__`). */
function withMember(objectText: string, member: string): string {
  return objectText === '{}' ? `{${member}}` : `{${member},${objectText.slice(1)}`;
}

export interface Baseline {
  params: Record<string, string>;
  body: unknown;
}

/** The probes for one operation: one broken place each, then a random mix. */
export function probesFor(
  op: DocumentedOperation,
  base: Baseline,
  oracle: SchemaOracle,
  random: Random,
): Probe[] {
  const probes: Probe[] = [];
  const headerNames = new Set(op.parameters.filter((p) => p.in === 'header').map((p) => p.name));
  const surprising = (n: number) => random.sample(SURPRISING_STRINGS, n);

  // The baseline itself, unbroken: whatever it answers (a record it names may not exist), never a 5xx.
  probes.push({ site: 'baseline', label: 'unbroken', expect: 'any' });

  // Headers nothing reads: an unsafe one is still refused, the others ignored.
  for (const [label, value] of random.sample(UNSAFE_STRINGS, 1)) {
    probes.push({ site: 'header (other)', label, expect: 'validation_failed', headers: { 'x-fuzz': value } });
  }
  probes.push({
    site: 'header (other)',
    label: '10k characters',
    expect: 'any',
    headers: { 'x-fuzz': LONG },
  });
  probes.push({
    site: 'header (other)',
    label: 'Accept: XML only',
    expect: 'any',
    headers: { accept: 'application/xml' },
  });
  probes.push({
    site: 'header (other)',
    label: 'a malformed Accept-Encoding',
    expect: 'any',
    headers: { 'accept-encoding': 'gzip;q=abc, *;q=-1' },
  });

  // Authorization, where the operation is behind a key.
  for (const [label, value] of !op.secured
    ? []
    : ([
        ['missing', undefined],
        ['no key', 'Bearer'],
        ['an unknown key', 'Bearer svc_ws_0000000000000000000000000000000000000000'],
        ['not a key', 'Bearer not-a-key'],
        ['Basic', 'Basic Zm9vOmJhcg=='],
        ['the key twice', 'Bearer a b'],
      ] as const)) {
    probes.push({
      site: 'header authorization',
      label,
      expect: 'refused',
      headers: { authorization: value },
    });
  }
  for (const [label, value] of random.sample(UNSAFE_STRINGS, 1)) {
    // Checked before any route, key or not.
    probes.push({
      site: 'header authorization',
      label,
      expect: 'validation_failed',
      headers: { authorization: value },
    });
  }

  // Project-ID: only where no path parameter names the project.
  if (headerNames.has('project-id') && !op.parameters.some((p) => p.name === 'project_id')) {
    const site = 'header project-id';
    for (const [label, value] of [
      ['missing', undefined],
      ['empty', ''],
      ['unknown', 'prj_01jzzzzzzzzzzzzzzzzzzzzzzz'],
      ['a task id', 'tsk_01jzzzzzzzzzzzzzzzzzzzzzzz'],
      ['no prefix', '01jzzzzzzzzzzzzzzzzzzzzzzz'],
      ['10k characters', LONG],
    ] as const) {
      probes.push({ site, label, expect: 'refused', headers: { 'project-id': value } });
    }
    for (const [label, value] of random.sample(UNSAFE_STRINGS, 1)) {
      probes.push({ site, label, expect: 'validation_failed', headers: { 'project-id': value } });
    }
    for (const [label, value] of surprising(2)) {
      probes.push({ site, label, expect: 'refused', headers: { 'project-id': value } });
    }
  }

  // Idempotency-Key: outside its grammar (1-255 visible ASCII characters).
  if (headerNames.has('idempotency-key')) {
    const site = 'header idempotency-key';
    for (const [label, value] of [
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['a space inside', 'a key'],
      ['a tab inside', 'a\tkey'],
      ['not ASCII', 'clé-ключ'],
      ['10k characters', LONG],
    ] as const) {
      probes.push({ site, label, expect: 'refused', headers: { 'idempotency-key': value } });
    }
    for (const [label, value] of random.sample(UNSAFE_STRINGS, 1)) {
      probes.push({ site, label, expect: 'validation_failed', headers: { 'idempotency-key': value } });
    }
  }

  // If-Match: missing, or naming no current revision.
  if (headerNames.has('if-match')) {
    const site = 'header if-match';
    for (const [label, value] of [
      ['missing', undefined],
      ['empty', ''],
      ['a wildcard', '*'],
      ['not a number', '"abc"'],
      ['revision 0', '"0"'],
      ['negative', '"-1"'],
      ['a fraction', '"1.5"'],
      ['a future revision', 'W/"999"'],
      ['past the safe integers', '"99999999999999999999999"'],
      ['a list', '"1", "2"'],
      ['10k characters', LONG],
    ] as const) {
      probes.push({ site, label, expect: 'refused', headers: { 'if-match': value } });
    }
    for (const [label, value] of UNSAFE_STRINGS) {
      probes.push({ site, label, expect: 'validation_failed', headers: { 'if-match': value } });
    }
  }

  // Path parameters: wrong prefixes, wrong lengths, what breaks the schema, hostile texts.
  for (const param of op.parameters.filter((p) => p.in === 'path')) {
    const site = `path ${param.name}`;
    const real = base.params[param.name] ?? 'x';
    const at = (text: string) => ({ [param.name]: text });
    const underscore = real.indexOf('_');
    const tail = underscore >= 0 ? real.slice(underscore + 1) : real;
    const variants: [string, string][] = [
      ['another kind of id', `${underscore >= 0 && real.startsWith('tsk_') ? 'prj' : 'tsk'}_${tail}`],
      ['no prefix', tail],
      ['an unknown prefix', `zzz_${tail}`],
      ['upper case', real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase()],
      ['one character more', `${real}0`],
      ['one character less', real.slice(0, -1)],
      ['surrounded by spaces', ` ${real} `],
      ['201 characters', 'a'.repeat(201)],
    ];
    for (const [label, text] of variants) {
      if (text === real || text === '') continue;
      probes.push({ site, label, expect: 'refused', params: at(encodeURIComponent(text)) });
    }
    for (const v of paramViolationsOf(param.schema, real, true, oracle)) {
      if (typeof v.wire !== 'string') continue;
      // An empty segment is another route, or none: a 404 either way.
      probes.push({ site, label: v.label, expect: 'refused', params: at(encodeURIComponent(v.wire)) });
    }
    for (const [label, text] of random.sample(UNSAFE_ENCODED, 2)) {
      probes.push({ site, label, expect: 'validation_failed', params: at(text) });
    }
    for (const [label, text] of random.sample(OTHER_ENCODED, 3)) {
      // `..` is resolved away by the URL parser: the request is for another route, which may exist.
      probes.push({ site, label, expect: text === '..' ? 'any' : 'refused', params: at(text) });
    }
    for (const [label, text] of surprising(2)) {
      probes.push({ site, label, expect: 'refused', params: at(encodeURIComponent(text)) });
    }
  }

  // Query parameters: what breaks each schema, repeats, hostile texts; one the document does not declare.
  for (const param of op.parameters.filter((p) => p.in === 'query')) {
    const site = `query ${param.name}`;
    const name = param.name;
    const text = (wire: string | string[]) =>
      (Array.isArray(wire) ? wire : [wire]).map((w) => `${name}=${encodeURIComponent(w)}`).join('&');
    for (const v of paramViolationsOf(param.schema, 'fuzz', param.required ?? false, oracle)) {
      probes.push({ site, label: v.label, expect: 'refused', query: text(v.wire) });
    }
    for (const [label, value] of random.sample(UNSAFE_ENCODED, 2)) {
      probes.push({ site, label, expect: 'validation_failed', query: `${name}=${value}` });
    }
    for (const [label, value] of random.sample(OTHER_ENCODED, 3)) {
      probes.push({ site, label, expect: 'any', query: `${name}=${value}` });
    }
    for (const [label, value] of surprising(2))
      probes.push({ site, label, expect: 'any', query: text(value) });
    probes.push({ site, label: 'bracket syntax', expect: 'any', query: `${name}[__proto__][x]=1` });
  }
  probes.push({
    site: 'query (undeclared)',
    label: 'an undeclared parameter',
    expect: 'any',
    query: 'undeclared_parameter=1',
  });
  probes.push({
    site: 'query (undeclared)',
    label: 'prototype keys',
    expect: 'any',
    query: '__proto__[polluted]=1&constructor[prototype][polluted]=1',
  });
  for (const [label, value] of UNSAFE_ENCODED.slice(0, 2)) {
    probes.push({
      site: 'query (undeclared)',
      label,
      expect: 'validation_failed',
      query: `undeclared_parameter=${value}`,
    });
  }

  if (op.body) probes.push(...bodyProbes(op.body, base.body, oracle, random));
  else {
    // No body declared: one sent anyway is ignored or refused, never a 5xx.
    probes.push({
      site: 'body (undeclared)',
      label: 'a JSON object',
      expect: 'any',
      body: { json: { fuzz: 1 } },
    });
    probes.push({
      site: 'body (undeclared)',
      label: 'text/plain',
      expect: 'any',
      body: { raw: 'fuzz', type: 'text/plain' },
    });
    probes.push({
      site: 'body (undeclared)',
      label: 'NUL in a JSON body',
      expect: 'any',
      body: { json: { fuzz: 'a\u0000b' } },
    });
  }

  probes.push(...randomMix(probes, random, RANDOM_PER_OPERATION));
  return probes;
}

function bodyProbes(schema: Schema, body: unknown, oracle: SchemaOracle, random: Random): Probe[] {
  const probes: Probe[] = [];
  const json = (value: unknown) => ({ json: value });

  // The body as a whole.
  const whole = 'body (whole)';
  const text = JSON.stringify(body);
  for (const [label, raw, type] of [
    ['empty, as JSON', '', 'application/json'],
    ['a JSON array', '[]', 'application/json'],
    ['a JSON string', '"x"', 'application/json'],
    ['a JSON number', '1', 'application/json'],
    ['JSON true', 'true', 'application/json'],
    ['JSON null', 'null', 'application/json'],
    ['truncated JSON', text.slice(0, -1), 'application/json'],
    ['trailing garbage', `${text}x`, 'application/json'],
    ['single quotes', text.replaceAll('"', "'"), 'application/json'],
    ['a comment', `/* c */${text}`, 'application/json'],
    ['NaN', '{"x":NaN}', 'application/json'],
    random.pick([
      ['10k-deep object', deepObjectText(10_000), 'application/json'],
      ['100k-deep array', deepArrayText(100_000), 'application/json'],
    ] as const),
    ['__proto__ member', withMember(text, '"__proto__":{"polluted":true}'), 'application/json'],
    [
      'constructor.prototype member',
      withMember(text, '"constructor":{"prototype":{"polluted":true}}'),
      'application/json',
    ],
    ['as text/plain', text, 'text/plain'],
    ...random.sample(
      [
        ['as a form', 'a=1&b=2', 'application/x-www-form-urlencoded'],
        [
          'as multipart',
          '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--',
          'multipart/form-data; boundary=b',
        ],
        ['as XML', '<a>1</a>', 'application/xml'],
        ['as another JSON type', text, 'application/vnd.api+json'],
        ['a made-up Content-Type', text, 'fuzz/fuzz'],
      ] as const,
      2,
    ),
  ] as const) {
    probes.push({ site: whole, label, expect: 'refused', body: { raw, type } });
  }
  probes.push({ site: whole, label: 'no body and no Content-Type', expect: 'refused', body: { none: true } });
  probes.push({
    site: whole,
    label: 'no body, Content-Type JSON',
    expect: 'refused',
    body: { none: true, type: 'application/json' },
  });
  probes.push({
    site: whole,
    label: 'over the body limit',
    expect: 'refused',
    body: { raw: `{"x":"${'x'.repeat(2 * 1024 * 1024)}"}`, type: 'application/json' },
  });
  for (const v of violationsOf(schema, body, oracle, true)) {
    probes.push({ site: whole, label: v.label, expect: 'refused', body: json(v.value) });
  }
  for (const [label, key] of random.sample(UNSAFE_STRINGS, 1)) {
    probes.push({
      site: whole,
      label: `a key with ${label}`,
      expect: 'validation_failed',
      body: json({ ...(body as object), [key]: 'x' }),
    });
  }

  // Each place in it.
  for (const place of placesOf(schema, body, oracle)) {
    const site = `body ${pathText(place.path)}`;
    if (place.required)
      probes.push({
        site,
        label: 'left out (required)',
        expect: 'refused',
        body: json(setAt(body, place.path, OMIT)),
      });
    // Every broken keyword; of the wrong types, a few (the seed picks which).
    const violations = violationsOf(place.schema, place.value, oracle);
    for (const v of [
      ...violations.filter((c) => c.kind === 'constraint'),
      ...random.sample(
        violations.filter((c) => c.kind === 'type'),
        3,
      ),
    ]) {
      probes.push({ site, label: v.label, expect: 'refused', body: json(setAt(body, place.path, v.value)) });
    }
    const accepts = (value: unknown) => oracle.accepts(place.schema, value);
    if (typeof place.value === 'string' || accepts('fuzz')) {
      // One of the unsafe strings per place (test/http/fuzz.test.ts tries each at every string).
      for (const [label, value] of random.sample(UNSAFE_STRINGS, 1)) {
        probes.push({ site, label, expect: 'validation_failed', body: json(setAt(body, place.path, value)) });
      }
      for (const [label, value] of random.sample(SURPRISING_STRINGS, 2)) {
        probes.push({
          site,
          label,
          expect: accepts(value) ? 'any' : 'refused',
          body: json(setAt(body, place.path, value)),
        });
      }
    }
    if (place.value !== null && typeof place.value === 'object' && !Array.isArray(place.value)) {
      for (const [label, key] of UNSAFE_STRINGS.slice(0, 1)) {
        probes.push({
          site,
          label: `a key with ${label}`,
          expect: 'validation_failed',
          body: json(setAt(body, place.path, { ...(place.value as object), [key]: 'x' })),
        });
      }
      const inner = JSON.stringify(place.value);
      probes.push({
        site,
        label: '__proto__ member',
        expect: 'refused',
        body: {
          raw: rawAt(body, place.path, withMember(inner, '"__proto__":{"polluted":true}')),
          type: 'application/json',
        },
      });
    }
    if (random.next() < 0.3) {
      probes.push({
        site,
        label: '65-deep object',
        expect: 'refused',
        body: { raw: rawAt(body, place.path, deepObjectText(65)), type: 'application/json' },
      });
    }
  }
  return probes;
}

/**
 * Requests that break two or three places at once, picked from the one-place probes: the
 * answer must follow the strictest expectation of the parts.
 */
function randomMix(probes: Probe[], random: Random, count: number): Probe[] {
  const mixable = probes.filter((p) => !('raw' in (p.body ?? {})) && !('none' in (p.body ?? {})));
  const mixes: Probe[] = [];
  for (let i = 0; i < count && mixable.length > 1; i++) {
    const parts: Probe[] = [];
    for (const candidate of random.sample(mixable, 6)) {
      const clash = parts.some((p) => p.site === candidate.site || (p.body && candidate.body));
      if (parts.length < 2 + Math.floor(random.next() * 2) && !clash) {
        parts.push(candidate);
      }
    }
    const mix: Probe = {
      site: 'random mix',
      label: parts.map((p) => `${p.site}: ${p.label}`).join(' + '),
      expect: 'any',
    };
    for (const part of parts) {
      mix.expect = stricter(mix.expect, part.expect);
      if (part.params) mix.params = { ...mix.params, ...part.params };
      if (part.query) mix.query = mix.query ? `${mix.query}&${part.query}` : part.query;
      if (part.headers) mix.headers = { ...mix.headers, ...part.headers };
      if (part.body) mix.body = part.body;
    }
    // Which of two problems is reported first is the server's choice: a 4xx either way.
    if (parts.some((p) => p.expect !== 'validation_failed') && mix.expect === 'validation_failed')
      mix.expect = 'refused';
    mixes.push(mix);
  }
  return mixes;
}
