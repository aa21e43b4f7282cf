/**
 * Malformed values from a JSON Schema (an OpenAPI document's parameter or request body
 * schema), one place at a time: a valid baseline made by json-schema-faker, then every place in
 * it (each property, array item, map entry) swapped for values that break the schema there —
 * wrong JSON types, null where null is not allowed, outside the enum, below the minimum and
 * above the maximum, too short and too long, off the pattern or format, too many items, an
 * extra property where none is allowed, a required property left out. Whether a value breaks
 * the schema is decided by a JSON Schema validator (Ajv, draft 2020-12 as OpenAPI 3.1 uses),
 * not guessed: a candidate the schema accepts is dropped, or kept as merely hostile.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { generateSync } from 'json-schema-faker';

export type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
};

export type Path = (string | number)[];

/** Marks a property to leave out. */
export const OMIT = Symbol('omit');

export interface Candidate {
  label: string;
  value: unknown;
  /** `type`: a value of another JSON type; `constraint`: the right type, breaking a keyword. */
  kind: 'type' | 'constraint';
}

/** Answers "does this schema accept this value?" with a real JSON Schema validator. */
export class SchemaOracle {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
  // Parameters arrive as text: Fastify coerces them to the declared type before validating.
  private readonly coercing = new Ajv2020({
    strict: false,
    allErrors: false,
    validateSchema: false,
    coerceTypes: true,
  });
  private readonly compiled = new WeakMap<Schema, ValidateFunction>();
  private readonly compiledParams = new WeakMap<Schema, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
    addFormats(this.coercing);
  }

  accepts(schema: Schema, value: unknown): boolean {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate(structuredClone(value)) === true;
  }

  /** For a path or query parameter: `wire` is what the parser hands over (text, or a list of texts). */
  acceptsParam(schema: Schema, wire: string | string[] | undefined, required: boolean): boolean {
    let validate = this.compiledParams.get(schema);
    if (!validate) {
      validate = this.coercing.compile({
        type: 'object',
        properties: { v: schema },
        ...(required ? { required: ['v'] } : {}),
      });
      this.compiledParams.set(schema, validate);
    }
    return validate(wire === undefined ? {} : { v: structuredClone(wire) }) === true;
  }
}

/** The branches of an anyOf/oneOf (the schema itself when it has none). */
function branches(schema: Schema): Schema[] {
  const alternatives = schema.anyOf ?? schema.oneOf;
  return alternatives ? alternatives.flatMap(branches) : [schema];
}

const typesOf = (schema: Schema): string[] =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];

/**
 * A baseline the schema accepts (and `alsoValid` too, e.g. the server's own schema), from
 * json-schema-faker with every optional property filled, tried over a few seeds; the first
 * schema-valid one when none satisfies `alsoValid` (`servedValid: false`).
 */
export function baselineFor(
  schema: Schema,
  oracle: SchemaOracle,
  seed: number,
  alsoValid: (value: unknown) => boolean = () => true,
): { value: unknown; servedValid: boolean } {
  let fallback: { value: unknown } | null = null;
  for (let attempt = 0; attempt < 24; attempt++) {
    const value = generateSync(schema as never, {
      seed: seed + attempt,
      alwaysFakeOptionals: attempt % 3 !== 2,
      useDefaultValue: false,
      maxItems: 2,
    });
    if (!oracle.accepts(schema, value)) continue;
    if (alsoValid(value)) return { value, servedValid: true };
    fallback ??= { value };
  }
  if (fallback) return { value: fallback.value, servedValid: false };
  throw new Error(`json-schema-faker made no value that ${JSON.stringify(schema).slice(0, 200)} accepts`);
}

/** A place in a baseline: where it is, the schema there, and whether its parent requires it. */
export interface Place {
  path: Path;
  schema: Schema;
  required: boolean;
  value: unknown;
}

/**
 * Every place of `value` under `schema`: each declared property (present or not), each
 * present map entry and the first item of each array; under an anyOf, the branch the value
 * matches.
 */
