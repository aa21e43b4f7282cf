/**
 * The Python flow adapter on real snippets: each snippet passes the value under test to `sink(...)`
 * and the test asks what reaches it. The last block runs the Python security rules that use it
 * through the engine.
 */
import python from '@ast-grep/lang-python';
import { parse, registerDynamicLanguage } from '@ast-grep/napi';
import { beforeAll, describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { pythonFlow } from '../../../src/reviewers/builtin/flow/python';
import { DYNAMIC } from '../../../src/reviewers/builtin/flow/types';
import { catalogSkill } from '../../../src/skills/catalog';

beforeAll(() => registerDynamicLanguage({ python }));

/** The shapes of the first argument of every `sink(...)` call, in source order. */
function sinks(code: string) {
  const root = parse('python', code).root();
  const calls = root.findAll({ rule: { kind: 'call', has: { field: 'function', regex: '^sink$' } } });
  return calls.map((call) => {
    const arg = call.field('arguments')?.namedChildren()[0];
    if (!arg) throw new Error(`sink without argument: ${call.text()}`);
    return pythonFlow.shapeOf(arg);
  });
}
const sink = (code: string) => {
  const [first] = sinks(code);
  if (!first) throw new Error('no sink(...) in snippet');
  return first;
};
const D = DYNAMIC;

describe('python flow: literals and strings built from them', () => {
  it('reads literals as constants with their text', () => {
    expect(sink('sink("SELECT 1")')).toEqual({ constant: true, text: 'SELECT 1' });
    expect(sink("sink(b'raw bytes')")).toEqual({ constant: true, text: 'raw bytes' });
    expect(sink('sink("""\nSELECT *\nFROM t""")')).toEqual({ constant: true, text: '\nSELECT *\nFROM t' });
    expect(sink('sink(42)')).toEqual({ constant: true, text: '42' });
    expect(sink('sink(None)').constant).toBe(true);
    expect(sink('sink("SELECT " "1")')).toEqual({ constant: true, text: 'SELECT 1' });
  });

  it('joins concatenations and f-strings, dynamic when any part is', () => {
    expect(sink('def f(uid):\n    sink("SELECT * FROM t WHERE id = " + uid)')).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE id = ${D}`,
    });
    expect(sink('def f(uid):\n    sink(f"SELECT {{x}} FROM t WHERE id = {uid!r}")')).toEqual({
      constant: false,
      text: `SELECT {x} FROM t WHERE id = ${D}`,
    });
    expect(sink('TABLE = "users"\nsink(f"SELECT * FROM {TABLE}")')).toEqual({
      constant: true,
      text: 'SELECT * FROM users',
    });
    expect(sink('def f(w):\n    sink(f"{1:>{w}}")').constant).toBe(false);
  });

  it('fills %-formats and .format() with their arguments', () => {
    expect(sink('def f(name):\n    sink("SELECT * FROM u WHERE n = \'%s\' AND %d%%" % (name, 3))')).toEqual({
      constant: false,
      text: `SELECT * FROM u WHERE n = '${D}' AND 3%`,
    });
    expect(sink('sink("DELETE FROM %(t)s" % {"t": "jobs"})')).toEqual({
      constant: true,
      text: 'DELETE FROM jobs',
    });
    expect(sink('def f(uid):\n    sink("DELETE FROM s WHERE u = {}".format(uid))')).toEqual({
      constant: false,
      text: `DELETE FROM s WHERE u = ${D}`,
    });
    expect(sink('sink("SELECT {col} FROM {0}".format("t", col="id"))')).toEqual({
      constant: true,
      text: 'SELECT id FROM t',
    });
    expect(sink('def f(kw):\n    sink("SELECT {a}".format(**kw))').constant).toBe(false);
  });

  it('joins literal lists and placeholder lists', () => {
    expect(sink('sink(", ".join(["id", "name"]))')).toEqual({ constant: true, text: 'id, name' });
    expect(sink('def f(ids):\n    sink(", ".join(["%s"] * len(ids)))').constant).toBe(true);
    expect(sink('def f(ids):\n    sink(",".join("?" for _ in ids))').constant).toBe(true);
    expect(sink('def f(cols):\n    sink(", ".join(f"{c} = %s" for c in cols))').constant).toBe(false);
    expect(sink('def f(parts):\n    sink(" ".join(parts))').constant).toBe(false);
  });
});

describe('python flow: names resolve within their own function', () => {
  it('keeps two functions that use the same name apart', () => {
    const [constantQuery, dynamicQuery] = sinks(
      [
        'def count(cursor):',
        '    query = "SELECT count(*) FROM users"',
        '    sink(query)',
        '',
        'def find(cursor, name):',
        '    query = f"SELECT * FROM users WHERE name = \'{name}\'"',
        '    sink(query)',
      ].join('\n'),
    );
    expect(constantQuery).toEqual({ constant: true, text: 'SELECT count(*) FROM users' });
    expect(dynamicQuery).toEqual({ constant: false, text: `SELECT * FROM users WHERE name = '${D}'` });
  });

  it('treats parameters as dynamic, even with a literal default', () => {
    expect(sink('def f(sql="SELECT 1"):\n    sink(sql)').constant).toBe(false);
    expect(sink('def f(*, cmd: str):\n    sink(cmd)').constant).toBe(false);
    expect(sink('handler = lambda cmd: sink(cmd)').constant).toBe(false);
  });

  it('requires every assignment in the function to be constant', () => {
    expect(
      sink('def f(flag):\n    q = "SELECT 1"\n    if flag:\n        q = "SELECT 2"\n    sink(q)'),
    ).toEqual({
      constant: true,
      text: 'SELECT 1',
    });
    expect(sink('def f(x):\n    q = "SELECT 1"\n    q = x\n    sink(q)').constant).toBe(false);
  });

  it('appends += parts and survives self-reference', () => {
    expect(sink('def f():\n    sql = "SELECT * FROM t"\n    sql += " WHERE a = %s"\n    sink(sql)')).toEqual({
      constant: true,
      text: 'SELECT * FROM t WHERE a = %s',
    });
    expect(
      sink('def f(name):\n    sql = "SELECT * FROM t"\n    sql += " WHERE a = " + name\n    sink(sql)'),
    ).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE a = ${D}`,
    });
    expect(sink('def f():\n    q = "SELECT 1"\n    q = q + " LIMIT 1"\n    sink(q)').constant).toBe(true);
    expect(sink('def f(x):\n    a = b\n    b = a + x\n    sink(a)').constant).toBe(false);
  });

  it('counts unpacking of data, with-targets and exception names as dynamic', () => {
    expect(sink('def f(pair):\n    a, b = pair\n    sink(a)').constant).toBe(false);
    expect(sink('def f():\n    a, b = "x", "y"\n    sink(a)').constant).toBe(true);
    expect(sink('def f():\n    with open("p") as fh:\n        sink(fh)').constant).toBe(false);
    expect(sink('def f():\n    for k, v in {"a": "b"}.items():\n        sink(k)').constant).toBe(false);
  });

  it("counts the environment and temporary paths as the operator's, not input", () => {
    expect(sink('import os\ndef f():\n    sink("make " + os.environ["TARGET"])').constant).toBe(true);
    expect(
      sink('import os\ndef f():\n    cc = os.environ.get("CC") or os.getenv("CXX")\n    sink(cc)').constant,
    ).toBe(true);
    expect(
      sink('import tempfile\ndef f():\n    fd, path = tempfile.mkstemp()\n    sink(path)').constant,
    ).toBe(true);
  });

  it('follows a helper of the same file one level, constant only on constant arguments', () => {
    const helper = 'def quote(s):\n    return s.replace("/", "_") if s else "none"\n';
    expect(sink(`${helper}def f():\n    sink(quote("a/b"))`).constant).toBe(true);
    expect(sink(`${helper}def f(name):\n    sink(quote(name))`).constant).toBe(false);
    expect(
      sink('def reads_global():\n    return settings\ndef f():\n    sink(reads_global())').constant,
    ).toBe(false);
    expect(sink('def f():\n    sink(undefined_helper("x"))').constant).toBe(false);
  });

  it('counts what is put into a container as part of it', () => {
    expect(
      sink('def f():\n    parts = ["ls"]\n    parts.append("-la")\n    sink(" ".join(parts))').constant,
    ).toBe(true);
    expect(
      sink('def f(tokens):\n    ids = []\n    ids.append(next(tokens))\n    sink(".".join(ids[::-1]))')
        .constant,
    ).toBe(false);
    expect(sink('def f(v):\n    opts = {}\n    opts["k"] = v\n    sink(opts)').constant).toBe(false);
    expect(sink('def f(v):\n    opts = {"a": "b"}\n    opts.update(v)\n    sink(opts["a"])').constant).toBe(
      false,
    );
  });

  it('follows loops over constant lists only', () => {
    expect(sink('def f(c):\n    for t in ("users", "jobs"):\n        sink(f"DELETE FROM {t}")')).toEqual({
      constant: true,
      text: 'DELETE FROM users',
    });
    expect(sink('def f(names):\n    for n in names:\n        sink("rm " + n)').constant).toBe(false);
  });

  it('falls back to enclosing functions and the module, then to ALL_CAPS names', () => {
    expect(sink('BASE = "SELECT * FROM t"\ndef f():\n    sink(BASE + " LIMIT 1")')).toEqual({
      constant: true,
      text: 'SELECT * FROM t LIMIT 1',
    });
    expect(sink('def outer(x):\n    q = "SELECT " + x\n    def inner():\n        sink(q)').constant).toBe(
      false,
    );
    expect(sink('from .queries import USERS_SQL\ndef f():\n    sink(USERS_SQL)').constant).toBe(true);
    expect(sink('from .queries import users_sql\ndef f():\n    sink(users_sql)').constant).toBe(false);
    expect(sink('query = "SELECT 1"\ndef f(query):\n    sink(query)').constant).toBe(false);
  });

  it('does not let a module-level name leak from another function', () => {
    const [inFunction] = sinks(
      ['def build(x):', '    cmd = "ls " + x', '    return cmd', 'def run():', '    sink(cmd)'].join('\n'),
    );
    // `cmd` in run() is unbound there and at module level: an unknown lowercase name is dynamic,
    // and it is never resolved to build()'s assignment.
    expect(inFunction).toEqual({ constant: false, text: D });
  });

  it('gives comprehension variables the shape of their iterable', () => {
    expect(sink('def f():\n    sink([f"{c}" for c in ["a", "b"]])').constant).toBe(true);
    expect(sink('def f(rows):\n    sink([f"{c}" for c in rows])').constant).toBe(false);
    expect(sink('c = "x"\ndef f(rows):\n    sink([c for c in rows])').constant).toBe(false);
  });

  it('honours global declarations', () => {
    expect(sink('CMD = "ls"\ndef f():\n    global CMD\n    sink(CMD)').constant).toBe(true);
  });
});

