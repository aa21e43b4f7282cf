/**
 * Go and Java: a same-file helper whose parameter reaches a sink is a sink for its callers
 * (`flow.callers`), and a rule's `anchor` places a finding where the defect was made.
 */
import { parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import type { LineRange } from '../../../src/core/review';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { resolutionWork } from '../../../src/reviewers/builtin/flow';
import { goFlow } from '../../../src/reviewers/builtin/flow/go';
import { javaFlow } from '../../../src/reviewers/builtin/flow/java';
import { napiLanguage } from '../../../src/reviewers/builtin/languages';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill, skillFromFiles } from '../../../src/skills/catalog';

const never = new AbortController().signal;

async function security(): Promise<CatalogSkill> {
  const skill = await catalogSkill('security');
  if (!skill) throw new Error('no catalog skill security');
  return skill;
}

/** The findings of `rule` in `code` at `path`, with only `changed` lines changed (all when omitted). */
async function findings(path: string, code: string, rule: string, changed: LineRange[] | null = null) {
  const file: ReviewFile = { diff: snippetDiffFile(path, code, changed), content: code };
  const result = await runBuiltinSkill(await security(), [file], { reviewerId: 'security', signal: never });
  return result.findings.filter((f) => f.rule === `security/${rule}`);
}

const lines = (...n: number[]): LineRange[] => n.map((l) => ({ start: l, end: l }));

describe('Go: a helper whose parameter reaches sh -c is a sink for its callers', () => {
  const code = [
    'package ops', // 1
    '', // 2
    'func shell(script string) error {', // 3
    '\treturn exec.Command("sh", "-c", script).Run()', // 4
    '}', // 5
    '', // 6
    'func archive(dir string) error {', // 7
    '\treturn shell("tar czf /tmp/b.tgz " + dir)', // 8
    '}', // 9
    '', // 10
    'func (h *H) Backup(w http.ResponseWriter, r *http.Request) {', // 11
    '\t_ = archive(r.FormValue("dir"))', // 12
    '\t_ = shell("sync")', // 13
    '}', // 14
    '',
  ].join('\n');

  it('reports a changed call two helpers above the sink, naming the path the value takes', async () => {
    const found = await findings('internal/ops/backup.go', code, 'command-injection', lines(12));
    expect(found.map((f) => f.line)).toEqual([12]);
    expect(found[0]?.body).toContain('`archive()` (parameter `dir`) → `shell()` (parameter `script`)');
    expect(found[0]?.body).toContain('r.FormValue("dir")');
    expect(found[0]?.body).toContain('sink at line 4');
  });

  it('leaves a caller passing a constant quiet', async () => {
    expect(await findings('internal/ops/backup.go', code, 'command-injection', lines(13))).toEqual([]);
  });

  it('reports each place once when every line changed', async () => {
    const found = await findings('internal/ops/backup.go', code, 'command-injection');
    expect(found.map((f) => f.line)).toEqual([4, 8, 12]);
  });

  it('follows a cycle of calls once and ends', async () => {
    const cycle = [
      'package ops',
      '',
      'func a(s string, n int) error {',
      '\tif n > 0 { return b(s, n-1) }',
      '\treturn exec.Command("sh", "-c", s).Run()',
      '}',
      '',
      'func b(s string, n int) error { return a(s, n) }',
      '',
      'func H(r *http.Request) { _ = b(r.FormValue("s"), 2) }',
      '',
    ].join('\n');
    const found = await findings('internal/ops/cycle.go', cycle, 'command-injection', lines(10));
    expect(found.map((f) => f.line)).toEqual([10]);
  });

  it('does work per sink that does not grow with the callers of other helpers', async () => {
    const file = (n: number) =>
      [
        'package ops',
        '',
        ...Array.from(
          { length: n },
          (_, i) => `func run${i}(s string) error { return exec.Command("sh", "-c", s).Run() }`,
        ),
        'func H(r *http.Request) {',
        ...Array.from({ length: n }, (_, i) => `\t_ = run${i}(r.FormValue("p${i}"))`),
        '}',
        '',
      ].join('\n');
    const visits = async (n: number) => {
      const before = resolutionWork.visits;
      const found = await findings('internal/ops/many.go', file(n), 'command-injection');
      expect(found).toHaveLength(2 * n);
      return resolutionWork.visits - before;
    };
    const small = await visits(100);
    const large = await visits(200);
    expect(large).toBeLessThanOrEqual(2.3 * small);
  });
});

