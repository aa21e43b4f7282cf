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
