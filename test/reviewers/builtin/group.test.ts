/**
 * One finding per idiom per file: a P2 rule matching the same idiom (same rule, same message) at
 * several places of a file is one finding listing them all; P0/P1 findings stay one per place.
 */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { type FindingDraft, FOUND_SECRETS } from '../../../src/core/review';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { groupAcrossDirectory, groupRepeats } from '../../../src/reviewers/builtin/group';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

const signal = new AbortController().signal;
const skill = async (id: string): Promise<CatalogSkill> => {
  const s = await catalogSkill(id);
  if (!s) throw new Error(`no catalog skill ${id}`);
  return s;
};
const file = (path: string, code: string): ReviewFile => ({
  diff: snippetDiffFile(path, code),
  content: code,
  ...(path.startsWith('test/') ? { role: 'test' as const } : {}),
});
const node22 = [{ name: 'node', version: '22' }];

describe('one idiom repeated in a file', () => {
  // The case: one deprecated call, six times in one test file, with other arguments each time.
  const links = [
    "const url = require('url');",
    "test('links', () => {",
    "  expect(url.parse('http://a.example/x').host).toBe('a.example');",
    "  expect(url.parse('http://b.example/').pathname).toBe('/');",
    '  const u = url.parse(input);',
    '  expect(u.query).toBe(null);',
    "  expect(url.parse('//c', false, true).host).toBe('c');",
    "  expect(url.parse('http://d/?q=1', true).query.q).toBe('1');",
    "  expect(url.parse(other).protocol).toBe('http:');",
    '});',
    '',
  ].join('\n');

  it('is one finding at its first place, listing all six in its body and its locations', async () => {
    const result = await runBuiltinSkill(await skill('correctness'), [file('test/links.test.js', links)], {
      reviewerId: 'correctness',
      signal,
      runtimes: node22,
    });
    const found = result.findings.filter((f) => f.rule === 'correctness/legacy-url-parse');
    expect(found).toHaveLength(1);
    const [f] = found as [FindingDraft];
    expect(f).toMatchObject({ severity: 'P2', path: 'test/links.test.js', line: 3, endLine: 3 });
    expect(f.locations?.map((l) => l.start)).toEqual([3, 4, 5, 7, 8, 9]);
    expect(f.body).toContain('**Also at lines 4, 5, 7, 8 and 9** of this file');
    expect(f.body).toContain('6 places in all');
    expect(f.identity).toBe(f.title);
  });

  it('gives the same finding in an analysis thread', async () => {
    const correctness = await skill('correctness');
    const inThread = await runBuiltinSkill(correctness, [file('test/links.test.js', links)], {
      reviewerId: 'correctness',
      signal,
      runtimes: node22,
      analysisThread: true,
    });
    const onThis = await runBuiltinSkill(correctness, [file('test/links.test.js', links)], {
      reviewerId: 'correctness',
      signal,
      runtimes: node22,
    });
    expect(inThread.findings).toEqual(onThis.findings);
  });

  it('keeps two sinks of one P0 rule two findings, even with the same code', async () => {
    const code = [
      'export function f(a: string, b: string) {',
      '  eval(a);',
      '  eval(b);',
      '}',
      'export function g(a: string) {',
      '  eval(a);',
      '}',
      '',
    ].join('\n');
    const result = await runBuiltinSkill(await skill('security'), [file('src/run.ts', code)], {
      reviewerId: 'security',
      signal,
    });
    const injections = result.findings.filter((f) => f.rule === 'security/code-injection');
    expect(injections.map((f) => f.line)).toEqual([2, 3, 6]);
    for (const f of injections) {
      expect(f.locations).toBeUndefined();
      expect(f.identity).toBeUndefined();
      expect(f.body).not.toContain('Also at');
    }
  });

  it('keeps one rule’s different idioms (another message) apart', async () => {
    const code = [
      'import datetime',
      'a = datetime.datetime.utcnow()',
      'b = datetime.datetime.utcfromtimestamp(ts)',
      'c = datetime.datetime.utcnow()',
      '',
    ].join('\n');
    const result = await runBuiltinSkill(await skill('correctness'), [file('app/clock.py', code)], {
      reviewerId: 'correctness',
      signal,
      runtimes: [{ name: 'python', version: '3.12' }],
    });
    const deprecated = result.findings.filter((f) => f.rule === 'correctness/deprecated-utcnow');
    // `utcnow()` twice is one finding; `utcfromtimestamp()` another.
    expect(deprecated.map((f) => [f.line, f.locations?.map((l) => l.start) ?? null])).toEqual([
      [2, [2, 4]],
      [3, null],
    ]);
  });

  it('groups after the base is compared: a copy the base had is still left out', async () => {
    const base = [
      "const url = require('url');",
      'function a(input) {',
      '  return url.parse(input);',
      '}',
      '',
    ].join('\n');
    const head = [
      "const url = require('url');",
      'function a(input) {',
      '    return url.parse(input);',
      '}',
      'function b(s) {',
      '  return url.parse(s).host;',
      '}',
      'function c(s) {',
      '  return url.parse(s).path;',
      '}',
      '',
    ].join('\n');
    const touched: ReviewFile = {
      diff: snippetDiffFile('src/links.js', head, [{ start: 1, end: head.split('\n').length }]),
      content: head,
    };
    const result = await runBuiltinSkill(await skill('correctness'), [touched], {
      reviewerId: 'correctness',
      signal,
      runtimes: node22,
      readBase: async (paths) => new Map(paths.map((p) => [p, base])),
    });
    const found = result.findings.filter((f) => f.rule === 'correctness/legacy-url-parse');
    expect(found.map((f) => [f.line, f.locations?.map((l) => l.start)])).toEqual([[6, [6, 9]]]);
    expect(result.gaps.map((g) => g.code)).toContain('builtin_preexisting_not_reported');
  });
});

