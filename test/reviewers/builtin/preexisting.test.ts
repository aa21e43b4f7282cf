/**
 * Findings the change did not introduce: a finding on a touched line is not reported when the
 * same rule matched the same code (whitespace aside) in the file's base version, and each one
 * left out is named in a gap. New copies, changed code and new flows are still reported.
 */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

const signal = new AbortController().signal;
const skill = async (id: string): Promise<CatalogSkill> => {
  const s = await catalogSkill(id);
  if (!s) throw new Error(`no catalog skill ${id}`);
  return s;
};

/** `head` as a modified file whose every line the change touched, and a reader of `base`. */
function touchedEverywhere(path: string, base: string, head: string) {
  const file: ReviewFile = {
    diff: snippetDiffFile(path, head, [{ start: 1, end: head.split('\n').length }]),
    content: head,
  };
  const asked: string[][] = [];
  const readBase = async (paths: readonly string[]) => {
    asked.push([...paths]);
    return new Map(paths.map((p) => [p, p === path ? base : null]));
  };
  return { file, readBase, asked };
}

const run = async (id: string, t: ReturnType<typeof touchedEverywhere>, withBase = true) =>
  runBuiltinSkill(await skill(id), [t.file], {
    reviewerId: id,
    signal,
    ...(withBase ? { readBase: t.readBase } : {}),
  });

describe('findings already there at the base', () => {
  const base = [
    'export function load(items) {',
    "  console.log('loading', items.length);",
    '  return items;',
    '}',
    '',
  ].join('\n');

  it('drops a finding the change only re-indented, names it, and still reports a new copy', async () => {
    // Wrapped in a block: every line is touched, the old print only moved right.
    const head = [
      'export function load(items) {',
      '  if (items) {',
      "    console.log('loading',   items.length);",
      "    console.log('loading', items.length);",
      '  }',
      '  return items;',
      '}',
      '',
    ].join('\n');
    const t = touchedEverywhere('src/load.js', base, head);
    const without = await run('correctness', t, false);
    // Without the base: both prints, one finding (one idiom in the file) listing both places.
    expect(without.findings.map((f) => [f.line, f.locations?.map((l) => l.start)])).toEqual([[3, [3, 4]]]);

    const result = await run('correctness', t);
    // One of the two prints was at the base; the second copy is new.
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([['correctness/debug-statement', 4]]);
    expect(result.gaps).toContainEqual({
      code: 'builtin_preexisting_not_reported',
      message: expect.stringContaining('1 finding(s) in 1 file(s)'),
    });
    expect(t.asked).toEqual([['src/load.js']]);
  });

  it('reports a finding whose code the change altered', async () => {
    const head = base.replace("console.log('loading', items.length)", "console.log('loaded', items)");
    const result = await run('correctness', touchedEverywhere('src/load.js', base, head));
    expect(result.findings.map((f) => f.rule)).toEqual(['correctness/debug-statement']);
    expect(result.gaps.map((g) => g.code)).not.toContain('builtin_preexisting_not_reported');
  });

  it('reports a sink the change made reachable from outside, though its line reads the same', async () => {
    const before = [
      'export function run(req) {',
      "  const code = '1 + 1';",
      '  return eval(code);',
      '}',
      '',
    ].join('\n');
    const after = before.replace("const code = '1 + 1';", 'const code = req.query.code;');
    const result = await run('security', touchedEverywhere('src/run.js', before, after));
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([['security/code-injection', 3]]);
  });

  it('reads no base when nothing was found, and reports as before when the base cannot be read', async () => {
    const clean = touchedEverywhere('src/ok.js', 'export const a = 1;\n', 'export const a = 2;\n');
    await run('correctness', clean);
    expect(clean.asked).toEqual([]);

    const head = base.replace('  console', '    console');
    const t = touchedEverywhere('src/load.js', base, head);
    const failing = await runBuiltinSkill(await skill('correctness'), [t.file], {
      reviewerId: 'correctness',
      signal,
      readBase: async () => {
        throw new Error('git is gone');
      },
    });
    expect(failing.findings).toHaveLength(1);
    expect(failing.gaps).toContainEqual({
      code: 'builtin_base_unreadable',
      message: expect.stringContaining('git is gone'),
    });
  });
});

// Seen on pm2 4.5.6 -> 5.3.1: `windowsHide: true` added to two old `spawn(x, { shell: true })`
// calls and a helper renamed (`package` -> `packager`) made three old shell sinks new P0s.
describe('an old sink whose call changed around its flagged value', () => {
  const base = [
    "const { spawn, exec } = require('child_process');",
    'function fetch(url, dest) {',
    "  return spawn('wget ' + url + ' -O ' + dest, {",
    "    stdio: 'inherit',",
    '    shell: true,',
    '  });',
    '}',
    'function pack(dir, cb) {',
    "  exec('tar czf out.tgz ' + dir, cb);",
    '}',
    'function publish(folder, cb) {',
    '  pack(folder, cb);',
    '}',
    'module.exports = { fetch, publish };',
    '',
  ].join('\n');

  it('is not new when an option is added after the value or the helper is renamed', async () => {
    const head = base
      .replace("    stdio: 'inherit',", "    stdio: 'inherit',\n    windowsHide: true,")
      .replace('function pack(dir, cb)', 'function packager(dir, cb)')
      .replace('  pack(folder, cb);', '  packager(folder, cb);');
    const result = await run('security', touchedEverywhere('lib/tar.js', base, head));
    expect(result.findings.map((f) => `${f.rule}@${f.line}`)).toEqual([]);
    // Without the base every one of them is reported: the sinks are real, just not this change's.
    const unaware = await run('security', touchedEverywhere('lib/tar.js', base, head), false);
    expect(unaware.findings.length).toBeGreaterThanOrEqual(3);
  });

  it('is new when the value that reaches the sink changed', async () => {
    const head = base
      .replace("'wget ' + url + ' -O ' + dest", "'wget ' + url + ' -O ' + dest + ' ' + extra")
      .replace('function fetch(url, dest)', 'function fetch(url, dest, extra)')
      .replace('  pack(folder, cb);', '  pack(folder + cb.name, cb);');
    const result = await run('security', touchedEverywhere('lib/tar.js', base, head));
    expect(result.findings.map((f) => `${f.rule}@${f.line}`).sort()).toEqual([
      'security/command-injection@12',
      'security/command-injection@3',
    ]);
  });
});
