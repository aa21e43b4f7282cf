/** The settings form's field checks (web/src/setting-fields.ts): each says what it expects, in words. */
import { describe, expect, it } from 'vitest';
import { PROJECT_SETTINGS, WORKSPACE_SETTINGS } from '../../src/core/settings';
import { parseDraft, specFor, toDraft } from '../../web/src/setting-fields';

const spec = (key: string) => {
  const all: Record<string, { default: unknown }> = { ...PROJECT_SETTINGS, ...WORKSPACE_SETTINGS };
  return specFor(key, all[key]?.default, all[key]?.default);
};

describe('setting fields', () => {
  it('gives every setting svc has a field that is not raw JSON', () => {
    for (const key of [...Object.keys(PROJECT_SETTINGS), ...Object.keys(WORKSPACE_SETTINGS)])
      expect(spec(key).kind, key).not.toBe('json');
  });

  it('accepts what the API schema accepts, for every field (the defaults round-trip)', () => {
    const all = { ...PROJECT_SETTINGS, ...WORKSPACE_SETTINGS } as Record<
      string,
      { default: unknown; schema: { safeParse(v: unknown): { success: boolean } } }
    >;
    for (const [key, def] of Object.entries(all)) {
      const parsed = parseDraft(spec(key), toDraft(spec(key), def.default));
      expect(parsed, key).toEqual({ ok: true, value: def.default });
      if (parsed.ok) expect(def.schema.safeParse(parsed.value).success, key).toBe(true);
    }
  });

  it('says what a number field expects instead of a parser message', () => {
    const budget = parseDraft(spec('svc.brakes.run_budget'), '1.5');
    expect(budget).toEqual({ ok: false, error: expect.stringContaining('whole number') });
    const cap = parseDraft(spec('svc.brakes.spend_cap_usd'), '12x');
    expect(cap).toEqual({ ok: false, error: expect.stringContaining('“12x” is not a number') });
    expect(parseDraft(spec('svc.brakes.spend_cap_usd'), '')).toEqual({ ok: true, value: null });
    expect(parseDraft(spec('svc.review.budget_usd'), '')).toMatchObject({ ok: false });
    expect(parseDraft(spec('svc.review.budget_usd'), '20000')).toMatchObject({
      ok: false,
      error: expect.stringContaining('out of range'),
    });
  });

  it('takes the approval window as an absolute ISO span with offsets, both ends or neither', () => {
    const window = spec('svc.brakes.approval_window');
    expect(window.shape).toContain('absolute span, not a daily window');
    const value = { start: '2026-12-01T09:00:00Z', end: '2026-12-05T18:00:00+01:00' };
    expect(parseDraft(window, value)).toEqual({ ok: true, value });
    expect(
      PROJECT_SETTINGS['svc.brakes.approval_window'].schema.safeParse(value).success,
      'the API takes what the form sends',
    ).toBe(true);
    expect(parseDraft(window, { start: '', end: '' })).toEqual({ ok: true, value: null });
    expect(parseDraft(window, { start: '09:00', end: '17:00' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('not an ISO 8601 time with an offset'),
    });
    expect(parseDraft(window, { start: '2026-12-01T09:00:00', end: '2026-12-02T09:00:00Z' })).toMatchObject({
      ok: false,
    });
    expect(parseDraft(window, { start: value.end, end: value.start })).toEqual({
      ok: false,
      error: 'The end must come after the start.',
    });
    expect(parseDraft(window, { start: value.start, end: '' })).toMatchObject({ ok: false });
  });

  it('checks a branch name and reads an empty one as the repository default', () => {
    const branch = spec('svc.repository.default_branch');
    expect(parseDraft(branch, ' main ')).toEqual({ ok: true, value: 'main' });
    expect(parseDraft(branch, '')).toEqual({ ok: true, value: null });
    expect(parseDraft(branch, 'has space')).toMatchObject({ ok: false });
    expect(parseDraft(branch, 'a..b')).toMatchObject({ ok: false });
  });

  it('words a JSON field error without the parser text', () => {
    const json = specFor('x.unknown', null, null);
    const wrong = parseDraft(json, '1 2');
    expect(wrong).toMatchObject({ ok: false });
    if (!wrong.ok) expect(wrong.error).not.toMatch(/Unexpected|position/);
  });
});
