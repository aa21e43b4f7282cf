/**
 * JavaScript/TypeScript data flow: what reaches `sink(...)` in a snippet, constant or not, and its
 * known text. The snippets are the forms real code takes: module constants, parameters, the same
 * name in two functions, strings built with `+`, templates, `.concat()`, `+=` in loops.
 */
import { parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { javascriptFlow } from '../../../src/reviewers/builtin/flow/javascript';
import { DYNAMIC } from '../../../src/reviewers/builtin/flow/types';
import { napiLanguage } from '../../../src/reviewers/builtin/languages';
import type { RuleLanguage } from '../../../src/skills/catalog';

/** The shapes of the first argument of every `sink(...)` call in `code`, in order. */
function sinkShapes(code: string, language: RuleLanguage = 'typescript') {
  const root = parse(napiLanguage(language), code).root();
  const calls = root.findAll({
    rule: { kind: 'call_expression', has: { field: 'function', regex: '^sink$' } },
  });
  if (calls.length === 0) throw new Error('no sink in snippet');
  return calls.map((call) => {
    const arg = call.field('arguments')?.namedChildren()[0];
    if (!arg) throw new Error(`sink without an argument: ${call.text()}`);
    return javascriptFlow.shapeOf(arg);
  });
}
const sinkShape = (code: string, language: RuleLanguage = 'typescript') => {
  const [first] = sinkShapes(code, language);
  if (!first) throw new Error('no sink');
  return first;
};
const D = DYNAMIC;

describe('javascript flow: literals and string building', () => {
  it('reads literals as constants, without quotes', () => {
    expect(
      sinkShapes(`sink('SELECT 1'); sink("a\\"b"); sink(\`x\`); sink(42); sink(null); sink(true);`),
    ).toEqual([
      { constant: true, text: 'SELECT 1' },
      { constant: true, text: 'a\\"b' },
      { constant: true, text: 'x' },
      { constant: true, text: '42' },
      { constant: true, text: 'null' },
      { constant: true, text: 'true' },
    ]);
  });

  it('joins + and marks the parts the code does not fix', () => {
    expect(sinkShape(`function f(id) { sink('SELECT * FROM t WHERE id = ' + id + ' LIMIT 1'); }`)).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE id = ${D} LIMIT 1`,
    });
    expect(sinkShape(`sink('a' + ('b' + 'c'));`)).toEqual({ constant: true, text: 'abc' });
  });

  it('reads template strings part by part', () => {
    expect(
      sinkShape(`function f(name: string) { sink(\`DELETE FROM tags WHERE name = '\${name}'\`); }`),
    ).toEqual({
      constant: false,
      text: `DELETE FROM tags WHERE name = '${D}'`,
    });
    expect(sinkShape(`const TABLE = 'users';\nsink(\`SELECT * FROM \${TABLE}\`);`)).toEqual({
      constant: true,
      text: 'SELECT * FROM users',
    });
  });

  it('joins .concat() with its receiver', () => {
    expect(
      sinkShapes(`function f(x) { sink('SELECT '.concat('a', ' FROM t')); sink('rm -rf '.concat(x)); }`),
    ).toEqual([
      { constant: true, text: 'SELECT a FROM t' },
      { constant: false, text: `rm -rf ${D}` },
    ]);
  });

  it('fills util.format placeholders, and trusts pg-format %L/%I and mysql.format escaping', () => {
    expect(
      sinkShapes(`function f(id) {
      sink(util.format('SELECT * FROM t WHERE id = %s', id));
      sink(format('SELECT * FROM %I WHERE id = %L', table, id));
      sink(mysql.format('SELECT * FROM t WHERE id = ?', [id]));
    }`),
    ).toEqual([
      { constant: false, text: `SELECT * FROM t WHERE id = ${D}` },
      { constant: true, text: 'SELECT * FROM  WHERE id = ' },
      { constant: true, text: 'SELECT * FROM t WHERE id = ?' },
    ]);
  });

  it('joins the elements of an array literal, and .join() keeps their shape', () => {
    expect(
      sinkShapes(`function f(col) { sink(['a', 'b'].join(', ')); sink(['a', col].join(', ')); }`).map(
        (s) => s.constant,
      ),
    ).toEqual([true, false]);
  });

  it('joins path.join/resolve arguments with slashes', () => {
    expect(
      sinkShapes(`function f(req) {
      sink(path.join(REPORTS, \`\${Number(req.params.id)}.json\`)); sink(path.resolve(ROOT, req.params.file));
    }`),
    ).toEqual([
      { constant: true, text: 'REPORTS/0.json' },
      { constant: false, text: `ROOT/${D}` },
    ]);
  });

  it('sees through parentheses, TypeScript casts and non-null assertions', () => {
    expect(
      sinkShapes(`const Q = 'SELECT 1' as const;
      function f(x: unknown) { sink((Q as string)); sink(x as string); sink(Q!); sink(Q satisfies string); }`),
    ).toEqual([
      { constant: true, text: 'SELECT 1' },
      { constant: false, text: D },
      { constant: true, text: 'SELECT 1' },
      { constant: true, text: 'SELECT 1' },
    ]);
  });

  it('is constant for a conditional only when both branches are', () => {
    expect(
      sinkShapes(
        `function f(desc, col) { sink(desc ? 'DESC' : 'ASC'); sink(desc ? col : 'id'); sink(col || 'id'); }`,
      ),
    ).toEqual([
      { constant: true, text: 'DESC' },
      { constant: false, text: D },
      { constant: false, text: D },
    ]);
  });

  it('treats numbers, escapes, sanitizers and escaping tags as values that carry no injected text', () => {
    const shapes = sinkShapes(`function f(req, items) {
      sink('LIMIT ' + Number(req.query.limit));
      sink('LIMIT ' + parseInt(req.query.n, 10) + ' OFFSET ' + items.length);
      sink('<p>' + escapeHtml(req.query.q) + '</p>');
      sink(DOMPurify.sanitize(req.body.html));
      sink('WHERE name = ' + connection.escape(req.query.name));
      sink(sql\`SELECT * FROM users WHERE id = \${req.params.id}\`);
      sink(String.raw\`SELECT \${req.params.id}\`);
      sink(unescape(req.query.q));
    }`);
    expect(shapes.map((s) => s.constant)).toEqual([true, true, true, true, true, true, false, false]);
  });

  it('reads MODULE.CONSTANT and process.env.NAME as constants, other member accesses and calls as data', () => {
    expect(
      sinkShapes(`function f(req) {
      sink(Config.MAX_ROWS); sink(process.env.DATABASE_URL); sink(req.query.url); sink(getUrl()); sink(this.url);
    }`).map((s) => s.constant),
    ).toEqual([true, true, false, false, false]);
  });

  it('reads a shorthand property as the variable it names', () => {
    expect(
      sinkShapes(`function f(req) {
        const url = 'https://status.example.com'; sink({ url }.url); sink({ url });
        const target = req.query.url; sink({ url: target });
      }`).map((s) => s.constant),
    ).toEqual([false, true, false]);
  });

  it('counts code written in place (a function passed to a timer) as constant', () => {
    expect(sinkShape('function f(x) { sink(() => run(x)); }').constant).toBe(true);
  });
});

describe('javascript flow: names resolved within their function', () => {
  it('resolves a local constant, and a parameter is dynamic', () => {
    expect(
      sinkShapes(`function a() { const query = 'SELECT * FROM users'; sink(query); }
      function b(query: string) { sink(query); }`),
    ).toEqual([
      { constant: true, text: 'SELECT * FROM users' },
      { constant: false, text: D },
    ]);
  });

  it('keeps the same name in two functions apart', () => {
    const [constantOne, dynamicOne, constantAgain] = sinkShapes(`
      export async function listUsers(db) {
        const query = 'SELECT id, name FROM users ORDER BY name';
        return db.all(sink(query));
      }
      export async function findUsers(db, name) {
        const query = \`SELECT id, name FROM users WHERE name LIKE '%\${name}%'\`;
        return db.all(sink(query));
      }
      export async function countUsers(db) {
        let query = 'SELECT count(*) FROM users';
        return db.get(sink(query));
      }`);
    expect(constantOne).toEqual({ constant: true, text: 'SELECT id, name FROM users ORDER BY name' });
    expect(dynamicOne).toEqual({
      constant: false,
      text: `SELECT id, name FROM users WHERE name LIKE '%${D}%'`,
    });
    expect(constantAgain).toEqual({ constant: true, text: 'SELECT count(*) FROM users' });
  });

  it('reads module constants from inside functions, and a local binding shadows them', () => {
    expect(
      sinkShapes(`const sql = 'SELECT 1';
      function a() { sink(sql); }
      function b(sql) { sink(sql); }
      function c(x) { const sql = 'SELECT ' + x; sink(sql); }`).map((s) => s.constant),
    ).toEqual([true, false, false]);
  });

  it('reads a closure variable from the enclosing function', () => {
    expect(
      sinkShapes(`function outer(id) {
      const sql = 'SELECT * FROM t';
      const where = ' WHERE id = ' + id;
      return new Promise((resolve) => { sink(sql); sink(sql + where); });
    }`),
    ).toEqual([
      { constant: true, text: 'SELECT * FROM t' },
      { constant: false, text: `SELECT * FROM t WHERE id = ${D}` },
    ]);
  });

  it('keeps let/const in sibling blocks apart', () => {
    expect(
      sinkShapes(`function f(kind, x) {
      if (kind) { const q = 'SELECT 1'; sink(q); } else { const q = 'SELECT ' + x; sink(q); }
    }`).map((s) => s.constant),
    ).toEqual([true, false]);
  });

  it('requires every assignment to be constant, and appends += parts to the text', () => {
    expect(
      sinkShapes(`function f(opts, name) {
      let sql = 'SELECT * FROM t WHERE 1=1';
      if (opts.active) sql += ' AND active';
      sink(sql);
      let q = 'SELECT * FROM t WHERE 1=1';
      if (name) q += " AND name = '" + name + "'";
      sink(q);
    }`),
    ).toEqual([
      { constant: true, text: 'SELECT * FROM t WHERE 1=1 AND active' },
      { constant: false, text: `SELECT * FROM t WHERE 1=1 AND name = '${D}'` },
    ]);
  });

  it('reads `x = x + ...` as an append and does not loop on it', () => {
    expect(
      sinkShape(
        `function f(id) { let sql = 'SELECT * FROM t'; sql = sql + ' WHERE id = ' + id; sink(sql); }`,
      ),
    ).toEqual({
      constant: false,
      text: `SELECT * FROM t WHERE id = ${D}`,
    });
    expect(sinkShape(`function f() { let a = b + 'x'; let b = a + 'y'; sink(a); }`).constant).toBe(true);
  });

  it('follows strings built in loops', () => {
    expect(
      sinkShapes(`function f(filters, ids) {
      let sql = 'SELECT * FROM t WHERE 1=1';
      for (const [col, value] of Object.entries(filters)) sql += \` AND \${col} = '\${value}'\`;
      sink(sql);
      let cols = 'id';
      for (const c of ['name', 'email']) cols += ', ' + c;
      sink(cols);
      const parts = ['SELECT * FROM t'];
      for (const id of ids) parts.push('OR id = ' + id);
      sink(parts.join(' '));
      const fixed = [];
      for (let i = 0; i < 3; i++) fixed.push('?');
      sink(fixed.join(', '));
    }`).map((s) => s.constant),
    ).toEqual([false, true, false, true]);
  });

  it('counts destructuring and catch bindings as dynamic', () => {
    expect(
      sinkShapes(`function f(req) {
      const { name } = req.query; sink(name);
      const [first] = ['a']; sink(first);
      try {} catch (err) { sink(err); }
    }`).map((s) => s.constant),
    ).toEqual([false, false, false]);
  });

  it('takes unbound and imported ALL_CAPS names as constants, other unbound names as data', () => {
    expect(
      sinkShapes(`import { TABLE, table } from './schema';
      function f() { sink(TABLE); sink(table); sink(DEFAULT_QUERY); sink(someGlobal); }`),
    ).toEqual([
      { constant: true, text: 'TABLE' },
      { constant: false, text: D },
      { constant: true, text: 'DEFAULT_QUERY' },
      { constant: false, text: D },
    ]);
  });

  it('gives up (dynamic) after 20 names in a chain', () => {
    const chain = Array.from({ length: 25 }, (_, i) => `const v${i + 1} = v${i};`).join('\n');
    expect(sinkShape(`function f() { const v0 = 'SELECT 1';\n${chain}\nsink(v25); }`).constant).toBe(false);
    const short = Array.from({ length: 5 }, (_, i) => `const v${i + 1} = v${i};`).join('\n');
    expect(sinkShape(`function f() { const v0 = 'SELECT 1';\n${short}\nsink(v5); }`)).toEqual({
      constant: true,
      text: 'SELECT 1',
    });
  });

  it('reads the JavaScript grammar: plain, default, rest and single arrow parameters', () => {
    const shapes = sinkShapes(
      `function f(a, b = 'x', ...rest) { sink(a); sink(b); sink(rest); }
       const g = (x) => sink(x);
       const h = y => sink(y);
       const k = () => { const z = 'ok'; sink(z); };`,
      'javascript',
    );
    expect(shapes.map((s) => s.constant)).toEqual([false, false, false, false, false, true]);
  });

  it('reads TSX the same way', () => {
    expect(
      sinkShapes(
        `export function Bio({ html }: { html: string }) {
      const fixed = '<b>hi</b>';
      sink(fixed); sink(html);
      return <div />;
    }`,
        'tsx',
      ).map((s) => s.constant),
    ).toEqual([true, false]);
  });
});