describe('groupRepeats', () => {
  const draft = (over: Partial<FindingDraft>): FindingDraft => ({
    severity: 'P2',
    path: 'a.js',
    line: 1,
    endLine: 1,
    title: '`debugger` statement left in',
    body: 'why',
    rule: 'correctness/debug-statement',
    category: 'correctness',
    reviewer: 'c',
    ...over,
  });

  it('lists multi-line places as ranges, one place once, and leaves other files and rules apart', () => {
    const out = groupRepeats([
      draft({ line: 9, endLine: 11 }),
      draft({ line: 2, endLine: 2 }),
      draft({ line: 2, endLine: 2 }),
      draft({ line: 5, endLine: 5, path: 'b.js' }),
      draft({ line: 7, endLine: 7, rule: 'correctness/other' }),
    ]);
    expect(out.map((f) => [f.path, f.rule, f.line, f.locations ?? null])).toEqual([
      [
        'a.js',
        'correctness/debug-statement',
        2,
        [
          { start: 2, end: 2 },
          { start: 9, end: 11 },
        ],
      ],
      ['b.js', 'correctness/debug-statement', 5, null],
      ['a.js', 'correctness/other', 7, null],
    ]);
    expect(out[0]?.body).toBe(
      'why\n\n**Also at line 9-11** of this file: the same rule and message, 2 places in all, reported as one finding.',
    );
    // A single place still carries its identity, so a second copy later is the same finding.
    expect(out[1]?.identity).toBe('`debugger` statement left in');
  });

  it('leaves P0 and P1 findings one per place', () => {
    const out = groupRepeats([draft({ severity: 'P1', line: 1 }), draft({ severity: 'P1', line: 4 })]);
    expect(out.map((f) => [f.line, f.identity, f.locations])).toEqual([
      [1, undefined, undefined],
      [4, undefined, undefined],
    ]);
  });
});