describe('Java: a helper whose parameter reaches a command is a sink for its callers', () => {
  const code = [
    'public class Ops {', // 1
    '    private void run(String command) throws IOException {', // 2
    '        Runtime.getRuntime().exec(new String[] {"sh", "-c", command});', // 3
    '    }', // 4
    '    private int argv(List<String> command) throws Exception {', // 5
    '        return new ProcessBuilder(command).start().waitFor();', // 6
    '    }', // 7
    '    public void ping(HttpServletRequest req) throws Exception {', // 8
    '        run("ping -c 1 " + req.getParameter("host"));', // 9
    '        run("uptime");', // 10
    '        argv(List.of("ping", "-c", "1", req.getParameter("host")));', // 11
    '    }', // 12
    '}', // 13
    '',
  ].join('\n');

  it('reports a changed call whose argument reaches sh -c', async () => {
    const found = await findings('src/main/java/Ops.java', code, 'command-injection', lines(9, 10, 11));
    expect(found.map((f) => f.line)).toEqual([9]);
    expect(found[0]?.body).toContain('`run()` (parameter `command`)');
  });

  it('reads an argument vector handed to a helper as the vector: a fixed program stays quiet', async () => {
    const found = await findings('src/main/java/Ops.java', code, 'command-injection', lines(11));
    expect(found).toEqual([]);
  });
});

describe('flow.caller_text: a wrapper of a JDBC Statement is a sink for its callers only', () => {
  const code = [
    'public class Appender {', // 1
    '    protected String statement(Event event) {', // 2
    '        return layout.format(event);', // 3
    '    }', // 4
    '    protected void execute(String sql) throws SQLException {', // 5
    '        try (Statement stmt = connection.createStatement()) {', // 6
    '            stmt.executeUpdate(sql);', // 7
    '        }', // 8
    '    }', // 9
    '    public void flush(Event event) throws SQLException {', // 10
    '        execute(statement(event));', // 11
    '        execute("DELETE FROM log WHERE age > 30");', // 12
    '    }', // 13
    '}', // 14
    '',
  ].join('\n');
  const path = 'src/main/java/com/acme/Appender.java';

  it('reports the changed call handing it formatted text, whatever the text reads as', async () => {
    const found = await findings(path, code, 'sql-injection', lines(11, 12));
    expect(found.map((f) => f.line)).toEqual([11]);
    expect(found[0]?.body).toContain('`execute()` (parameter `sql`)');
  });

  it('does not report the wrapper itself, whose value is only its parameter', async () => {
    const found = await findings(path, code, 'sql-injection', lines(5, 6, 7, 8, 9));
    expect(found).toEqual([]);
  });

  it('is read from a rule file and needs flow.callers', async () => {
    const manifest =
      '---\nid: house\ntitle: House\ndescription: House rules.\nlanguages: [java]\n---\nHouse.\n';
    const rule = (callers: string) =>
      `id: r\nlanguage: java\nmessage: m\nnote: n\nflow: { value: A${callers}, caller_text: x }\nrule: { pattern: run($A) }\n`;
    const skill = await skillFromFiles('house', {
      'SKILL.md': manifest,
      'rules/r.yml': rule(', callers: true'),
    });
    expect(skill.rules[0]?.flow?.callerText).toBe('x');
    await expect(skillFromFiles('house', { 'SKILL.md': manifest, 'rules/r.yml': rule('') })).rejects.toThrow(
      /caller_text needs flow.callers/,
    );
  });
});

