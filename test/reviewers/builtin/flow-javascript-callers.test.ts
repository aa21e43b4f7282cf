/**
 * JavaScript/TypeScript helpers as sinks (flow/javascript-callers.ts), in the same file and across
 * one import inside the repository (imported-helpers.ts, imported-calls.ts). The adapter is asked
 * which calls reach the first `sink(...)` of a snippet; the engine then runs the command-injection
 * rule to show where the finding lands and what it says.
 */
import { parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { javascriptFlow } from '../../../src/reviewers/builtin/flow/javascript';
import { candidatePaths } from '../../../src/reviewers/builtin/imported-helpers';
import { napiLanguage } from '../../../src/reviewers/builtin/languages';
import type { BaseReader, ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

/** The calls reaching the first `sink(...)` of `code`: the call's text and the helpers it passes through. */
function callers(code: string) {
  const root = parse(napiLanguage('typescript'), code).root();
  const call = root.find({
    rule: { kind: 'call_expression', has: { field: 'function', regex: '^sink$' } },
  });
  const value = call?.field('arguments')?.namedChildren()[0];
  if (!value) throw new Error('no sink(...) in snippet');
  return (javascriptFlow.callersReaching?.(value, {}) ?? []).map((c) => ({
    call: c.call.text(),
    through: c.through.map((t) => `${t.helper}(${t.parameter})`).join(' > '),
  }));
}

describe('javascript helpers as sinks', () => {
  it('finds the calls of a helper whose parameter reaches the sink, with non-constant arguments only', () => {
    const code = [
      'function run(cmd, opts) { sink(cmd, opts); }',
      "const DF = 'df -h';",
      "function a(ref) { run('git log ' + ref); }",
      "function b() { run('uptime'); run(DF + ' /', { cwd: ref }); }",
    ].join('\n');
    expect(callers(code)).toEqual([{ call: "run('git log ' + ref)", through: 'run(cmd)' }]);
  });

  it('follows callers of callers at any depth, once each when they recurse', () => {
    const code = [
      'function sh(c: string) { return sink(c); }',
      `const git = (args: string, n = 1): string => (n ? git(args, n - 1) : sh(\`git \${args}\`));`,
      'export function view(req: Request) { return git(new URL(req.url).pathname); }',
    ].join('\n');
    expect(callers(code)).toEqual([
      { call: `sh(\`git \${args}\`)`, through: 'sh(c)' },
      { call: 'git(args, n - 1)', through: 'git(args) > sh(c)' },
      { call: 'git(new URL(req.url).pathname)', through: 'git(args) > sh(c)' },
    ]);
  });

  it('follows methods called on this or an instance', () => {
    const code = [
      'class Repo {',
      `  run(args) { return sink(\`git \${args}\`); }`,
      "  checkout(ref) { return this.run('checkout ' + ref); }",
      '}',
      'function hook(body) { new Repo().checkout(body.ref); }',
    ].join('\n');
    expect(callers(code)).toEqual([
      { call: "this.run('checkout ' + ref)", through: 'run(args)' },
      { call: 'new Repo().checkout(body.ref)', through: 'checkout(ref) > run(args)' },
    ]);
  });

  it('does not take another binding of the same name for the helper', () => {
    const code = [
      'function run(cmd) { sink(cmd); }',
      'function worker(jobs) {',
      '  const run = (job) => jobs.push(job);',
      `  run(\`deploy \${jobs[0]}\`);`,
      '}',
    ].join('\n');
    expect(callers(code)).toEqual([]);
  });

  it('follows nothing from a sink whose value is constant or not a parameter', () => {
    expect(callers("function run(cmd) { sink('ls'); }\nrun(req.query.x);")).toEqual([]);
    expect(callers('function run(cmd) { sink(req.query.x); }\nrun(req.query.x);')).toEqual([]);
  });
});

describe('relative imports', () => {
  it('names the files an import may be, the importer extension first', () => {
    expect(candidatePaths('src/routes/log.ts', '../lib/shell')).toEqual([
      'src/lib/shell.ts',
      'src/lib/shell.tsx',
      'src/lib/shell.js',
      'src/lib/shell/index.ts',
      'src/lib/shell/index.tsx',
      'src/lib/shell/index.js',
    ]);
    expect(candidatePaths('src/a.ts', './b.js')).toEqual(['src/b.js', 'src/b.ts', 'src/b.tsx', 'src/b.mts']);
    // Out of the repository, or not code: nothing to read.
    expect(candidatePaths('a.js', '../../etc/passwd')).toEqual([]);
    expect(candidatePaths('src/a.js', '../package.json')).toEqual([]);
  });
});

const security = async (): Promise<CatalogSkill> => {
  const s = await catalogSkill('security');
  if (!s) throw new Error('no catalog skill security');
  return s;
};
const never = new AbortController().signal;

/** A changed file with only `changed` lines added. */
const changedFile = (path: string, code: string, changed: { start: number; end: number }[]): ReviewFile => ({
  diff: snippetDiffFile(path, code, changed),
  content: code,
});

/** A head reader over `files`, recording what it was asked. */
function headOf(files: Record<string, string>): { read: BaseReader; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    read: async (paths) => {
      asked.push(...paths);
      return new Map(paths.map((p) => [p, files[p] ?? null]));
    },
  };
}

const UTILS = [
  "const { exec } = require('child_process');",
  'function sh(line, cb) {',
  "  exec(line, { cwd: '/srv/repo' }, cb);",
  '}',
  'function runGit(args, cb) {',
  "  sh('git ' + args, cb);",
  '}',
  'module.exports = { runGit, version: () => sh("git --version") };',
].join('\n');

describe('helpers across one import', () => {
  const route = [
    "const { runGit } = require('../utils');",
    'module.exports = (router) => {',
    "  router.get('/head', (req, res) => runGit('rev-parse HEAD', (e, out) => res.send(out)));",
    "  router.get('/log', (req, res) => runGit('log ' + req.query.ref, (e, out) => res.send(out)));",
    '};',
  ].join('\n');

  it('reports a changed call of an exported helper of another file that runs a shell command', async () => {
    const head = headOf({ 'src/utils.js': UTILS });
    const result = await runBuiltinSkill(
      await security(),
      [changedFile('src/routes/log.js', route, [{ start: 3, end: 4 }])],
      { reviewerId: 'security', signal: never, readHead: head.read },
    );
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([['security/command-injection', 4]]);
    const [finding] = result.findings;
    expect(finding?.title).toContain('through `runGit()` of src/utils.js');
    expect(finding?.body).toContain("`'log ' + req.query.ref`");
    expect(finding?.body).toContain('`runGit()` (`args`), then `sh()` (`line`)');
    expect(finding?.body).toContain('src/utils.js:3');
    expect(head.asked).toContain('src/utils.js');
  });

  it('reports the same in an analysis thread (the helpers cross to it as data)', async () => {
    const result = await runBuiltinSkill(
      await security(),
      [changedFile('src/routes/log.js', route, [{ start: 3, end: 4 }])],
      {
        reviewerId: 'security',
        signal: never,
        readHead: headOf({ 'src/utils.js': UTILS }).read,
        analysisThread: true,
      },
    );
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([['security/command-injection', 4]]);
  });

  it('follows nothing without a head reader, and nothing for constant arguments', async () => {
    const skill = await security();
    const without = await runBuiltinSkill(
      skill,
      [changedFile('src/routes/log.js', route, [{ start: 4, end: 4 }])],
      {
        reviewerId: 'security',
        signal: never,
      },
    );
    expect(without.findings).toEqual([]);
    const constants = await runBuiltinSkill(
      skill,
      [changedFile('src/routes/log.js', route, [{ start: 3, end: 3 }])],
      { reviewerId: 'security', signal: never, readHead: headOf({ 'src/utils.js': UTILS }).read },
    );
    expect(constants.findings).toEqual([]);
  });

  it('reads ES imports, namespaces and a module of the change itself', async () => {
    const shell = [
      "import { execSync } from 'node:child_process';",
      'export function run(command: string): string {',
      "  return execSync(command, { encoding: 'utf8' });",
      '}',
    ].join('\n');
    const page = [
      "import { run as sh } from '../lib/shell';",
      "import * as shell from '../lib/shell';",
      'export function show(req: Request) {',
      "  const ref = new URL(req.url).searchParams.get('ref');",
      `  return sh(\`git show \${ref}\`) + shell.run(\`git log \${ref}\`);`,
      '}',
    ].join('\n');
    const files = [
      changedFile('src/routes/show.ts', page, [{ start: 5, end: 5 }]),
      // The module is in the change (unchanged lines around the sink): read from there.
      changedFile('src/lib/shell.ts', `${shell}\n// touched\n`, [{ start: 5, end: 5 }]),
    ];
    const head = headOf({});
    const result = await runBuiltinSkill(await security(), files, {
      reviewerId: 'security',
      signal: never,
      readHead: head.read,
    });
    expect(result.findings.map((f) => [f.path, f.line])).toEqual([['src/routes/show.ts', 5]]);
    expect(head.asked).toEqual([]);
  });

  it('does not follow an import of an import', async () => {
    const reexport = "const { runGit } = require('./utils');\nexports.git = (args) => runGit(args);";
    const route2 =
      "const { git } = require('../proxy');\nexports.log = (req) => git('log ' + req.query.ref);";
    const result = await runBuiltinSkill(
      await security(),
      [changedFile('src/routes/log.js', route2, [{ start: 2, end: 2 }])],
      {
        reviewerId: 'security',
        signal: never,
        readHead: headOf({ 'src/proxy.js': reexport, 'src/utils.js': UTILS }).read,
      },
    );
    expect(result.findings).toEqual([]);
  });
});

describe('a changed line the value of an unchanged sink is built on', () => {
  const code = (exec: string) =>
    [
      "var execSync = require('child_process').execSync;",
      'function gcov(args, root) {',
      "  var cmd = 'find ' + root +",
      `    ' -exec ' + ${exec} + ' {} +';`,
      '  execSync(cmd);',
      '}',
    ].join('\n');
  const head = code("(args.options['gcov-exec'] || 'gcov')");
  const file: ReviewFile = {
    diff: { ...snippetDiffFile('lib/coverage.js', head, [{ start: 4, end: 4 }]), change: 'modified' },
    content: head,
  };

  it('is reported on that line, naming the sink', async () => {
    const result = await runBuiltinSkill(await security(), [file], { reviewerId: 'security', signal: never });
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([['security/command-injection', 4]]);
    expect(result.findings[0]?.body).toContain('reaches `execSync(cmd)` at line 5');
  });

  it('is not new when the base built the value the same way (re-indented)', async () => {
    const reindented = head.replace("    ' -exec '", "        ' -exec '");
    const readBase: BaseReader = async (paths) => new Map(paths.map((p) => [p, reindented]));
    const result = await runBuiltinSkill(await security(), [file], {
      reviewerId: 'security',
      signal: never,
      readBase,
    });
    expect(result.findings).toEqual([]);
    expect(result.gaps.map((g) => g.code)).toEqual(['builtin_preexisting_not_reported']);
  });

  it('is new when the base built that line from constants', async () => {
    const base = code("'gcov'");
    const readBase: BaseReader = async (paths) => new Map(paths.map((p) => [p, base]));
    const result = await runBuiltinSkill(await security(), [file], {
      reviewerId: 'security',
      signal: never,
      readBase,
    });
    expect(result.findings.map((f) => f.line)).toEqual([4]);
  });
});
