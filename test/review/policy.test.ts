/** The repository's say over a review: .svc.yml, roles, severity caps and inline suppressions. */
import { describe, expect, it } from 'vitest';
import type { DiffFile, FindingDraft } from '../../src/core/review';
import { mergeFindings } from '../../src/review/merge';
import {
  applyLearnings,
  applyPolicy,
  markSuppressed,
  prepareFiles,
  repositoryContext,
  suppressionIn,
} from '../../src/review/policy';
import { parseRepoConfig } from '../../src/review/repo-config';
import type { ReviewFile } from '../../src/reviewers/types';

const file = (path: string, content = ''): ReviewFile => ({
  diff: { path, changedLines: [{ start: 1, end: 10 }] } as DiffFile,
  content,
});

const draft = (path: string, rule: string, severity: FindingDraft['severity'], line = 2): FindingDraft => ({
  severity,
  path,
  line,
  endLine: line,
  title: 't',
  body: 'b',
  rule,
  category: rule.split('/')[0] ?? rule,
  reviewer: rule.split('/')[0] ?? rule,
});

const context = (yml: string | null, attributes: string | null = null) =>
  repositoryContext(
    new Map([
      ['.svc.yml', yml],
      ['.gitattributes', attributes],
    ]),
  );

describe('parseRepoConfig', () => {
  it('reads paths, rules and guidance, and defaults what is missing', () => {
    const { config, error } = parseRepoConfig(
      [
        'paths:',
        '  exclude: ["legacy/**"]',
        'rules:',
        '  security/weak-hash: { severity: P2 }',
        '  debug-statement: off',
        'guidance: Prefer small functions.',
      ].join('\n'),
    );
    expect(error).toBeNull();
    expect(config.paths).toEqual({ exclude: ['legacy/**'], tests: [] });
    expect(config.rules['security/weak-hash']).toEqual({ disable: false, severity: 'P2' });
    expect(config.rules['debug-statement']).toEqual({ disable: true, severity: undefined });
    expect(config.guidance).toBe('Prefer small functions.');
  });

  it('names what is wrong and falls back to the defaults', () => {
    expect(parseRepoConfig('paths: [').error).toMatch(/^not YAML/);
    expect(parseRepoConfig('rules:\n  security/x: { severity: P9 }').error).toMatch(
      /^rules\.security\/x\.severity/,
    );
    expect(parseRepoConfig('path:\n  exclude: []').error).toMatch(/path/);
    const ctx = context('paths: {exclude: 3}');
    expect(ctx.gaps.map((g) => g.code)).toEqual(['repo_config_invalid']);
    expect(ctx.config.paths.exclude).toEqual([]);
  });
});

describe('prepareFiles and applyPolicy', () => {
  it('drops excluded paths and gives every other file its role', () => {
    const ctx = context('paths:\n  exclude: ["legacy/**"]\n  tests: ["qa/**"]', 'gen/** linguist-generated');
    const files = prepareFiles(
      [
        file('src/a.ts'),
        file('legacy/old.ts'),
        file('qa/smoke.ts'),
        file('gen/api.ts'),
        file('src/a.test.ts'),
      ],
      ctx,
    );
    expect(files.map((f) => [f.diff.path, f.role])).toEqual([
      ['src/a.ts', 'production'],
      ['qa/smoke.ts', 'test'],
      ['gen/api.ts', 'generated'],
      ['src/a.test.ts', 'test'],
    ]);
  });

  it('never reports P0 outside production code, except secrets, and nothing but secrets in generated code', () => {
    const ctx = context(null);
    const files = prepareFiles([file('src/a.ts'), file('src/a.test.ts'), file('dist/a.js')], ctx);
    const out = applyPolicy(
      [
        draft('src/a.ts', 'security/sql-injection', 'P0'),
        draft('src/a.test.ts', 'llm/security', 'P0'),
        draft('src/a.test.ts', 'secrets/aws', 'P0'),
        draft('dist/a.js', 'correctness/empty-catch', 'P1'),
        draft('dist/a.js', 'secrets/github', 'P0'),
        draft('legacy/not-given.ts', 'security/sql-injection', 'P0'),
      ],
      files,
      ctx,
    );
    expect(out.map((f) => `${f.path} ${f.rule} ${f.severity}`)).toEqual([
      'src/a.ts security/sql-injection P0',
      'src/a.test.ts llm/security P1',
      'src/a.test.ts secrets/aws P0',
      'dist/a.js secrets/github P0',
    ]);
  });

  it('applies per-rule severity and disable, full id over bare name', () => {
    const ctx = context(
      'rules:\n  weak-hash: { severity: P2 }\n  security/weak-hash: { severity: P1 }\n  empty-catch: { disable: true }',
    );
    const files = prepareFiles([file('src/a.ts')], ctx);
    const out = applyPolicy(
      [draft('src/a.ts', 'security/weak-hash', 'P0'), draft('src/a.ts', 'correctness/empty-catch', 'P1')],
      files,
      ctx,
    );
    expect(out.map((f) => `${f.rule} ${f.severity}`)).toEqual(['security/weak-hash P1']);
  });
});

