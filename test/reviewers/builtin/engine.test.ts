/** The builtin engine: changed lines only, complete finding drafts, gaps instead of crashes. */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { findingFingerprint } from '../../../src/core/review';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import type { ReviewFile } from '../../../src/reviewers/types';
import {
  type CatalogSkill,
  catalogSkill,
  loadCatalog,
  skillContentHash,
  skillFromFiles,
} from '../../../src/skills/catalog';
import { turnsDuring } from '../../helpers/event-loop';

const signal = new AbortController().signal;
const file = (
  path: string,
  code: string,
  changed: { start: number; end: number }[] | null = null,
): ReviewFile => ({
  diff: snippetDiffFile(path, code, changed),
  content: code,
});
const skill = async (id: string): Promise<CatalogSkill> => {
  const s = await catalogSkill(id);
  if (!s) throw new Error(`no catalog skill ${id}`);
  return s;
};

describe('catalog', () => {
  it('ships security, correctness and secrets, each hashed over its files', async () => {
    const skills = await loadCatalog();
    const ids = skills.map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining(['correctness', 'secrets', 'security']));
    for (const s of skills) {
      expect(s.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(skillContentHash(s.files)).toBe(s.hash);
      expect(Object.keys(s.files)).toContain('SKILL.md');
    }
    const security = await skill('security');
    expect(skillContentHash({ ...security.files, 'SKILL.md': 'changed' })).not.toBe(security.hash);
    const override = await skillFromFiles('security', { ...security.files });
    expect(override.hash).toBe(security.hash);
    expect(override.rules.length).toBe(security.rules.length);
  });

  it('compiles every rule for every language it names', async () => {
    for (const s of await loadCatalog()) {
      if (s.engine !== 'ast-grep') continue;
      const result = await runBuiltinSkill(s, [], { reviewerId: s.id, signal });
      expect(result.gaps).toEqual([]);
    }
  });
});

describe('rule prefilter', () => {
  const manifest =
    '---\nid: house\ntitle: House\ndescription: House rules.\nlanguages: [javascript]\n---\nHouse rules.\n';
  const rule = (prefilter: string) =>
    [
      'id: no-alert',
      'language: javascript',
      'severity: P2',
      'message: alert left in',
      'note: Remove it.',
      `prefilter: ${JSON.stringify(prefilter)}`,
      'rule: { pattern: alert($$$) }',
    ].join('\n');
  const run = async (prefilter: string, code: string) => {
    const house = await skillFromFiles('house', {
      'SKILL.md': manifest,
      'rules/no-alert.yml': rule(prefilter),
    });
    return runBuiltinSkill(house, [file('src/a.js', code)], { reviewerId: 'house', signal });
  };

  it('runs a rule only on files the prefilter matches', async () => {
    expect((await run('\\balert\\(', 'alert(1);')).findings.map((f) => f.rule)).toEqual(['house/no-alert']);
    // A prefilter that misses the sink hides the finding: the labelled cases guard the real ones.
    expect((await run('\\bconfirm\\(', 'alert(1);')).findings).toEqual([]);
  });

  it('refuses a prefilter that is not a regular expression', async () => {
    await expect(
      skillFromFiles('house', { 'SKILL.md': manifest, 'rules/no-alert.yml': rule('(unclosed') }),
    ).rejects.toThrow(/prefilter is not a regular expression/);
  });
});