describe('python flow: members, calls and sanitizers', () => {
  it('reads ALL_CAPS members and interpreter facts as constants, other members as dynamic', () => {
    expect(sink('def f(self):\n    sink(self.QUERY)').constant).toBe(true);
    expect(sink('def f(settings):\n    sink(settings.API_URL + "/jobs")').constant).toBe(true);
    expect(sink('import sys\ndef f():\n    sink(sys.executable)').constant).toBe(true);
    expect(sink('def f(self):\n    sink(self.query)').constant).toBe(false);
    expect(sink('def f(request):\n    sink(request.args["url"])').constant).toBe(false);
    // Django spells its request fields like constants.
    expect(sink('def f(request):\n    sink(request.GET["q"])').constant).toBe(false);
    expect(sink('def f(request):\n    sink(request.POST.get("q"))').constant).toBe(false);
  });

  it('reads a value picked from a constant table as constant', () => {
    expect(sink('COMMANDS = {"a": "ls"}\ndef f(k):\n    sink(COMMANDS[k])').constant).toBe(true);
    expect(sink('SORTS = {"new": "id"}\ndef f(k):\n    sink(SORTS.get(k, "id"))').constant).toBe(true);
    expect(sink('SORTS = {"new": "id"}\ndef f(k, d):\n    sink(SORTS.get(k, d))').constant).toBe(false);
    expect(sink('def f(argv):\n    sink(argv[1])').constant).toBe(false);
    expect(sink('def f(request):\n    sink(request.args.get("u"))').constant).toBe(false);
  });

  it('treats calls as dynamic unless they only reshape constants', () => {
    expect(sink('def f(r):\n    sink(r.get("q"))').constant).toBe(false);
    expect(
      sink('import os\ndef f():\n    sink(os.path.join(os.path.dirname(__file__), "data.json"))'),
    ).toEqual({
      constant: true,
      text: '__file__/data.json',
    });
    expect(sink('def f(name):\n    sink(os.path.join("/srv", name))')).toEqual({
      constant: false,
      text: `/srv/${D}`,
    });
    expect(sink('sink(Path("/srv") / "x")').constant).toBe(true);
    expect(sink('sink(textwrap.dedent("""\n  SELECT 1\n"""))').constant).toBe(true);
    expect(sink('def f(x):\n    sink("SELECT " + str(x))').constant).toBe(false);
    expect(sink('def f(x):\n    sink("SELECT 1".strip())').constant).toBe(true);
  });

  it('treats the fixes the rules recommend as constant', () => {
    expect(sink('def f(uid):\n    sink(f"SELECT * FROM t WHERE id = {int(uid)}")').constant).toBe(true);
    expect(sink('def f(host):\n    sink("ping -c 1 " + shlex.quote(host))').constant).toBe(true);
    expect(sink('def f(name):\n    sink(f"<b>{escape(name)}</b>")').constant).toBe(true);
    expect(sink('def f(name):\n    sink(os.path.join(ROOT, secure_filename(name)))').constant).toBe(true);
    expect(sink('def f(col):\n    sink(sql.SQL("SELECT {} FROM t").format(sql.Identifier(col)))')).toEqual({
      constant: true,
      text: 'SELECT  FROM t',
    });
    expect(sink('def f(col):\n    sink(sql.SQL(f"SELECT {col} FROM t"))').constant).toBe(false);
  });

  it('is constant for a conditional only when both branches are', () => {
    expect(sink('def f(a):\n    sink("x" if a else "y")').constant).toBe(true);
    expect(sink('def f(a, b):\n    sink("x" if a else b)').constant).toBe(false);
    expect(sink('def f(a):\n    sink((a or "default"))').constant).toBe(false);
  });

  it('gives up on very long chains of names and reads each name once', () => {
    const lines = ['def f(x):', '    v0 = "a"'];
    for (let i = 1; i < 40; i++) lines.push(`    v${i} = v${i - 1} + "a"`);
    lines.push('    sink(v39)');
    expect(sink(lines.join('\n')).constant).toBe(false);
    const doubling = ['def f():', '    v0 = "a"'];
    for (let i = 1; i < 19; i++) doubling.push(`    v${i} = v${i - 1} + v${i - 1}`);
    doubling.push('    sink(v18)');
    expect(sink(doubling.join('\n')).constant).toBe(true);
    const longConcatenation = Array.from({ length: 40 }, (_, i) => `"c${i} "`).join(' + ');
    expect(sink(`sink("SELECT " + ${longConcatenation})`).constant).toBe(true);
  });
});