export function placesOf(schema: Schema, value: unknown, oracle: SchemaOracle, path: Path = []): Place[] {
  const found: Place[] = [];
  const branch = branches(schema).find((b) => oracle.accepts(b, value)) ?? schema;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    for (const [key, property] of Object.entries(branch.properties ?? {})) {
      const required = branch.required?.includes(key) ?? false;
      found.push({ path: [...path, key], schema: property, required, value: object[key] });
      if (key in object) found.push(...placesOf(property, object[key], oracle, [...path, key]));
    }
    if (typeof branch.additionalProperties === 'object') {
      for (const key of Object.keys(object).filter((k) => !(k in (branch.properties ?? {})))) {
        const entry = branch.additionalProperties;
        found.push({ path: [...path, key], schema: entry, required: false, value: object[key] });
        found.push(...placesOf(entry, object[key], oracle, [...path, key]));
      }
    }
  } else if (Array.isArray(value) && branch.items && value.length > 0) {
    found.push({ path: [...path, 0], schema: branch.items, required: true, value: value[0] });
    found.push(...placesOf(branch.items, value[0], oracle, [...path, 0]));
  }
  return found;
}

/** `base` with `value` at `path` (OMIT: the property left out). */
export function setAt(base: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let cursor = copy;
  for (const step of path.slice(0, -1)) cursor = cursor[step] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === OMIT) delete cursor[last];
  else cursor[last] = value;
  return copy;
}

const PATTERN_BREAKERS = [
  '',
  ' ',
  'UPPER',
  'has space',
  '-leading-dash',
  '.leading-dot',
  'trailing/',
  'ünïcödé',
  '../etc',
  'a'.repeat(70),
  '0xZZ',
];
const DATE_TIME_BREAKERS = [
  '2024-02-30T00:00:00Z',
  '2024-01-01',
  '2024-01-01T25:61:00Z',
  '2024-01-01T00:00:00',
  'yesterday',
  '1700000000',
  '+275760-09-13T00:00:00Z',
];
const DATE_BREAKERS = ['2024-13-01', '2024-02-30', '20240101', 'today', '2024-01-01T00:00:00Z'];