describe('runBuiltinSkill', () => {
  const code = [
    'export async function f(db: Db, id: string) {',
    '  debugger;',
    '  await db.query("SELECT * FROM t WHERE id = " + id);',
    '  debugger;',
    '}',
  ].join('\n');

  it('reports only findings on changed lines', async () => {
    const security = await skill('security');
    const correctness = await skill('correctness');
    const changedOnly3 = file('src/a.ts', code, [{ start: 3, end: 3 }]);
    const sec = await runBuiltinSkill(security, [changedOnly3], { reviewerId: 'security', signal });
    expect(sec.findings.map((f) => [f.rule, f.line])).toEqual([['security/sql-injection', 3]]);
    const cor = await runBuiltinSkill(correctness, [file('src/a.ts', code, [{ start: 4, end: 5 }])], {
      reviewerId: 'correctness',
      signal,
    });
    expect(cor.findings.map((f) => [f.rule, f.line])).toEqual([['correctness/debug-statement', 4]]);
  });

  it('fills every field of a finding draft and the provenance', async () => {
    const security = await skill('security');
    const result = await runBuiltinSkill(security, [file('src/a.ts', code)], { reviewerId: 'sec-1', signal });
    expect(result.findings).toHaveLength(1);
    const [f] = result.findings;
    expect(f).toMatchObject({
      severity: 'P0',
      path: 'src/a.ts',
      line: 3,
      endLine: 3,
      rule: 'security/sql-injection',
      category: 'security',
      reviewer: 'sec-1',
    });
    expect(f?.title).toContain('query');
    expect(f?.body).toMatch(/Fix/);
    expect(result.skills).toEqual([
      { skill_id: 'security', source: 'catalog', executed_hash: security.hash },
    ]);
    expect(result.backend).toEqual({ harness: 'builtin', provider: null, model: null });
    expect(result.usage).toEqual([]);
  });

  it('keeps the fingerprint fields stable when code above moves the finding', async () => {
    const security = await skill('security');
    const run = async (text: string) =>
      (await runBuiltinSkill(security, [file('src/a.ts', text)], { reviewerId: 's', signal })).findings[0];
    const before = await run(code);
    const after = await run(`// a new header line\n\n${code}`);
    expect(after?.line).toBe((before?.line ?? 0) + 2);
    const anchor = (f: typeof before, text: string) => text.split('\n')[(f?.line ?? 1) - 1] ?? '';
    expect(
      findingFingerprint({
        path: after?.path ?? '',
        rule: after?.rule ?? '',
        anchorText: anchor(after, `// a new header line\n\n${code}`),
      }),
    ).toBe(
      findingFingerprint({
        path: before?.path ?? '',
        rule: before?.rule ?? '',
        anchorText: anchor(before, code),
      }),
    );
    expect(after?.title).toBe(before?.title);
  });

  it('turns unparseable regions into a named gap and drops matches inside them', async () => {
    const correctness = await skill('correctness');
    const broken = ['export function f() {', '  debugger;', '}', 'const = = ;;; {{ debugger', ''].join('\n');
    const result = await runBuiltinSkill(correctness, [file('src/broken.ts', broken)], {
      reviewerId: 'c',
      signal,
    });
    expect(result.gaps.map((g) => g.code)).toEqual(['files_not_analyzed']);
    expect(result.gaps[0]?.message).toContain('src/broken.ts');
    // The file's share left out: the one line of the four it could not read.
    expect(result.gaps[0]?.file).toMatchObject({ path: 'src/broken.ts', lines_left_out: 1, lines: 4 });
    expect(result.findings.map((f) => f.line)).toEqual([2]);
  });

  it('skips deleted, binary and unrecognised files without a crash', async () => {
    const correctness = await skill('correctness');
    const deleted = file('src/gone.ts', 'debugger;');
    deleted.diff.change = 'deleted';
    const binary: ReviewFile = { diff: { ...snippetDiffFile('img.png', 'x'), binary: true }, content: null };
    const result = await runBuiltinSkill(correctness, [deleted, binary, file('README.md', 'debugger;')], {
      reviewerId: 'c',
      signal,
    });
    expect(result.findings).toEqual([]);
    expect(result.gaps).toEqual([]);
  });

  it('stops when the signal is aborted', async () => {
    const correctness = await skill('correctness');
    const controller = new AbortController();
    controller.abort(new Error('canceled'));
    await expect(
      runBuiltinSkill(correctness, [file('src/a.ts', code)], { reviewerId: 'c', signal: controller.signal }),
    ).rejects.toThrow('canceled');
  });
});

describe('a file with many matches', () => {
  // 150 functions, each with a constant and a parameter passed to eval under the same names: the
  // data-flow answers are remembered per parse, so they must stay tied to each function's scope.
  const functions = Array.from({ length: 150 }, (_, i) =>
    [
      `export function f${i}(input: string) {`,
      `  const code = '1 + ${i}';`,
      '  eval(code);',
      '  eval(input);',
      '}',
    ].join('\n'),
  );
  const big = file('src/many.ts', functions.join('\n'));

  it('reports each function’s parameter and none of its constants', async () => {
    const security = await skill('security');
    const result = await runBuiltinSkill(security, [big], { reviewerId: 'security', signal });
    const lines = result.findings.filter((f) => f.rule === 'security/code-injection').map((f) => f.line);
    expect(lines).toEqual(functions.map((_, i) => i * 5 + 4));
  });

  it('gives the event loop a turn between matches within one file, with the same findings', async () => {
    const security = await skill('security');
    const whole = await runBuiltinSkill(security, [big], { reviewerId: 'security', signal });
    const sliced = await turnsDuring(() =>
      runBuiltinSkill(security, [big], { reviewerId: 'security', signal, turnMs: 0 }),
    );
    expect(sliced.value.findings).toEqual(whole.findings);
    // A turn after every other match (a resumed loop always does one): at least one per function.
    expect(sliced.turns).toBeGreaterThanOrEqual(functions.length);
  });
});

describe('secrets', () => {
  // AKIA + 16 upper-case letters/digits, not AWS's documented example key.
  const key = `AKIA${'Q3ZT7WX2KV9MB4NP'}`;

  it('reports an AWS access key id on a changed line as P0, masked', async () => {
    const secrets = await skill('secrets');
    const text = `const region = 'eu-west-1';\nconst keyId = '${key}';\n`;
    const result = await runBuiltinSkill(secrets, [file('src/aws.ts', text)], {
      reviewerId: 'secrets',
      signal,
    });
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({
      severity: 'P0',
      path: 'src/aws.ts',
      line: 2,
      rule: 'secrets/aws',
      category: 'secrets',
      reviewer: 'secrets',
    });
    expect(JSON.stringify(result.findings)).not.toContain(key);
    expect(result.skills[0]).toMatchObject({
      skill_id: 'secrets',
      source: 'catalog',
      executed_hash: secrets.hash,
    });
  });

  it('ignores the documented example key AKIAIOSFODNN7EXAMPLE and unchanged lines', async () => {
    const secrets = await skill('secrets');
    const text = `const example = 'AKIAIOSFODNN7EXAMPLE';\nconst keyId = '${key}';\n`;
    const result = await runBuiltinSkill(secrets, [file('src/aws.ts', text, [{ start: 1, end: 1 }])], {
      reviewerId: 'secrets',
      signal,
    });
    expect(result.findings).toEqual([]);
  });
});