describe('python security rules on the flow adapter', () => {
  const signal = new AbortController().signal;
  const review = async (path: string, code: string) => {
    const security = await catalogSkill('security');
    if (!security) throw new Error('no security skill');
    const result = await runBuiltinSkill(security, [{ diff: snippetDiffFile(path, code), content: code }], {
      reviewerId: 'security',
      signal,
    });
    return result.findings.map((f) => [f.rule, f.line, f.severity]);
  };

  it('judges a variable named query by its own function', async () => {
    const code = [
      'def count(cursor):',
      '    query = "SELECT count(*) FROM users"',
      '    cursor.execute(query)',
      '',
      'def find(cursor, name):',
      '    query = "SELECT * FROM users WHERE name = \'%s\'" % name',
      '    cursor.execute(query)',
      '',
    ].join('\n');
    expect(await review('app/db/users.py', code)).toEqual([['security/sql-injection', 7, 'P0']]);
  });

  it('rates injection and deserialization of outside data P0, file and web sinks P1', async () => {
    const code = [
      'import os, pickle',
      'from flask import request',
      '',
      '@app.route("/f")',
      'def handler(cache):',
      '    os.system("ls " + request.args["dir"])',
      '    state = pickle.loads(cache.get("k"))',
      '    with open(request.args["p"], "rb") as fh:',
      '        model = pickle.load(fh)',
      '    return open(os.path.join("/srv", request.args["f"])).read()',
      '',
    ].join('\n');
    expect(await review('app/views/files.py', code)).toEqual([
      ['security/command-injection', 6, 'P0'],
      ['security/unsafe-deserialization', 7, 'P0'],
      ['security/path-traversal', 8, 'P1'],
      ['security/unsafe-deserialization', 9, 'P1'],
      ['security/path-traversal', 10, 'P1'],
    ]);
  });
});