/** Values that might break `schema` (before the oracle decides), given the baseline there. */
function candidates(schema: Schema, baseline: unknown, wide = false): Candidate[] {
  const types: [string, unknown][] = [
    ['a string', 'fuzz'],
    ['an integer', 7],
    ['a fraction', 1.5],
    ['a boolean', true],
    ['null', null],
    ['an empty array', []],
    ['an object', { fuzz: 1 }],
    ['the value wrapped in an array', [baseline]],
    ['the value as JSON text', JSON.stringify(baseline) ?? 'undefined'],
  ];
  const out: Candidate[] = types.map(([label, value]) => ({ label, value, kind: 'type' }));
  const push = (label: string, value: unknown) => out.push({ label, value, kind: 'constraint' });
  for (const b of branches(schema)) {
    for (const e of (b.enum ?? []).slice(0, 2)) {
      if (typeof e !== 'string') continue;
      push(`"${e}" in other case`, e === e.toUpperCase() ? e.toLowerCase() : e.toUpperCase());
      push(`"${e}" with a trailing space`, `${e} `);
      push(`not in the enum`, `${e}_not_an_option`);
    }
    const types = typesOf(b);
    if (types.includes('string')) {
      const seedText = typeof baseline === 'string' && baseline.length > 0 ? baseline : 'x';
      if (b.minLength !== undefined && b.minLength > 0) {
        push(`shorter than minLength ${b.minLength}`, seedText.slice(0, b.minLength - 1));
      }
      if (b.maxLength !== undefined) {
        const over = seedText.padEnd(b.maxLength + 1, seedText.at(-1));
        push(`longer than maxLength ${b.maxLength}`, over);
      }
      if (b.pattern) {
        for (const text of [...PATTERN_BREAKERS, `${seedText}!`, ` ${seedText}`, seedText.toUpperCase()]) {
          push(`off the pattern: ${JSON.stringify(text.slice(0, 20))}`, text);
        }
      }
      const formatBreakers =
        b.format === 'date-time' ? DATE_TIME_BREAKERS : b.format === 'date' ? DATE_BREAKERS : [];
      for (const text of formatBreakers) push(`not a ${b.format}: ${text}`, text);
    }
    if (types.includes('integer') || types.includes('number')) {
      const integer = !types.includes('number');
      if (b.minimum !== undefined) {
        push(`below minimum ${b.minimum}`, b.minimum - 1);
        if (!integer) push(`just below minimum ${b.minimum}`, b.minimum - 0.001);
      }
      if (b.exclusiveMinimum !== undefined) {
        push(`at exclusiveMinimum ${b.exclusiveMinimum}`, b.exclusiveMinimum);
      }
      if (b.maximum !== undefined) {
        push(`above maximum ${b.maximum}`, b.maximum + 1);
        push(`far above maximum ${b.maximum}`, b.maximum * 1024 + 1);
      }
      if (integer) push('a non-integer number', 2.5);
      push('1e308', 1e308);
      push('-1e308', -1e308);
      push('beyond the safe integers', 2 ** 53 + 2);
    }
    if (types.includes('array')) {
      const item = Array.isArray(baseline) && baseline.length > 0 ? baseline[0] : 'x';
      if (b.minItems !== undefined && b.minItems > 0) {
        push(`fewer than minItems ${b.minItems}`, Array(b.minItems - 1).fill(item));
      }
      if (b.maxItems !== undefined) {
        push(`more than maxItems ${b.maxItems}`, Array(b.maxItems + 1).fill(item));
      }
      push('10,000 items', Array(10_000).fill(item));
      push('an array of nulls', [null, null]);
    }
    if (types.includes('object')) {
      const base =
        baseline !== null && typeof baseline === 'object' && !Array.isArray(baseline) ? baseline : {};
      if (b.additionalProperties === false) {
        push('an undeclared property', { ...base, undeclared_property: 'x' });
      }
      if ((b.required ?? []).length > 0) push('an empty object', {});
      const names = b.propertyNames;
      if (names?.minLength !== undefined) push('an empty key', { ...base, '': 'x' });
      if (names?.maxLength !== undefined) {
        push(`a key over ${names.maxLength} characters`, { ...base, ['k'.repeat(names.maxLength + 1)]: 'x' });
      }
      if (typeof b.additionalProperties === 'object') {
        push('a map entry of the wrong type', { ...base, fuzz_entry: { nested: [7] } });
      }
      if (wide)
        push('5,000 properties', {
          ...base,
          ...Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, i])),
        });
    }
  }
  return out;
}

/** The candidates `schema` rejects, each once (`wide`: also an object of 5,000 properties). */
export function violationsOf(
  schema: Schema,
  baseline: unknown,
  oracle: SchemaOracle,
  wide = false,
): Candidate[] {
  return unique(candidates(schema, baseline, wide).filter((c) => !oracle.accepts(schema, c.value)));
}

/**
 * Text values for a path or query parameter that break its schema once parsed (`wire` is what
 * the parser hands the route: a text, or several for a repeated query parameter).
 */
export function paramViolationsOf(
  schema: Schema,
  baseline: string,
  required: boolean,
  oracle: SchemaOracle,
): { label: string; wire: string | string[] }[] {
  const found: { label: string; wire: string | string[] }[] = [];
  for (const c of unique(candidates(schema, baseline))) {
    const wire = toWire(c.value);
    if (wire === null) continue;
    if (!oracle.acceptsParam(schema, wire, required)) found.push({ label: c.label, wire });
  }
  return found;
}

/** A JSON value as a parameter can carry it: scalars as text, arrays as repeats; objects cannot. */
function toWire(value: unknown): string | string[] | null {
  if (value === null) return '';
  if (Array.isArray(value)) {
    const texts = value.slice(0, 3).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    return texts.length > 1 ? texts : null;
  }
  if (typeof value === 'object') return null;
  return String(value);
}

function unique<T extends { label: string; value?: unknown; wire?: unknown }>(list: T[]): T[] {
  const seen = new Set<string>();
  return list.filter((c) => {
    const key = JSON.stringify(c.value ?? c.wire) ?? 'undefined';
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
