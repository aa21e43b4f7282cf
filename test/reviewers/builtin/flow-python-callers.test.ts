/**
 * Python helpers as sinks (flow/python-callers.ts): a function whose parameter reaches a sink is a
 * sink for its callers, at any depth. Each snippet's sink is the first argument of `sink(...)`;
 * the test asks which calls reach it and through which helpers, then runs the command-injection
 * rule through the engine to show where the finding lands.
 */
import python from '@ast-grep/lang-python';
import { parse, registerDynamicLanguage } from '@ast-grep/napi';
import { beforeAll, describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { pythonFlow } from '../../../src/reviewers/builtin/flow/python';
import { pythonCandidatePaths } from '../../../src/reviewers/builtin/flow/python-modules';
import type { BaseReader } from '../../../src/reviewers/types';
import { catalogSkill } from '../../../src/skills/catalog';

beforeAll(() => registerDynamicLanguage({ python }));

/** The calls reaching the first `sink(...)` of `code`: the call's text and the helpers it passes through. */
function callers(code: string) {
  const root = parse('python', code).root();
  const call = root.find({ rule: { kind: 'call', has: { field: 'function', regex: '^sink$' } } });
  const value = call?.field('arguments')?.namedChildren()[0];
  if (!value) throw new Error('no sink(...) in snippet');
  const parse_ = {};
  return (pythonFlow.callersReaching?.(value, parse_) ?? []).map((c) => ({
    call: c.call.text(),
    through: c.through.map((t) => `${t.helper}(${t.parameter})`).join(' > '),
  }));
}

describe('python helpers as sinks', () => {
  it('finds the calls of a helper whose parameter reaches the sink, with non-constant arguments only', () => {
    const code = [
      'def run(cmd, **kw):',
      '    sink(cmd)',
      'def a(ref):',
      '    run(f"git log {ref}")',
      'def b():',
      '    run("git status")',
      '    run(cmd="ls " + CONSTANT_DIR)',
    ].join('\n');
    expect(callers(code)).toEqual([{ call: 'run(f"git log {ref}")', through: 'run(cmd)' }]);
  });

  it('follows callers of callers at any depth, once each when they recurse', () => {
    const code = [
      'def sh(c):',
      '    sink(c)',
      'def git(args, n=1):',
      '    if n:',
      '        return git(args, n - 1)',
      '    return sh("git " + args)',
      'def view(request):',
      '    return git(request.args["ref"])',
    ].join('\n');
    expect(callers(code)).toEqual([
      { call: 'sh("git " + args)', through: 'sh(c)' },
      { call: 'git(args, n - 1)', through: 'git(args) > sh(c)' },
      { call: 'git(request.args["ref"])', through: 'git(args) > sh(c)' },
    ]);
  });

  it("maps keyword arguments, methods through self and keeps other objects' methods apart", () => {
    const code = [
      'class Runner:',
      '    def run(self, command, timeout=5):',
      '        sink(command)',
      '    def restart(self, name):',
      '        self.run(timeout=1, command="systemctl restart " + name)',
      'def other(task, x):',
      '    task.run(x)',
      '    subprocess.run(x)',
      '    Runner.run(task, x)',
    ].join('\n');
    expect(callers(code).map((c) => c.call)).toEqual([
      'self.run(timeout=1, command="systemctl restart " + name)',
      'Runner.run(task, x)',
    ]);
  });

  it('does not take a function of the same name in another scope for the helper', () => {
    const code = [
      'def run(cmd):',
      '    sink(cmd)',
      'def outer(x):',
      '    def run(y):',
      '        return y',
      '    return run(x)',
    ].join('\n');
    expect(callers(code)).toEqual([]);
  });
});

describe('python helpers as sinks, through the engine', () => {
  it('reports a changed call of an unchanged shell wrapper, naming the wrapper and the sink line', async () => {
    const skill = await catalogSkill('security');
    if (!skill) throw new Error('no security skill');
    const code = [
      'import subprocess',
      '',
      'def run_cmd(cmd, **kwargs):',
      '    kwargs["shell"] = True',
      '    return subprocess.Popen(cmd, **kwargs)',
      '',
      'def deploy(branch):',
      '    return run_cmd(f"git checkout {branch}")',
      '',
    ].join('\n');
    const result = await runBuiltinSkill(
      skill,
      [{ diff: snippetDiffFile('app/deploy.py', code, [{ start: 8, end: 8 }]), content: code }],
      { reviewerId: 'security', signal: new AbortController().signal },
    );
    const findings = result.findings.filter((f) => f.rule === 'security/command-injection');
    expect(findings.map((f) => f.line)).toEqual([8]);
    expect(findings[0]?.body).toMatch(/run_cmd\(\)/);
    expect(findings[0]?.body).toMatch(/line 5/);
  });
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
  'import subprocess',
  '',
  'def sh(line, **kwargs):',
  '    kwargs["shell"] = True',
  '    return subprocess.run(line, **kwargs)',
  '',
  'def run_git(args, cwd="/srv/repo"):',
  '    return sh("git " + args, cwd=cwd)',
  '',
  'def version():',
  '    return sh("git --version")',
].join('\n');

describe('python helpers across one import', () => {
  const view = [
    'from flask import request',
    'from .utils import run_git as git',
    'from . import utils',
    '',
    'def head():',
    '    return git("rev-parse HEAD")',
    '',
    'def log():',
    '    return git("log " + request.args["ref"])',
    '',
    'def show(ref):',
    '    return utils.run_git(f"show {ref}")',
    '',
    'def page():',
    '    return show(request.args["ref"])',
  ].join('\n');
  const security = async () => {
    const skill = await catalogSkill('security');
    if (!skill) throw new Error('no security skill');
    return skill;
  };
  const run = (changed: { start: number; end: number }[], files: Record<string, string>) =>
    security().then((skill) =>
      runBuiltinSkill(skill, [{ diff: snippetDiffFile('app/views.py', view, changed), content: view }], {
        reviewerId: 'security',
        signal: new AbortController().signal,
        readHead: headOf(files).read,
      }),
    );

  it('reports changed calls of a helper imported from another module, by name, module or through a local function', async () => {
    const result = await run([{ start: 1, end: 15 }], { 'app/utils.py': UTILS });
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([
      ['security/command-injection', 9],
      ['security/command-injection', 12],
      ['security/command-injection', 15],
    ]);
    const [first] = result.findings;
    expect(first?.title).toContain('app/utils.py');
    expect(first?.body).toContain('`run_git()` (`args`), then `sh()` (`line`)');
    expect(first?.body).toContain('app/utils.py:5');
  });

  it('follows nothing when the module is not in the repository or the arguments are constant', async () => {
    expect((await run([{ start: 1, end: 15 }], {})).findings).toEqual([]);
    expect((await run([{ start: 6, end: 6 }], { 'app/utils.py': UTILS })).findings).toEqual([]);
  });

  it('looks for relative modules next to the importer and absolute ones under its directories', () => {
    expect(pythonCandidatePaths('app/api/views.py', '.utils')).toEqual([
      'app/api/utils.py',
      'app/api/utils/__init__.py',
    ]);
    expect(pythonCandidatePaths('app/api/views.py', '..lib.shell')).toEqual([
      'app/lib/shell.py',
      'app/lib/shell/__init__.py',
    ]);
    expect(pythonCandidatePaths('views.py', '..utils')).toEqual([]);
    expect(pythonCandidatePaths('app/views.py', 'app.utils')).toContain('app/utils.py');
  });
});
