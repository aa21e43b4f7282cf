/** Go data flow: what reaches `sink(...)` in a snippet, constant or not, and its known text. */
import { parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { goFlow } from '../../../src/reviewers/builtin/flow/go';
import { DYNAMIC, resolutionWork } from '../../../src/reviewers/builtin/flow/types';
import { napiLanguage } from '../../../src/reviewers/builtin/languages';
import { skillFromFiles } from '../../../src/skills/catalog';

/** The shape of the argument of the `nth` call `sink(x)` (0-based) in `code`. */
function sinkShape(code: string, nth = 0) {
  const root = parse(napiLanguage('go'), code).root();
  const calls = root.findAll({ rule: { pattern: 'sink($X)' } });
  const value = calls[nth]?.getMatch('X');
  if (!value) throw new Error(`no sink #${nth} in snippet`);
  return goFlow.shapeOf(value);
}

const inFunc = (body: string, params = '') => `package p\n\nfunc f(${params}) {\n${body}\n}\n`;

describe('go flow: literals and expressions', () => {
  it('reads string, raw string and number literals as constants, without quotes', () => {
    expect(sinkShape(inFunc('sink("SELECT 1\\n")'))).toEqual({ constant: true, text: 'SELECT 1\n' });
    expect(sinkShape(inFunc('sink(`SELECT\n  2`)'))).toEqual({ constant: true, text: 'SELECT\n  2' });
    expect(sinkShape(inFunc('sink(42)'))).toEqual({ constant: true, text: '42' });
    expect(sinkShape(inFunc('sink(nil)')).constant).toBe(true);
  });

  it('joins + and marks the parts the code does not fix', () => {
    expect(sinkShape(inFunc('sink("SELECT * FROM t WHERE id = " + id)', 'id string'))).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE id = ${DYNAMIC}`,
    });
    expect(sinkShape(inFunc('sink("a" + ("b" + "c"))'))).toEqual({ constant: true, text: 'abc' });
  });

  it('substitutes fmt.Sprintf verbs with their arguments, numbers as digits', () => {
    expect(
      sinkShape(inFunc(`sink(fmt.Sprintf("DELETE FROM %s WHERE id = '%v'", "jobs", id))`, 'id string')),
    ).toEqual({
      constant: false,
      text: `DELETE FROM jobs WHERE id = '${DYNAMIC}'`,
    });
    expect(
      sinkShape(
        inFunc('sink(fmt.Sprintf("SELECT * FROM t LIMIT %d OFFSET %d", limit, offset))', 'limit, offset int'),
      ),
    ).toEqual({ constant: true, text: 'SELECT * FROM t LIMIT 0 OFFSET 0' });
    expect(sinkShape(inFunc('sink(fmt.Sprintf("%[2]s-%[1]s %%", "a", "b"))'))).toEqual({
      constant: true,
      text: 'b-a %',
    });
    expect(sinkShape(inFunc('sink(fmt.Sprintf(format, "a"))', 'format string')).constant).toBe(false);
    expect(sinkShape(inFunc('sink(fmt.Sprintf("%s", parts...))', 'parts ...any')).constant).toBe(false);
  });

  it('joins strings.Join of a literal slice and reads pure strings helpers over constants', () => {
    expect(sinkShape(inFunc('sink(strings.Join([]string{"id", "name"}, ", "))'))).toEqual({
      constant: true,
      text: 'id, name',
    });
    expect(sinkShape(inFunc('sink(strings.Join([]string{"id", col}, ", "))', 'col string')).constant).toBe(
      false,
    );
    expect(sinkShape(inFunc('sink(strings.ToLower("SELECT"))'))).toEqual({ constant: true, text: 'select' });
    expect(sinkShape(inFunc('sink(strings.TrimSpace(s))', 's string')).constant).toBe(false);
    expect(
      sinkShape(
        inFunc('sink("IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")")', 'ids []int'),
      ),
    ).toEqual({ constant: true, text: 'IN (?,)' });
  });

  it('counts numbers printed as text as constant, other calls as dynamic', () => {
    expect(sinkShape(inFunc('sink("LIMIT " + strconv.Itoa(n))', 'n int')).constant).toBe(true);
    expect(sinkShape(inFunc('sink(r.FormValue("q"))', 'r *http.Request')).constant).toBe(false);
    expect(sinkShape(inFunc('sink(os.Getenv("QUERY"))')).constant).toBe(false);
  });

  it('sees through conversions, assertions and parentheses', () => {
    expect(sinkShape(inFunc('sink([]byte("k"))'))).toEqual({ constant: true, text: 'k' });
    expect(sinkShape(inFunc('sink(string(b))', 'b []byte')).constant).toBe(false);
    expect(sinkShape(inFunc('sink(("x"))'))).toEqual({ constant: true, text: 'x' });
    expect(sinkShape(inFunc('sink(v.(string))', 'v any')).constant).toBe(false);
  });

  it('reads X.ALL_CAPS as a constant and other selectors as dynamic', () => {
    expect(sinkShape(inFunc('sink(queries.GET_USER)')).constant).toBe(true);
    expect(sinkShape(inFunc('sink(req.Name)', 'req Req')).constant).toBe(false);
  });
});

describe('go flow: names', () => {
  it('resolves a local to every assignment in its function, += parts appended', () => {
    const code = inFunc(
      [
        '\tq := "SELECT * FROM users WHERE 1=1"',
        '\tif name != "" {',
        '\t\tq += " AND name = ?"',
        '\t}',
        '\tsink(q)',
      ].join('\n'),
      'name string',
    );
    expect(sinkShape(code)).toEqual({ constant: true, text: 'SELECT * FROM users WHERE 1=1 AND name = ?' });
  });

  it('makes a local dynamic when any assignment is', () => {
    const code = inFunc(
      [
        '\tq := "SELECT * FROM t"',
        '\tif sort != "" {',
        '\t\tq += " ORDER BY " + sort',
        '\t}',
        '\tsink(q)',
      ].join('\n'),
      'sort string',
    );
    expect(sinkShape(code)).toEqual({ constant: false, text: `SELECT * FROM t ORDER BY ${DYNAMIC}` });
  });

  it('treats parameters, receivers and multi-value results as dynamic', () => {
    expect(sinkShape(inFunc('sink(q)', 'q string')).constant).toBe(false);
    expect(sinkShape('package p\nfunc (s *S) f() { sink(s) }\n').constant).toBe(false);
    expect(sinkShape(inFunc('\tq, err := build()\n\t_ = err\n\tsink(q)')).constant).toBe(false);
    expect(sinkShape(inFunc('\tfor _, q := range qs {\n\t\tsink(q)\n\t}', 'qs []string')).constant).toBe(
      false,
    );
    expect(sinkShape(inFunc('\tfor _, c := range []string{"a", "b"} {\n\t\tsink(c)\n\t}')).constant).toBe(
      true,
    );
  });

  it('does not take a name inside a function type for a parameter', () => {
    const code = inFunc('\tq := "SELECT 1"\n\tsink(q)', 'cb func(q string) error');
    expect(sinkShape(code)).toEqual({ constant: true, text: 'SELECT 1' });
  });

  it('reads the elements of an argument vector', () => {
    const root = parse(
      napiLanguage('go'),
      inFunc('\targv := []string{"sh", "-c", script}\n\t_ = argv', 'script string'),
    ).root();
    const [shell, flag, script] = root.findAll({ rule: { kind: 'literal_element' } });
    expect(shell && goFlow.shapeOf(shell)).toEqual({ constant: true, text: 'sh' });
    expect(flag && goFlow.shapeOf(flag)).toEqual({ constant: true, text: '-c' });
    expect(script && goFlow.shapeOf(script).constant).toBe(false);
  });

  it('treats a variable whose address is taken as dynamic', () => {
    expect(sinkShape(inFunc('\tvar q string\n\trow.Scan(&q)\n\tsink(q)', 'row *sql.Row')).constant).toBe(
      false,
    );
    expect(sinkShape(inFunc('\tvar q string\n\tq = "SELECT 1"\n\tsink(q)'))).toEqual({
      constant: true,
      text: 'SELECT 1',
    });
  });

  it('keeps two functions with the same variable name apart', () => {
    const code = [
      'package p',
      'func safe(db *sql.DB) {',
      '\tquery := "SELECT id FROM users"',
      '\tsink(query)',
      '}',
      'func unsafe(db *sql.DB, name string) {',
      '\tquery := "SELECT id FROM users WHERE name = \'" + name + "\'"',
      '\tsink(query)',
      '}',
    ].join('\n');
    expect(sinkShape(code, 0).constant).toBe(true);
    expect(sinkShape(code, 1).constant).toBe(false);
  });

  it('reads a closure variable from its enclosing function, not a nested redeclaration', () => {
    const code = [
      'package p',
      'func f(db *sql.DB, id string) {',
      '\tq := "SELECT 1"',
      '\tother := func(id string) { q := "SELECT " + id; use(q) }',
      '\tgo func() { sink(q) }()',
      '\t_ = other',
      '}',
    ].join('\n');
    expect(sinkShape(code)).toEqual({ constant: true, text: 'SELECT 1' });
    const assigned = 'package p\nfunc f(x string) {\n\tq := "a"\n\tfunc() { q = x }()\n\tsink(q)\n}\n';
    expect(sinkShape(assigned).constant).toBe(false);
  });

  it('falls back to the file: top-level const and var, then ALL_CAPS', () => {
    const code = [
      'package p',
      'const listUsers = "SELECT id FROM users"',
      'const (',
      '\tA = iota',
      '\tB',
      ')',
      'var table = "users"',
      'var dsn string',
      'func init() { flag.StringVar(&dsn, "dsn", "", "") }',
      'func f() {',
      '\tsink(listUsers)',
      '\tsink("SELECT * FROM " + table)',
      '\tsink(B)',
      '\tsink(dsn)',
      '\tsink(DEFAULT_QUERY)',
      '\tsink(otherFileQuery)',
      '}',
    ].join('\n');
    expect(sinkShape(code, 0)).toEqual({ constant: true, text: 'SELECT id FROM users' });
    expect(sinkShape(code, 1)).toEqual({ constant: true, text: 'SELECT * FROM users' });
    expect(sinkShape(code, 2).constant).toBe(true);
    expect(sinkShape(code, 3).constant).toBe(false);
    expect(sinkShape(code, 4).constant).toBe(true);
    expect(sinkShape(code, 5).constant).toBe(false);
  });

  it('is dynamic when a package variable is assigned from data in some function', () => {
    const code = 'package p\nvar cmd = "ls"\nfunc set(x string) { cmd = x }\nfunc run() { sink(cmd) }\n';
    expect(sinkShape(code).constant).toBe(false);
    const shadowed =
      'package p\nvar cmd = "ls"\nfunc set(x string) { cmd := x; use(cmd) }\nfunc run() { sink(cmd) }\n';
    expect(sinkShape(shadowed)).toEqual({ constant: true, text: 'ls' });
  });

  it('survives self-reference and deep chains', () => {
    expect(sinkShape(inFunc('\tq := "SELECT a"\n\tq = q + " FROM t"\n\tsink(q)')).constant).toBe(true);
    expect(sinkShape(inFunc('\tq := "SELECT a"\n\tq = q + x\n\tsink(q)', 'x string')).constant).toBe(false);
    const chain = [
      '\tv0 := "x"',
      ...Array.from({ length: 30 }, (_, i) => `\tv${i + 1} := v${i}`),
      '\tsink(v30)',
    ];
    expect(sinkShape(inFunc(chain.join('\n'))).constant).toBe(false);
  });
});

describe('go flow: builders', () => {
  it('joins what is written to a strings.Builder', () => {
    const code = inFunc(
      [
        '\tvar sb strings.Builder',
        '\tsb.WriteString("SELECT id FROM users")',
        '\tfmt.Fprintf(&sb, " LIMIT %d", n)',
        '\tsink(sb.String())',
      ].join('\n'),
      'n int',
    );
    expect(sinkShape(code)).toEqual({ constant: true, text: 'SELECT id FROM users LIMIT 0' });
  });

  it('is dynamic when data is written or the builder is handed elsewhere', () => {
    const written = inFunc(
      [
        '\tb := &strings.Builder{}',
        '\tb.WriteString("SELECT * FROM t WHERE a = ")',
        '\tb.WriteString(a)',
        '\tsink(b.String())',
      ].join('\n'),
      'a string',
    );
    expect(sinkShape(written)).toEqual({ constant: false, text: `SELECT * FROM t WHERE a = ${DYNAMIC}` });
    const handed = inFunc(
      ['\tvar buf bytes.Buffer', '\ttmpl.Execute(&buf, data)', '\tsink(buf.String())'].join('\n'),
      'data any',
    );
    expect(sinkShape(handed).constant).toBe(false);
  });
});

describe('go flow: variables bound by a lookup (flow.unless_bound_by)', () => {
  const LOOKUPS = new Set(['exec.LookPath', 'os.Executable', 'os.Getenv', 'os.LookupEnv']);
  /** Whether the argument of the `nth` `sink(x)` in `code` is bound by one of LOOKUPS. */
  function bound(code: string, nth = 0, parse_: object | undefined = undefined) {
    const root = parse(napiLanguage('go'), code).root();
    const value = root.findAll({ rule: { pattern: 'sink($X)' } })[nth]?.getMatch('X');
    if (!value) throw new Error(`no sink #${nth} in snippet`);
    return goFlow.boundBy?.(value, LOOKUPS, parse_);
  }

  it('finds a lookup bound anywhere in the declaring function, whatever else is assigned', () => {
    expect(bound(inFunc('\tgit, err := exec.LookPath("git")\n\t_ = err\n\tsink(git)'))).toBe(true);
    expect(
      bound(
        inFunc('\tvar git string\n\tif ok {\n\t\tgit, _ = exec.LookPath("git")\n\t}\n\tsink(git)', 'ok bool'),
      ),
    ).toBe(true);
    expect(
      bound(
        inFunc(
          '\teditor := os.Getenv("EDITOR")\n\tif editor == "" {\n\t\teditor = r.Form.Get("e")\n\t}\n\tsink(editor)',
        ),
      ),
    ).toBe(true);
    expect(
      bound(inFunc('\tshell, ok := os.LookupEnv("SHELL")\n\t_ = ok\n\tgo func() { sink(shell) }()')),
    ).toBe(true);
    expect(bound('package p\n\nvar self, _ = os.Executable()\n\nfunc f() {\n\tsink(self)\n}\n')).toBe(true);
  });

  it('does not count other calls, other names, a closure of its own or a value that is not a name', () => {
    expect(bound(inFunc('\ttool := r.FormValue("tool")\n\tsink(tool)'))).toBe(false);
    expect(
      bound(inFunc('\tgit, _ := exec.LookPath("git")\n\ttool := git + x\n\tsink(tool)', 'x string')),
    ).toBe(false);
    expect(
      bound(
        inFunc(
          '\tgo func() {\n\t\tgit, _ := exec.LookPath("git")\n\t\t_ = git\n\t}()\n\tgit := r.FormValue("x")\n\tsink(git)',
        ),
      ),
    ).toBe(false);
    // `err` is the second result, not the found path; `+=` appends to it.
    expect(bound(inFunc('\t_, err := exec.LookPath("git")\n\tsink(err)'))).toBe(false);
    expect(bound(inFunc('\tp := "x"\n\tp += os.Getenv("P")\n\tsink(p)'))).toBe(false);
    expect(bound(inFunc('\tsink(parts[0])', 'parts []string'))).toBe(false);
  });

  it('does work per question that does not grow with the sinks of a function', () => {
    const visits = (n: number) => {
      const lines = ['\tprog := parts[0]', '\tgit, _ := exec.LookPath("git")'];
      for (let i = 0; i < n; i++) lines.push(`\tsink(prog)\n\tsink(git)\n\tprog = parts[${i % 3}]`);
      const code = inFunc(lines.join('\n'), 'parts []string');
      const root = parse(napiLanguage('go'), code).root();
      const values = root.findAll({ rule: { pattern: 'sink($X)' } }).map((c) => c.getMatch('X'));
      const memo = {};
      const before = resolutionWork.visits;
      const answers = values.map((v) => (v ? goFlow.boundBy?.(v, LOOKUPS, memo) : undefined));
      expect(answers.filter((a) => a === true)).toHaveLength(n);
      expect(answers.filter((a) => a === false)).toHaveLength(n);
      return resolutionWork.visits - before;
    };
    const small = visits(200);
    const large = visits(400);
    expect(small).toBeGreaterThan(200);
    // Searching the function from each sink would be 4x; answering from the index is 2x.
    expect(large).toBeLessThanOrEqual(2.2 * small);
  });
});

describe('the flow.unless_bound_by key of a rule file', () => {
  const manifest =
    '---\nid: house\ntitle: House\ndescription: House rules.\nlanguages: [go, python]\n---\nHouse rules.\n';
  const rule = (language: string, boundBy: string) =>
    [
      'id: chosen-program',
      `language: ${language}`,
      'severity: P0',
      'message: program',
      'note: Choose the program from a fixed set.',
      `flow: { value: PROG, unless_bound_by: ${boundBy} }`,
      'rule: { pattern: exec.Command($PROG) }',
    ].join('\n');
  const house = (language: string, boundBy: string) =>
    skillFromFiles('house', { 'SKILL.md': manifest, 'rules/chosen-program.yml': rule(language, boundBy) });

  it('is read into the rule', async () => {
    const skill = await house('go', '[exec.LookPath, os.Getenv]');
    expect(skill.rules[0]?.flow).toEqual({ value: 'PROG', unlessBoundBy: ['exec.LookPath', 'os.Getenv'] });
  });

  it('names calls, and only on Go rules (no other adapter reads it)', async () => {
    await expect(house('go', '[]')).rejects.toThrow(/flow.unless_bound_by must list calls/);
    await expect(house('go', "['exec.LookPath()']")).rejects.toThrow(/flow.unless_bound_by must list calls/);
    await expect(house('python', '[os.getenv]')).rejects.toThrow(/language must be go/);
  });
});
