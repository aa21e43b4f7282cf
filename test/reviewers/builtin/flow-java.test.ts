/** Java data flow: what reaches `sink(...)` in a snippet, constant or not, and its known text. */
import { parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { ELEMENT_SEPARATOR, javaFlow } from '../../../src/reviewers/builtin/flow/java';
import { DYNAMIC } from '../../../src/reviewers/builtin/flow/types';
import { napiLanguage } from '../../../src/reviewers/builtin/languages';

/** The shape of the argument of the `nth` call `sink(x)` (0-based) in `code`. */
function sinkShape(code: string, nth = 0) {
  const root = parse(napiLanguage('java'), code).root();
  const calls = root.findAll({ rule: { pattern: 'sink($X)' } });
  const value = calls[nth]?.getMatch('X');
  if (!value) throw new Error(`no sink #${nth} in snippet`);
  return javaFlow.shapeOf(value);
}

/** The shape of the arguments of `new ProcessBuilder(...)`, read as one argument vector. */
function argumentsShape(code: string) {
  const root = parse(napiLanguage('java'), code).root();
  const args = root.find({
    rule: { kind: 'object_creation_expression', has: { field: 'arguments', pattern: '$A' } },
  });
  const value = args?.getMatch('A');
  if (!value) throw new Error('no object creation in snippet');
  return javaFlow.shapeOf(value);
}

const inMethod = (body: string, params = '') => `class C {\n  void m(${params}) {\n${body}\n  }\n}\n`;
const vector = (...parts: string[]) => parts.join(ELEMENT_SEPARATOR);

describe('java flow: literals and expressions', () => {
  it('reads string, text block, char, number, boolean and null literals as constants, without quotes', () => {
    expect(sinkShape(inMethod('sink("SELECT 1\\n\\"x\\"");'))).toEqual({
      constant: true,
      text: 'SELECT 1\n"x"',
    });
    expect(sinkShape(inMethod('sink("""\n    SELECT *\n    FROM t""");'))).toEqual({
      constant: true,
      text: '    SELECT *\n    FROM t',
    });
    expect(sinkShape(inMethod("sink('a');"))).toEqual({ constant: true, text: 'a' });
    expect(sinkShape(inMethod('sink(0x1F);'))).toEqual({ constant: true, text: '0x1F' });
    expect(sinkShape(inMethod('sink(true);')).constant).toBe(true);
    expect(sinkShape(inMethod('sink(null);')).constant).toBe(true);
  });

  it('joins + and marks the parts the code does not fix', () => {
    expect(sinkShape(inMethod('sink("SELECT * FROM t WHERE id = \'" + id + "\'");', 'String id'))).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE id = '${DYNAMIC}'`,
    });
    expect(sinkShape(inMethod('sink("a" + ("b" + \'c\'));'))).toEqual({ constant: true, text: 'abc' });
  });

  it('reads values of numeric and boolean types as constant digits', () => {
    const params = 'int limit, Long id, String s, boolean flag';
    expect(sinkShape(inMethod('sink("LIMIT " + limit + " WHERE id = " + id + flag);', params))).toEqual({
      constant: true,
      text: 'LIMIT 0 WHERE id = 00',
    });
    expect(
      sinkShape(inMethod('sink("n=" + Integer.parseInt(s) + s.length() + (limit * 2));', params)).constant,
    ).toBe(true);
    expect(sinkShape(inMethod('sink("n=" + args.length);', 'String[] args')).constant).toBe(true);
    expect(sinkShape(inMethod('sink("c=" + c);', 'char c')).constant).toBe(false);
  });

  it('substitutes String.format and formatted specifiers, numbers as digits', () => {
    expect(
      sinkShape(
        inMethod('sink(String.format("DELETE FROM %s WHERE id = \'%s\'", "jobs", id));', 'String id'),
      ),
    ).toEqual({
      constant: false,
      text: `DELETE FROM jobs WHERE id = '${DYNAMIC}'`,
    });
    expect(
      sinkShape(inMethod('sink(String.format(Locale.ROOT, "SELECT * FROM t LIMIT %d", n));', 'String n')),
    ).toEqual({
      constant: true,
      text: 'SELECT * FROM t LIMIT 0',
    });
    expect(sinkShape(inMethod('sink(String.format("%2$s-%1$s %%", "a", "b"));'))).toEqual({
      constant: true,
      text: 'b-a %',
    });
    expect(sinkShape(inMethod('sink("%s.%s".formatted("a", x));', 'String x'))).toEqual({
      constant: false,
      text: `a.${DYNAMIC}`,
    });
    expect(sinkShape(inMethod('sink(String.format(fmt, "a"));', 'String fmt')).constant).toBe(false);
  });

  it('reads concat, String.join, nCopies and string helpers over constants', () => {
    expect(sinkShape(inMethod('sink("SELECT ".concat(col));', 'String col'))).toEqual({
      constant: false,
      text: `SELECT ${DYNAMIC}`,
    });
    expect(sinkShape(inMethod('sink(String.join(", ", "id", "name"));'))).toEqual({
      constant: true,
      text: 'id, name',
    });
    expect(sinkShape(inMethod('sink(String.join(", ", List.of("id", col)));', 'String col')).constant).toBe(
      false,
    );
    expect(
      sinkShape(
        inMethod(
          'sink("IN (" + String.join(",", Collections.nCopies(ids.size(), "?")) + ")");',
          'List<Long> ids',
        ),
      ),
    ).toEqual({ constant: true, text: 'IN (?)' });
    expect(sinkShape(inMethod('sink("SELECT".toLowerCase().trim());'))).toEqual({
      constant: true,
      text: 'SELECT',
    });
    expect(sinkShape(inMethod('sink(String.valueOf(x));', 'Object x')).constant).toBe(false);
  });

  it('sees through casts, parentheses and constant ternaries', () => {
    expect(sinkShape(inMethod('sink((String) ("x"));'))).toEqual({ constant: true, text: 'x' });
    expect(sinkShape(inMethod('sink(asc ? "ASC" : "DESC");', 'boolean asc'))).toEqual({
      constant: true,
      text: 'ASC',
    });
    // The text of the branch the code does not fix, so a rule sees where data enters.
    expect(sinkShape(inMethod('sink(asc ? "ASC" : dir);', 'boolean asc, String dir'))).toEqual({
      constant: false,
      text: DYNAMIC,
    });
  });

  it('reads X.ALL_CAPS as a constant, other member accesses and calls as dynamic', () => {
    expect(sinkShape(inMethod('sink(Queries.FIND_ALL);'))).toEqual({ constant: true, text: 'FIND_ALL' });
    expect(sinkShape(inMethod('sink(form.name);', 'Form form')).constant).toBe(false);
    expect(sinkShape(inMethod('sink(req.getParameter("q"));', 'HttpServletRequest req')).constant).toBe(
      false,
    );
    expect(sinkShape(inMethod('sink(System.getenv("QUERY"));')).constant).toBe(false);
  });
});

describe('java flow: names', () => {
  it('resolves a local to every assignment in its method, += parts appended', () => {
    const body = [
      '    String q = "SELECT * FROM users WHERE 1=1";',
      '    if (name != null) {',
      '      q += " AND name = ?";',
      '    }',
      '    sink(q);',
    ];
    expect(sinkShape(inMethod(body.join('\n'), 'String name'))).toEqual({
      constant: true,
      text: 'SELECT * FROM users WHERE 1=1 AND name = ?',
    });
  });

  it('makes a local dynamic when any assignment is', () => {
    const body = [
      '    String q = "SELECT * FROM t";',
      '    if (sort != null) q += " ORDER BY " + sort;',
      '    sink(q);',
    ];
    expect(sinkShape(inMethod(body.join('\n'), 'String sort'))).toEqual({
      constant: false,
      text: `SELECT * FROM t ORDER BY ${DYNAMIC}`,
    });
    const assignedLater = ['    String q;', '    if (admin) q = "SELECT 1"; else q = other;', '    sink(q);'];
    expect(sinkShape(inMethod(assignedLater.join('\n'), 'boolean admin, String other')).constant).toBe(false);
    const siblingBlocks = [
      '    if (a) { String q = "SELECT 1"; run(q); }',
      '    else { String q = "SELECT " + col; sink(q); }',
    ];
    expect(sinkShape(inMethod(siblingBlocks.join('\n'), 'boolean a, String col')).constant).toBe(false);
  });

  it('treats parameters, lambda parameters, catch parameters and patterns as dynamic', () => {
    expect(sinkShape(inMethod('sink(q);', 'String q')).constant).toBe(false);
    expect(sinkShape(inMethod('    names.forEach(n -> sink(n));', 'List<String> names')).constant).toBe(
      false,
    );
    expect(sinkShape(inMethod('    try { run(); } catch (Exception e) { sink(e); }')).constant).toBe(false);
    expect(sinkShape(inMethod('    if (o instanceof String s) { sink(s); }', 'Object o')).constant).toBe(
      false,
    );
  });

  it('reads a for-each variable from what it iterates', () => {
    expect(sinkShape(inMethod('    for (String t : List.of("a", "b")) sink(t);')).constant).toBe(true);
    const twoLoops = ['    for (String t : List.of("a")) use(t);', '    for (String t : tables) sink(t);'];
    expect(sinkShape(inMethod(twoLoops.join('\n'), 'List<String> tables')).constant).toBe(false);
  });

  it('keeps two methods with the same variable name apart', () => {
    const code = [
      'class Dao {',
      '  void safe() {',
      '    String query = "SELECT id FROM users";',
      '    sink(query);',
      '  }',
      '  void unsafe(String name) {',
      '    String query = "SELECT id FROM users WHERE name = \'" + name + "\'";',
      '    sink(query);',
      '  }',
      '}',
    ].join('\n');
    expect(sinkShape(code, 0).constant).toBe(true);
    expect(sinkShape(code, 1).constant).toBe(false);
  });

  it('reads a local captured by a lambda from the enclosing method', () => {
    const body = ['    String q = "SELECT 1";', '    Runnable r = () -> sink(q);'];
    expect(sinkShape(inMethod(body.join('\n')))).toEqual({ constant: true, text: 'SELECT 1' });
  });

  it('survives self-reference and deep chains', () => {
    expect(
      sinkShape(inMethod('    String q = "SELECT a";\n    q = q + " FROM t";\n    sink(q);')).constant,
    ).toBe(true);
    expect(
      sinkShape(inMethod('    String q = "SELECT a";\n    q = q + x;\n    sink(q);', 'String x')).constant,
    ).toBe(false);
    const chain = [
      '    String v0 = "x";',
      ...Array.from({ length: 30 }, (_, i) => `    String v${i + 1} = v${i};`),
      '    sink(v30);',
    ];
    expect(sinkShape(inMethod(chain.join('\n'))).constant).toBe(false);
  });
});

describe('java flow: fields', () => {
  it('reads static final fields, interface constants and enum constants as their values', () => {
    const code = [
      'interface Sql { String COLS = "id, name"; }',
      'class Dao {',
      '  private static final String TABLE = "users";',
      '  private static final String LIST = "SELECT " + Sql.COLS + " FROM " + TABLE;',
      '  private final String schema = "app";',
      '  void m() {',
      '    sink(LIST);',
      '    sink(this.schema + "." + TABLE);',
      '  }',
      '}',
    ].join('\n');
    expect(sinkShape(code, 0)).toEqual({ constant: true, text: 'SELECT COLS FROM users' });
    expect(sinkShape(code, 1)).toEqual({ constant: true, text: 'app.users' });
  });

  it('reads a private field no code reassigns as its value, any other mutable field as dynamic', () => {
    const code = [
      'class Repo {',
      '  private String table = "orders";',
      '  private String sort = "id";',
      '  protected String view = "v_orders";',
      '  @Value("#{environment[\'repo.schema\']}") private String schema;',
      '  void setSort(String s) { this.sort = s; }',
      '  void m() {',
      '    sink(table);',
      '    sink(sort);',
      '    sink(view);',
      '    sink(schema);',
      '  }',
      '}',
    ].join('\n');
    expect(sinkShape(code, 0)).toEqual({ constant: true, text: 'orders' });
    expect(sinkShape(code, 1).constant).toBe(false);
    expect(sinkShape(code, 2).constant).toBe(false);
    expect(sinkShape(code, 3).constant).toBe(false);
  });

  it('falls back to ALL_CAPS names as constants, other unknown names as dynamic', () => {
    expect(sinkShape(inMethod('sink(DEFAULT_QUERY);')).constant).toBe(true);
    expect(sinkShape(inMethod('sink(otherClassQuery);')).constant).toBe(false);
  });

  it('reads record components as dynamic', () => {
    expect(sinkShape('record Q(String sql) { void run() { sink(sql); } }').constant).toBe(false);
  });
});

describe('java flow: builders and vectors', () => {
  it('joins what is appended to a local StringBuilder, chains in order', () => {
    const body = [
      '    StringBuilder sb = new StringBuilder("SELECT * FROM t WHERE 1=1");',
      '    if (name != null) sb.append(" AND name = ?");',
      '    sb.append(" LIMIT ").append(limit);',
      '    sink(sb.toString());',
    ];
    expect(sinkShape(inMethod(body.join('\n'), 'String name, int limit'))).toEqual({
      constant: true,
      text: 'SELECT * FROM t WHERE 1=1 AND name = ? LIMIT 0',
    });
  });

  it('is dynamic when data is appended or the builder is handed to another method', () => {
    const appended = [
      '    StringBuilder sb = new StringBuilder();',
      '    sb.append("DELETE FROM t WHERE n = \'").append(n).append("\'");',
      '    sink(sb.toString());',
    ];
    expect(sinkShape(inMethod(appended.join('\n'), 'String n'))).toEqual({
      constant: false,
      text: `DELETE FROM t WHERE n = '${DYNAMIC}'`,
    });
    const handed = [
      '    StringBuilder sb = new StringBuilder("SELECT 1");',
      '    addFilters(sb, form);',
      '    sink(sb.toString());',
    ];
    expect(sinkShape(inMethod(handed.join('\n'), 'Form form')).constant).toBe(false);
    expect(
      sinkShape(inMethod('sink(new StringBuilder("a").append(x).toString());', 'String x')).constant,
    ).toBe(false);
  });

  it('joins a StringJoiner with its separator', () => {
    const body = [
      '    StringJoiner where = new StringJoiner(" AND ");',
      '    where.add("a = ?");',
      '    where.add("b = ?");',
      '    sink("WHERE " + where);',
    ];
    expect(sinkShape(inMethod(body.join('\n')))).toEqual({ constant: true, text: 'WHERE a = ? AND b = ?' });
  });

  it('keeps the elements of arrays and lists apart', () => {
    expect(sinkShape(inMethod('    String[] cmd = {"sh", "-c", c};\n    sink(cmd);', 'String c'))).toEqual({
      constant: false,
      text: vector('sh', '-c', DYNAMIC),
    });
    const added = [
      '    List<String> argv = new ArrayList<>();',
      '    argv.add("ls");',
      '    argv.add(dir);',
      '    sink(argv.toArray(new String[0]));',
    ];
    expect(sinkShape(inMethod(added.join('\n'), 'String dir'))).toEqual({
      constant: false,
      text: vector('ls', DYNAMIC),
    });
    expect(sinkShape(inMethod('sink(List.of("df", "-h"));'))).toEqual({
      constant: true,
      text: vector('df', '-h'),
    });
  });

  it('reads constructor arguments as one vector, a single list argument as that list', () => {
    expect(argumentsShape(inMethod('new ProcessBuilder("git", "clone", url);', 'String url'))).toEqual({
      constant: false,
      text: vector('git', 'clone', DYNAMIC),
    });
    expect(argumentsShape(inMethod('new ProcessBuilder(List.of("bash", "-c", "uptime"));'))).toEqual({
      constant: true,
      text: vector('bash', '-c', 'uptime'),
    });
    expect(argumentsShape(inMethod('new ProcessBuilder(command);', 'List<String> command'))).toEqual({
      constant: false,
      text: DYNAMIC,
    });
  });
});
