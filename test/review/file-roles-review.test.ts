/**
 * File roles as a review applies them (issue 23.6): a committed bundle and a build's output are
 * generated (only secrets looked for), a benchmark script is tooling (no security rules, no
 * debug-statement, never a P0), and `linguist-language` decides the grammar the rules read a file in.
 */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../eval/evaluate';
import type { FindingDraft } from '../../src/core/review';
import { applyPolicy, prepareFiles, repositoryContext } from '../../src/review/policy';
import { runBuiltinSkill } from '../../src/reviewers/builtin/engine';
import { ruleLanguageOf } from '../../src/reviewers/builtin/languages';
import type { ReviewFile } from '../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../src/skills/catalog';

const signal = new AbortController().signal;
const skill = async (id: string): Promise<CatalogSkill> => {
  const s = await catalogSkill(id);
  if (!s) throw new Error(`no catalog skill ${id}`);
  return s;
};

const file = (path: string, content: string): ReviewFile => ({
  diff: snippetDiffFile(path, content),
  content,
});

const context = (texts: Record<string, string>) => repositoryContext(new Map(Object.entries(texts)));

/** Request input evaluated, and a debugger statement: a P0 and a P2 in production code. */
const risky = [
  'export function run(req) {',
  '  const code = req.query.code;',
  '  debugger;',
  '  return eval(code);',
  '}',
  '',
].join('\n');

/** A print left in a library function. */
const printing = ['def load(rows):', '    print(len(rows))', '    return rows', ''].join('\n');

async function review(files: ReviewFile[], ctx: ReturnType<typeof context>): Promise<string[]> {
  const prepared = prepareFiles(files, ctx);
  const drafts: FindingDraft[] = [];
  for (const id of ['security', 'correctness']) {
    drafts.push(...(await runBuiltinSkill(await skill(id), prepared, { reviewerId: id, signal })).findings);
  }
  return applyPolicy(drafts, prepared, ctx)
    .map((d) => `${d.path} ${d.rule} ${d.severity}`)
    .sort();
}

describe('file roles in a review', () => {
  it('reviews production code, and nothing but secrets in bundles and build output', async () => {
    const esbuild = [
      '"use strict";',
      'var __defProp = Object.defineProperty;',
      'var __export = (target, all) => {',
      '  for (var name in all) __defProp(target, name, { get: all[name], enumerable: true });',
      '};',
      '',
      '// src/run.ts',
      risky,
    ].join('\n');
    const ctx = context({ 'package.json': JSON.stringify({ name: 'app', main: 'out/index.js' }) });
    const found = await review(
      [
        file('src/run.js', risky),
        file('build/bundle.js', esbuild),
        file('out/index.js', risky),
        file('src/run.bench.js', risky),
        file('src/acme/loader.py', printing),
        file('src/acme/benchmark.py', printing),
      ],
      ctx,
    );
    expect(found).toEqual([
      'src/acme/loader.py correctness/debug-statement P2',
      'src/run.js correctness/debug-statement P2',
      'src/run.js security/code-injection P0',
    ]);
    const roles = prepareFiles(
      [file('build/bundle.js', esbuild), file('out/index.js', risky), file('src/run.bench.js', risky)],
      ctx,
    ).map((f) => f.role);
    expect(roles).toEqual(['generated', 'generated', 'tooling']);
  });

  it('treats a root build/ as output when package.json or tsconfig.json build into it', async () => {
    const files = [file('build/index.js', risky), file('build/release.js', risky)];
    const none = prepareFiles(files, context({}));
    expect(none.map((f) => f.role)).toEqual(['tooling', 'tooling']);
    const byPackage = prepareFiles(files, context({ 'package.json': '{"main": "./build/index.js"}' }));
    expect(byPackage.map((f) => f.role)).toEqual(['generated', 'generated']);
    const byTsconfig = prepareFiles(
      files,
      context({ 'tsconfig.json': '{"compilerOptions": {"outDir": "build"}}' }),
    );
    expect(byTsconfig.map((f) => f.role)).toEqual(['generated', 'generated']);
    // In tooling, the code injection is not looked for and the debugger is no finding.
    expect(await review(files, context({}))).toEqual([]);
  });

  it('reads a file in the language .gitattributes gives it (linguist-language)', async () => {
    const ctx = context({
      '.gitattributes': ['*.es6 linguist-language=JavaScript', 'src/*.js linguist-language=Text', ''].join(
        '\n',
      ),
    });
    const prepared = prepareFiles([file('src/run.es6', risky), file('src/run.js', risky)], ctx);
    expect(prepared.map((f) => f.declaredLanguage)).toEqual(['javascript', 'text']);
    expect(await review([file('src/run.es6', risky), file('src/run.js', risky)], ctx)).toEqual([
      'src/run.es6 correctness/debug-statement P2',
      'src/run.es6 security/code-injection P0',
    ]);
  });

  it('maps linguist names to rule grammars, keeping TSX for a .tsx file declared TypeScript', () => {
    expect(ruleLanguageOf('src/a.ts')).toBe('typescript');
    expect(ruleLanguageOf('src/a.es6', 'javascript')).toBe('javascript');
    expect(ruleLanguageOf('src/a.tsx', 'typescript')).toBe('tsx');
    expect(ruleLanguageOf('src/a.h', 'golang')).toBe('go');
    expect(ruleLanguageOf('scripts/a', 'Python')).toBe('python');
    expect(ruleLanguageOf('src/a.ts', 'text')).toBeNull();
    expect(ruleLanguageOf('src/a.c')).toBeNull();
  });
});
