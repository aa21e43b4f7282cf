import { describe, expect, it } from 'vitest';
import {
  countOpen,
  reviewDeadlineMs,
  reviewedConclusion,
  reviewedTitle,
  sizeBucket,
} from '../../src/core/checks';
import { parseCommand, parseThreadReply } from '../../src/core/commands';
import { fixPrompt, MAX_FIX_PROMPT_CHARS } from '../../src/core/fix-prompt';

const defaults = {
  'svc.checks.p0_conclusion': 'action_required',
  'svc.checks.p1_conclusion': 'neutral',
  'svc.checks.p2_conclusion': 'success',
} as const;

describe('check conclusions', () => {
  it('derive from the open findings and the workspace settings', () => {
    expect(reviewedConclusion({ P0: 1, P1: 3, P2: 0 }, defaults)).toBe('action_required');
    expect(reviewedConclusion({ P0: 0, P1: 1, P2: 5 }, defaults)).toBe('neutral');
    expect(reviewedConclusion({ P0: 0, P1: 0, P2: 2 }, defaults)).toBe('success');
    expect(reviewedConclusion({ P0: 0, P1: 0, P2: 0 }, defaults)).toBe('success');
    expect(
      reviewedConclusion({ P0: 0, P1: 1, P2: 0 }, { ...defaults, 'svc.checks.p1_conclusion': 'success' }),
    ).toBe('success');
  });

  it('count only open findings', () => {
    expect(
      countOpen([
        { severity: 'P0', status: 'dismissed' },
        { severity: 'P0', status: 'fixed' },
        { severity: 'P1', status: 'open' },
      ]),
    ).toEqual({ P0: 0, P1: 1, P2: 0 });
    expect(reviewedTitle({ P0: 0, P1: 1, P2: 2 })).toBe('Reviewed: 1 P1, 2 P2 open');
    expect(reviewedTitle({ P0: 0, P1: 0, P2: 0 })).toBe('Reviewed: no open findings');
  });

  it('take the p75 of the size bucket as the deadline, capped at ten minutes', () => {
    expect(reviewDeadlineMs([])).toBe(600_000);
    expect(reviewDeadlineMs([1_000, 2_000, 3_000, 4_000])).toBe(3_000);
    expect(reviewDeadlineMs([1_000, 20 * 60_000])).toBe(600_000);
    expect(sizeBucket(10)).toBe('xs');
    expect(sizeBucket(100_000)).toBe('xl');
  });
});

describe('commands', () => {
  it.each([
    ['@service', { kind: 'help' }],
    ['@service help', { kind: 'help' }],
    [
      'please @service review off flaky generated code',
      { kind: 'review_off', reason: 'flaky generated code' },
    ],
    ['@service review off', { kind: 'review_off', reason: null }],
    ['@service review on', { kind: 'review_on' }],
    ['@Service Review Now', { kind: 'review_now' }],
    ['@service review force', { kind: 'review_force' }],
    ['@service review status', { kind: 'review_status' }],
    ['@service dance', { kind: 'unknown', text: 'dance' }],
  ])('parses %j', (body, expected) => {
    expect(parseCommand(body)).toEqual(expected);
  });

  it('ignores comments that do not address svc, other handles and quoted commands', () => {
    expect(parseCommand('looks good')).toBeNull();
    expect(parseCommand('@service-bot review now')).toBeNull();
    expect(parseCommand('email me at x@service.com')).toBeNull();
    expect(parseCommand('> @service review off\nthanks')).toBeNull();
  });

  it('parses finding-thread replies', () => {
    expect(parseThreadReply('wontfix: the input is a constant')).toEqual({
      kind: 'wontfix',
      reason: 'the input is a constant',
    });
    expect(parseThreadReply('WONTFIX:   generated file ')).toEqual({
      kind: 'wontfix',
      reason: 'generated file',
    });
    expect(parseThreadReply('wontfix:')).toBeNull();
    expect(parseThreadReply('fix this')).toEqual({ kind: 'fix_this' });
    expect(parseThreadReply('> wontfix: quoted\nI disagree')).toBeNull();
  });
});

describe('fix prompt', () => {
  const finding = (i: number) => ({
    id: `fnd_${i}`,
    severity: (i % 2 ? 'P1' : 'P0') as 'P0' | 'P1',
    path: 'src/a.ts',
    line: i,
    endLine: i,
    title: `t${i}`,
    body: 'why and how',
    rule: 'security/x',
    suggestion: i === 0 ? 'safe()' : null,
  });

  it('carries the contract and every open finding, most severe first', () => {
    const text = fixPrompt({ headSha: 'abc', findings: [finding(1), finding(0)] });
    expect(text).toContain('wontfix: <reason>');
    expect(text).toContain('[autofix]');
    expect(text).toContain('At most 2 rounds');
    expect(text.indexOf('fnd_0')).toBeLessThan(text.indexOf('fnd_1'));
    expect(text).toContain('safe()');
  });

  it('stays under the output limit and says what it left out', () => {
    const many = Array.from({ length: 2000 }, (_, i) => ({ ...finding(i), body: 'x'.repeat(200) }));
    const text = fixPrompt({ headSha: 'abc', findings: many });
    expect(text.length).toBeLessThanOrEqual(MAX_FIX_PROMPT_CHARS);
    expect(text).toMatch(/more finding\(s\) omitted/);
  });
});