describe('inline suppressions', () => {
  it('reads svc-ignore in the comment syntax of each language', () => {
    expect(suppressionIn('  eval(x); // svc-ignore code-injection: the input is our own config')).toEqual({
      rule: 'code-injection',
      reason: 'the input is our own config',
    });
    expect(suppressionIn('# svc-ignore security/sql-injection: table names come from an allow-list')).toEqual(
      {
        rule: 'security/sql-injection',
        reason: 'table names come from an allow-list',
      },
    );
    expect(suppressionIn('/* svc-ignore weak-hash: a cache key, not a password */')?.reason).toBe(
      'a cache key, not a password',
    );
    expect(suppressionIn('-- svc-ignore sql-injection')?.reason).toBe('suppressed inline (no reason given)');
    expect(suppressionIn('const s = "svc-ignore code-injection: not a comment";')).toBeNull();
  });

  it('dismisses a finding whose line or the line above names its rule, and only that rule', () => {
    const text = [
      'function run(req) {',
      '  // svc-ignore code-injection: the expression comes from our own config',
      '  return eval(req.query.code);',
      '}',
      'eval(req.body.x); // svc-ignore sql-injection: wrong rule named',
    ].join('\n');
    const found = markSuppressed(
      mergeFindings([
        draft('src/a.js', 'security/code-injection', 'P0', 3),
        draft('src/a.js', 'security/code-injection', 'P0', 5),
      ]),
      () => text,
    );
    expect(found.map((f) => [f.line, f.dismissal?.reason ?? null])).toEqual([
      [3, 'the expression comes from our own config'],
      [5, null],
    ]);
  });
});

describe('scoped learnings', () => {
  const found = mergeFindings([
    draft('src/crypto.js', 'security/weak-hash', 'P1'),
    draft('legacy/old.js', 'security/code-injection', 'P0'),
    draft('src/app.js', 'security/code-injection', 'P0'),
  ]);
  const learning = (id: string, scope: Parameters<typeof applyLearnings>[1][number]['scope']) => ({
    id,
    learning: `fact ${id}`,
    scope,
  });

  it('suppresses what a suppress scope covers, as a dismissal naming the learning', () => {
    const out = applyLearnings(found, [learning('lrn_1', { path: 'legacy/**', action: 'suppress' })]);
    expect(out.map((f) => [f.path, f.dismissal?.reason ?? null])).toEqual([
      ['legacy/old.js', 'learning lrn_1: fact lrn_1'],
      ['src/app.js', null],
      ['src/crypto.js', null],
    ]);
  });

  it('downgrades one step by rule, says so in the body, and leaves sentences without a scope alone', () => {
    const out = applyLearnings(found, [
      learning('lrn_2', { rule: 'security/code-injection', action: 'downgrade' }),
      learning('lrn_3', null),
    ]);
    expect(out.map((f) => `${f.path} ${f.severity}`)).toEqual([
      'legacy/old.js P1',
      'src/app.js P1',
      'src/crypto.js P1',
    ]);
    expect(out[1]?.body).toContain('lowered from P0 by learning lrn_2');
    expect(out[2]?.body).toBe('b');
  });

  it('needs both parts of a scope that names a rule and a path', () => {
    const out = applyLearnings(found, [
      learning('lrn_4', { rule: 'security/code-injection', path: 'legacy/**', action: 'suppress' }),
    ]);
    expect(out.filter((f) => f.dismissal).map((f) => f.path)).toEqual(['legacy/old.js']);
  });
});
