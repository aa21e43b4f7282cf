/**
 * Rules that depend on the runtime version: the same code is reported where the repository's
 * stated version is in the rule's range, and left alone below it or when no version is stated.
 */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import type { RuntimeStatement } from '../../../src/reviewers/builtin/runtime-version';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill, skillFromFiles } from '../../../src/skills/catalog';

const signal = new AbortController().signal;
const file = (path: string, code: string): ReviewFile => ({
  diff: snippetDiffFile(path, code),
  content: code,
});

async function correctness(): Promise<CatalogSkill> {
  const s = await catalogSkill('correctness');
  if (!s) throw new Error('no correctness skill');
  return s;
}

async function findings(path: string, code: string, runtimes?: RuntimeStatement[]) {
  const result = await runBuiltinSkill(await correctness(), [file(path, code)], {
    reviewerId: 'correctness',
    signal,
    runtimes,
  });
  expect(result.gaps).toEqual([]);
  return result.findings;
}

const PLUGINS = ['import imp', 'def load(path):', '    return imp.load_source("plugin", path)', ''].join(
  '\n',
);

describe('a rule with a runtime range', () => {
  it('reports where the stated version is at least its min', async () => {
    const [f, ...rest] = await findings('app/plugins.py', PLUGINS, [
      { name: 'python', version: '>=3.12', source: 'pyproject.toml#project.requires-python' },
    ]);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      rule: 'correctness/removed-stdlib-module',
      severity: 'P1',
      line: 1,
      title: '`imp` was removed from the standard library in Python 3.12',
    });
    // The finding says which stated version made the rule apply.
    expect(f?.body).toContain(
      'This rule applies to python 3.12 and later; the repository targets python `>=3.12` (pyproject.toml#project.requires-python), lowest version 3.12.0.',
    );
  });

  it('stays quiet below its min, on the lowest of several statements', async () => {
    expect(await findings('app/plugins.py', PLUGINS, [{ name: 'python', version: '3.11' }])).toEqual([]);
    // .python-version says 3.12, but requires-python still allows 3.9: the code must run there.
    expect(
      await findings('app/plugins.py', PLUGINS, [
        { name: 'python', version: '3.12', source: '.python-version' },
        { name: 'python', version: '>=3.9', source: 'pyproject.toml#project.requires-python' },
      ]),
    ).toEqual([]);
  });

  it('stays quiet when no version is stated or none is readable', async () => {
    expect(await findings('app/plugins.py', PLUGINS)).toEqual([]);
    expect(await findings('app/plugins.py', PLUGINS, [])).toEqual([]);
    expect(await findings('app/plugins.py', PLUGINS, [{ name: 'node', version: '22' }])).toEqual([]);
    expect(await findings('app/plugins.py', PLUGINS, [{ name: 'python', version: 'system' }])).toEqual([]);
  });

  it('picks the severity of the range the version falls in', async () => {
    const code = ["const fs = require('fs');", 'fs.rmdirSync(dir, { recursive: true });', ''].join('\n');
    const at = async (version: string) =>
      (await findings('src/clean.js', code, [{ name: 'node', version }])).map((f) => [f.rule, f.severity]);
    expect(await at('>=14.14')).toEqual([]);
    expect(await at('lts/iron')).toEqual([['correctness/rmdir-recursive', 'P2']]);
    expect(await at('24.1.0')).toEqual([['correctness/rmdir-recursive', 'P2']]);
    expect(await at('>=25')).toEqual([['correctness/rmdir-recursive', 'P1']]);
  });

  it('reads go.mod versions for Go rules', async () => {
    const code = [
      'package config',
      '',
      'import "io/ioutil"',
      '',
      'func Load(p string) ([]byte, error) { return ioutil.ReadFile(p) }',
      '',
    ].join('\n');
    const at = async (version: string) =>
      (await findings('config/load.go', code, [{ name: 'go', version, source: 'go.mod#go' }])).map(
        (f) => f.title,
      );
    expect(await at('1.22')).toEqual([
      '`ioutil.ReadFile` is deprecated: use the `io`/`os` function (Go 1.16+)',
    ]);
    expect(await at('1.15')).toEqual([]);
  });

  it('does not change rules without a range', async () => {
    const code = ['def place(order):', '    breakpoint()', ''].join('\n');
    for (const runtimes of [undefined, [{ name: 'python', version: '3.8' }]])
      expect((await findings('app/orders.py', code, runtimes)).map((f) => f.rule)).toEqual([
        'correctness/debug-statement',
      ]);
  });
});

describe('the runtime key of a rule file', () => {
  const manifest =
    '---\nid: house\ntitle: House\ndescription: House rules.\nlanguages: [python]\n---\nHouse rules.\n';
  const rule = (runtime: string) =>
    [
      'id: no-utcnow',
      'language: python',
      'severity: P2',
      'message: utcnow',
      'note: Use now(timezone.utc).',
      `runtime: ${runtime}`,
      'rule: { pattern: datetime.utcnow() }',
    ].join('\n');
  const house = (runtime: string) =>
    skillFromFiles('house', { 'SKILL.md': manifest, 'rules/no-utcnow.yml': rule(runtime) });

  it('is read into the rule', async () => {
    const skill = await house("{ name: python, min: '3.12', max: '3.13' }");
    expect(skill.rules[0]?.runtime).toEqual({ name: 'python', min: '3.12', max: '3.13' });
    const code = 'x = datetime.utcnow()\n';
    const run = (version: string) =>
      runBuiltinSkill(skill, [file('app/a.py', code)], {
        reviewerId: 'house',
        signal,
        runtimes: [{ name: 'python', version }],
      });
    expect((await run('3.12')).findings.map((f) => f.rule)).toEqual(['house/no-utcnow']);
    expect((await run('3.14')).findings).toEqual([]);
  });

  it('refuses an unquoted version, a missing name or no bound at all', async () => {
    // YAML reads 3.10 as the number 3.1.
    await expect(house('{ name: python, min: 3.10 }')).rejects.toThrow(
      /runtime.min must be a quoted version/,
    );
    await expect(house("{ min: '3.10' }")).rejects.toThrow(/runtime.name must name a runtime/);
    await expect(house('{ name: python }')).rejects.toThrow(/runtime needs min, max or both/);
    await expect(house("{ name: python, max: '3.x' }")).rejects.toThrow(/runtime.max/);
  });
});