describe('a rule anchor: where the defect was made, once', () => {
  const code = [
    'public class Receiver {', // 1
    '    public Object receive(Socket socket) throws Exception {', // 2
    '        ObjectInputStream in = new ObjectInputStream(socket.getInputStream());', // 3
    '        log.debug("receiving");', // 4
    '        return in.readObject();', // 5
    '    }', // 6
    '}', // 7
    '',
  ].join('\n');
  const path = 'src/main/java/com/acme/Receiver.java';

  it('reports the stream at its constructor when the readObject() line did not change', async () => {
    const found = await findings(path, code, 'unsafe-deserialization', lines(3));
    expect(found.map((f) => f.line)).toEqual([3]);
  });

  it('reports one finding, at the constructor, when both changed', async () => {
    const found = await findings(path, code, 'unsafe-deserialization');
    expect(found.map((f) => f.line)).toEqual([3]);
  });

  it('reports the readObject() when only it changed', async () => {
    const found = await findings(path, code, 'unsafe-deserialization', lines(5));
    expect(found.map((f) => f.line)).toEqual([5]);
  });

  it('is read from a rule file and must name a metavariable', async () => {
    const manifest =
      '---\nid: house\ntitle: House\ndescription: House rules.\nlanguages: [java]\n---\nHouse.\n';
    const rule = (anchor: string) =>
      `id: r\nlanguage: java\nmessage: m\nnote: n\nanchor: ${anchor}\nrule: { pattern: $A.readObject() }\n`;
    const skill = await skillFromFiles('house', { 'SKILL.md': manifest, 'rules/r.yml': rule('A') });
    expect(skill.rules[0]?.anchor).toBe('A');
    await expect(
      skillFromFiles('house', { 'SKILL.md': manifest, 'rules/r.yml': rule('$A') }),
    ).rejects.toThrow(/anchor must name a metavariable/);
  });
});

describe('Go: what a same-file function returns', () => {
  const shapeOfSink = (code: string) => {
    const value = parse(napiLanguage('go'), code)
      .root()
      .find({ rule: { pattern: 'sink($X)' } })
      ?.getMatch('X');
    if (!value) throw new Error('no sink');
    return goFlow.shapeOf(value);
  };
  const file = (helpers: string, call: string) =>
    `package p\n\n${helpers}\n\nfunc f(r *http.Request) {\n\tsink(${call})\n}\n`;

  it('is constant when every return is, at any depth, whatever the arguments', () => {
    const helpers = [
      'func base() string { return "find /tmp -delete" }',
      'func script(days int) string {',
      '\tif days > 30 { return base() }',
      '\treturn fmt.Sprintf("find /var/log -mtime +%d -delete", days)',
      '}',
    ].join('\n');
    expect(shapeOfSink(file(helpers, 'script(7)'))).toEqual({ constant: true, text: 'find /tmp -delete' });
  });

  it('is dynamic when a return depends on a parameter or on data, and ends on recursion', () => {
    expect(
      shapeOfSink(file('func wrap(s string) string { return "set -e; " + s }', 'wrap("ls")')).constant,
    ).toBe(false);
    expect(
      shapeOfSink(file('func q(r *http.Request) string { return r.FormValue("q") }', 'q(r)')).constant,
    ).toBe(false);
    const recursive = 'func loop(n int) string {\n\tif n > 0 { return loop(n - 1) }\n\treturn "x"\n}';
    expect(shapeOfSink(file(recursive, 'loop(3)'))).toEqual({ constant: true, text: '' });
    // A method or a function the file declares twice is not followed.
    expect(shapeOfSink(file('func (s *S) name() string { return "x" }', 's.name()')).constant).toBe(false);
  });
});

describe('Java: what a method of the file returns', () => {
  const shapeOfSink = (methods: string, call: string) => {
    const code = `class C {\n${methods}\n  void f(String x) { sink(${call}); }\n}\n`;
    const value = parse(napiLanguage('java'), code)
      .root()
      .find({ rule: { pattern: 'sink($X)' } })
      ?.getMatch('X');
    if (!value) throw new Error('no sink');
    return javaFlow.shapeOf(value);
  };

  it('is constant when every return is, and keeps the text of what it returns', () => {
    const methods =
      '  String base() { return "ls -l"; }\n  String cmd(int n) { if (n > 1) return base(); return "ls"; }';
    expect(shapeOfSink(methods, 'this.cmd(2)')).toEqual({ constant: true, text: 'ls -l' });
    expect(shapeOfSink('  String sql(String n) { return "SELECT 1 WHERE n = " + n; }', 'sql(x)')).toEqual({
      constant: false,
      text: 'SELECT 1 WHERE n = \u0000',
    });
  });

  it('does not follow overloads or methods of other objects', () => {
    const overloads = '  String a() { return "x"; }\n  String a(int n) { return "y"; }';
    expect(shapeOfSink(overloads, 'a()').constant).toBe(false);
    expect(shapeOfSink('  String a() { return "x"; }', 'other.a()').constant).toBe(false);
  });
});