describe('groupAcrossDirectory', () => {
  // ssh2-streams 0.3.0: a key parser's test vectors, one throwaway key per format in test/fixtures.
  const title =
    'Test fixture credential committed: private key: ******** (confirm it is throwaway and used by nothing real)';
  const key = (
    path: string,
    line: number,
    secret: string,
    over: Partial<FindingDraft> = {},
  ): FindingDraft => ({
    severity: 'P2',
    path,
    line,
    endLine: line + 26,
    title,
    body: 'rotate',
    rule: 'secrets/privatekey',
    category: 'secrets',
    reviewer: 'secrets',
    [FOUND_SECRETS]: [secret],
    ...over,
  });

  it('makes the P2 keys of one directory one finding at its first file, naming the others', () => {
    const out = groupAcrossDirectory([
      key('test/fixtures/openssh_new_rsa', 1, 'k3'),
      key('test/fixtures/openssh_new_dsa', 1, 'k1'),
      key('test/fixtures/openssh_new_dsa.result', 5, 'k2'),
      key('test/fixtures/openssh_new_dsa.result', 9, 'k2b'),
      key('test/other/id_rsa', 1, 'k4'),
      key('test/fixtures/live', 3, 'k5', {
        severity: 'P0',
        title: 'Credential committed: private key: ********',
      }),
    ]);
    expect(out.map((f) => [f.severity, f.path, f.line])).toEqual([
      ['P2', 'test/fixtures/openssh_new_dsa', 1],
      ['P2', 'test/other/id_rsa', 1],
      ['P0', 'test/fixtures/live', 3],
    ]);
    const [fixtures] = out as [FindingDraft];
    expect(fixtures.body).toBe(
      'rotate\n\n**Also in 2 other files of `test/fixtures/`**: `openssh_new_dsa.result` (lines 5, 9) and `openssh_new_rsa` (line 1); the same rule and message, 4 places in all, reported as one finding.',
    );
    // Every key of the group is masked wherever the ledger stores the finding's anchor.
    expect(fixtures[FOUND_SECRETS]).toEqual(['k1', 'k2', 'k2b', 'k3']);
    expect(fixtures.identity).toBe(title);
    expect(fixtures.locations).toBeUndefined();
    // The P0 next to them is a credential to rotate: never folded into the group.
    expect(out[2]?.body).toBe('rotate');
  });

  it('counts the files past the twelfth, and leaves a lone file as groupRepeats would', () => {
    const many = Array.from({ length: 15 }, (_, i) =>
      key(`keys/k${String(i).padStart(2, '0')}.pem`, 1, `s${i}`),
    );
    const [one] = groupAcrossDirectory(many) as [FindingDraft];
    expect(one.path).toBe('keys/k00.pem');
    expect(one.body).toContain('**Also in 14 other files of `keys/`**: `k01.pem` (line 1),');
    expect(one.body).toContain('`k12.pem` (line 1) and 2 more; the same rule and message, 15 places in all');
    const [lone] = groupAcrossDirectory([key('id_rsa', 1, 'a'), key('id_rsa', 40, 'b')]) as [FindingDraft];
    expect(lone.body).toBe(
      'rotate\n\n**Also at line 40-66** of this file: the same rule and message, 2 places in all, reported as one finding.',
    );
  });
});

describe("a test suite's throwaway keys, reviewed by the secrets skill", () => {
  /** A PEM EC key whose body is deterministic base64 from `seed` (64-character lines). */
  const ecKey = (seed: string) => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    let body = 'MHcCAQEEI';
    let x = [...seed].reduce((n, c) => n * 31 + c.charCodeAt(0), 7) >>> 0;
    while (body.length < 160) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      body += alphabet[(x >>> 16) % 64];
    }
    const lines = (body.match(/.{1,64}/g) ?? []).join('\n');
    return `-----BEGIN EC PRIVATE KEY-----\n${lines}\n-----END EC PRIVATE KEY-----\n`;
  };
  const keyFile = (path: string, seed: string): ReviewFile => {
    const content = ecKey(seed);
    return { diff: snippetDiffFile(path, content), content };
  };

  it('is one P2 finding per fixture directory, and a production key stays a P0 of its own', async () => {
    const result = await runBuiltinSkill(
      await skill('secrets'),
      [
        keyFile('test/fixtures/keys/ecdsa_c', 'c'),
        keyFile('test/fixtures/keys/ecdsa_a', 'a'),
        keyFile('test/fixtures/keys/ecdsa_b', 'b'),
        keyFile('deploy/host_key', 'h'),
      ],
      { reviewerId: 'secrets', signal },
    );
    expect(result.findings.map((f) => [f.severity, f.path, f.rule])).toEqual([
      ['P0', 'deploy/host_key', 'secrets/privatekey'],
      ['P2', 'test/fixtures/keys/ecdsa_a', 'secrets/privatekey'],
    ]);
    const fixtures = result.findings[1] as FindingDraft;
    expect(fixtures.title).toMatch(/^Test fixture credential committed: .*confirm it is throwaway/);
    expect(fixtures.body).toContain(
      '**Also in 2 other files of `test/fixtures/keys/`**: `ecdsa_b` (line 1) and `ecdsa_c` (line 1)',
    );
    expect(fixtures[FOUND_SECRETS]).toHaveLength(3);
  });
});
