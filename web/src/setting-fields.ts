/**
 * What each setting's form field expects, checked field by field before anything is sent: a
 * person sees "a whole number of runs, 0 or more, or empty for no budget" beside the field, not a
 * JSON parser's message. Mirrors the schemas in src/core/settings.ts (the API checks them again);
 * a setting not listed here is inferred from its default and edited as JSON.
 */

export type FieldSpec =
  | { kind: 'boolean'; shape: string }
  | { kind: 'number'; shape: string; integer: boolean; min: number; max?: number; nullable: boolean }
  | { kind: 'text'; shape: string; max: number; multiline: boolean; nullable: boolean; pattern?: RegExp }
  | { kind: 'choice'; shape: string; options: string[] }
  | { kind: 'span'; shape: string }
  | { kind: 'json'; shape: string };

/** A field's draft: text, a checkbox, or the two ends of a span. */
export type Draft = string | boolean | { start: string; end: string };

export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

const CONCLUSIONS = ['action_required', 'failure', 'neutral', 'success'];

/** ISO 8601 date and time with a UTC offset, as the API's `z.iso.datetime({ offset: true })` takes it. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;
/** A git branch name, roughly as git-check-ref-format allows it. */
const BRANCH = /^(?!\/|.*\/\/|.*\.\.|.*@\{|.*\.lock$|.*\/$)[^\s~^:?*[\\]+$/;

export const SPAN_SHAPE =
  'Two moments in ISO 8601 with an offset, e.g. 2026-12-01T09:00:00Z and 2026-12-05T18:00:00+01:00: ' +
  'runs may start only between them, once (an absolute span, not a daily window). Leave both empty for no window.';

const KNOWN: Record<string, FieldSpec> = {
  'svc.review.enabled': { kind: 'boolean', shape: 'On or off.' },
  'svc.brakes.paused': { kind: 'boolean', shape: 'On or off.' },
  'svc.review.guidance': {
    kind: 'text',
    shape: 'Plain text, at most 20,000 characters.',
    max: 20_000,
    multiline: true,
    nullable: false,
  },
  'svc.review.budget_usd': {
    kind: 'number',
    shape: 'US dollars, from 0 to 10,000.',
    integer: false,
    min: 0,
    max: 10_000,
    nullable: false,
  },
  'svc.repository.default_branch': {
    kind: 'text',
    shape: 'A branch name such as main, or empty to use the branch the repository declares.',
    max: 255,
    multiline: false,
    nullable: true,
    pattern: BRANCH,
  },
  'svc.brakes.approval_window': { kind: 'span', shape: SPAN_SHAPE },
  'svc.brakes.spend_cap_usd': {
    kind: 'number',
    shape: 'US dollars, 0 or more, or empty for no cap.',
    integer: false,
    min: 0,
    nullable: true,
  },
  'svc.brakes.run_budget': {
    kind: 'number',
    shape: 'A whole number of runs per 24 hours, 0 or more, or empty for no budget.',
    integer: true,
    min: 0,
    nullable: true,
  },
};

export function specFor(key: string, value: unknown, fallback: unknown): FieldSpec {
  const known = KNOWN[key];
  if (known) return known;
  if (key.startsWith('svc.checks.'))
    return { kind: 'choice', shape: 'One of the check conclusions.', options: CONCLUSIONS };
  if (typeof fallback === 'boolean' || typeof value === 'boolean')
    return { kind: 'boolean', shape: 'On or off.' };
  if (typeof fallback === 'number' || typeof value === 'number')
    return {
      kind: 'number',
      shape: 'A number, 0 or more.',
      integer: false,
      min: 0,
      nullable: fallback === null,
    };
  if (typeof fallback === 'string')
    return { kind: 'text', shape: 'Text.', max: 20_000, multiline: true, nullable: false };
  return { kind: 'json', shape: 'A JSON value, e.g. {"key": "value"}, or empty for none.' };
}

/** The stored value as the field shows it. */
export function toDraft(spec: FieldSpec, value: unknown): Draft {
  if (spec.kind === 'boolean') return value === true;
  if (spec.kind === 'span') {
    const v = value as { start?: unknown; end?: unknown } | null;
    return {
      start: typeof v?.start === 'string' ? v.start : '',
      end: typeof v?.end === 'string' ? v.end : '',
    };
  }
  if (value === null || value === undefined) return '';
  if (spec.kind === 'json') return JSON.stringify(value);
  return String(value);
}

/** The field's value as the API takes it, or what is wrong with it, in words. */
export function parseDraft(spec: FieldSpec, draft: Draft): Parsed {
  switch (spec.kind) {
    case 'boolean':
      return { ok: true, value: draft === true };
    case 'choice':
      return spec.options.includes(String(draft))
        ? { ok: true, value: String(draft) }
        : { ok: false, error: `Choose one of ${spec.options.join(', ')}.` };
    case 'number': {
      const text = String(draft).trim();
      if (text === '')
        return spec.nullable
          ? { ok: true, value: null }
          : { ok: false, error: `Enter a value. ${spec.shape}` };
      const n = Number(text);
      if (!Number.isFinite(n)) return { ok: false, error: `“${text}” is not a number. ${spec.shape}` };
      if (spec.integer && !Number.isInteger(n))
        return { ok: false, error: `Enter a whole number. ${spec.shape}` };
      if (n < spec.min || (spec.max !== undefined && n > spec.max))
        return { ok: false, error: `${n} is out of range. ${spec.shape}` };
      return { ok: true, value: n };
    }
    case 'text': {
      const text = String(draft);
      if (spec.nullable && text.trim() === '') return { ok: true, value: null };
      if (text.length > spec.max)
        return { ok: false, error: `Too long: ${text.length} characters. ${spec.shape}` };
      if (spec.pattern && !spec.pattern.test(text.trim()))
        return { ok: false, error: `“${text.trim()}” is not a valid value. ${spec.shape}` };
      return { ok: true, value: spec.nullable ? text.trim() : text };
    }
    case 'span': {
      const { start, end } = draft as { start: string; end: string };
      const s = start.trim();
      const e = end.trim();
      if (s === '' && e === '') return { ok: true, value: null };
      if (s === '' || e === '')
        return { ok: false, error: `Give both the start and the end, or neither. ${spec.shape}` };
      for (const [name, v] of [
        ['start', s],
        ['end', e],
      ] as const)
        if (!ISO_WITH_OFFSET.test(v) || Number.isNaN(Date.parse(v)))
          return {
            ok: false,
            error: `The ${name} “${v}” is not an ISO 8601 time with an offset. ${spec.shape}`,
          };
      if (Date.parse(s) >= Date.parse(e)) return { ok: false, error: 'The end must come after the start.' };
      return { ok: true, value: { start: s, end: e } };
    }
    case 'json': {
      const text = String(draft).trim();
      if (text === '') return { ok: true, value: null };
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return { ok: false, error: `This is not valid JSON. ${spec.shape}` };
      }
    }
  }
}