describe('flow.guards: a changed condition in front of an unchanged SQL sink', () => {
  const signal = new AbortController().signal;
  const head = [
    'def order_by(self, ordering):', // 1
    '    for field in ordering:', // 2
    '        if "." in field:', // 3
    '            table, col = field.split(".", 1)', // 4
    '            yield RawSQL("%s.%s" % (table, col), [])', // 5
    '',
  ].join('\n');
  /** The sql-injection lines reported when only `changed` lines changed, against `base` when given. */
  const review = async (changed: number[], base?: string) => {
    const security = await catalogSkill('security');
    if (!security) throw new Error('no security skill');
    const lines = changed.map((l) => ({ start: l, end: l }));
    const file = { diff: snippetDiffFile('app/compiler.py', head, lines), content: head };
    const result = await runBuiltinSkill(security, [file], {
      reviewerId: 'security',
      signal,
      ...(base === undefined ? {} : { readBase: async () => new Map([['app/compiler.py', base]]) }),
    });
    return result.findings.filter((f) => f.rule === 'security/sql-injection').map((f) => f.line);
  };

  it('reports the condition when only it changed, and the sink once when both did', async () => {
    expect(await review([3])).toEqual([3]);
    expect(await review([3, 4, 5])).toEqual([5]);
    expect(await review([4])).toEqual([]);
  });

  it('keeps a condition the base had (re-indented) old, and reports one the change loosened', async () => {
    const reindented = head.replace('        if "." in field:', '        if  "."  in field:');
    expect(await review([3], reindented)).toEqual([]);
    const checked = head.replace('if "." in field:', 'if "." in field and field in self.extra_order_by:');
    expect(await review([3], checked)).toEqual([3]);
  });
});
