/**
 * Data flow for Python (tree-sitter-python): what reaches a sink, as far as the enclosing
 * function tells. Literals and strings built only from them (`+`, f-strings, `%`, `.format()`,
 * `"".join` of literals, implicit concatenation) are constant; a name is resolved to every value
 * assigned to it in its own function, then the enclosing functions and the module, never
 * file-wide by name; a parameter, a call result, a subscript or an attribute is dynamic.
 *
 * Beyond the contract in types.ts, a short list of calls whose result cannot carry injected text
 * counts as constant: numeric conversions (`int(x)`), quoting and escaping (`shlex.quote`,
 * `html.escape`, psycopg's `sql.Identifier`), file-name reduction (`secure_filename`,
 * `os.path.basename`). Those are the fixes the rules' notes recommend, so following them must
 * make a finding go away even when the value passes through a variable first.
 *
 * Two kinds of value the code did not write still count as constant, because no one outside the
 * machine chooses them: the process environment and command line (`os.environ`, `os.getenv`,
 * `sys.argv[i]`: set by whoever runs the program, as trusted as the code; CodeQL's default
 * "remote" threat model leaves them out for the same reason) and paths of temporary files the process creates itself (`tempfile.mkstemp`).
 * A call to a helper defined in the same module is followed: its result is constant when its
 * arguments are and every `return` builds only on them and constants. The other way, a value
 * that depends on a parameter of its function names that parameter (`shapeWithParameters`), so a
 * function whose parameter reaches a sink is a sink for its callers (./python-callers.ts).
 *
 * The work is linear in a file's sinks: names are looked up in a per-parse index
 * (flow/python-index.ts), and a name's shape found without a cutoff is remembered for the parse,
 * so the thousandth sink reading a name neither searches nor combines its bindings again.
 */
import type { SgNode } from '@ast-grep/napi';
import { callersReaching } from './python-callers';
import {
  type Binding,
  bindingsOf,
  callArguments,
  innermostScope,
  localFunction,
  memoFor,
  outerScope,
  type ParameterRef,
  type ParseMemo,
  prepareIndex,
  returnsOf,
  SCOPES,
} from './python-index';
import {
  constantShape,
  DYNAMIC,
  dynamicShape,
  type FlowLanguage,
  joinShapes,
  resolutionWork,
  type ValueShape,
} from './types';

/** More names than this followed for one value, and it counts as dynamic. */
const MAX_HOPS = 20;
/** Expressions nested deeper than this count as dynamic (a guard for the stack, not a judgement). */
const MAX_NESTING = 200;
const ALL_CAPS = /^_*[A-Z][A-Z0-9_]*$/;

const COMPREHENSIONS = new Set([
  'list_comprehension',
  'set_comprehension',
  'dictionary_comprehension',
  'generator_expression',
]);

/** Values fixed for the life of the process: the interpreter's facts, not input. */
const PROCESS_CONSTANTS = new Set([
  '__file__',
  '__name__',
  'sys.executable',
  'sys.platform',
  'sys.prefix',
  'os.sep',
  'os.pathsep',
  'os.linesep',
  'os.devnull',
  'os.curdir',
  'os.pardir',
]);

/**
 * Calls whose result cannot carry injected text whatever their argument: numbers and booleans,
 * shell quoting, HTML escaping and rendered templates (which escape their values), SQL identifiers
 * and literals composed by psycopg, and file names stripped of their directories.
 */
const SANITIZERS = new Set([
  'int',
  'float',
  'bool',
  'len',
  'abs',
  'round',
  'ord',
  'range',
  'uuid.UUID',
  'shlex.quote',
  'pipes.quote',
  'shlex.join',
  'html.escape',
  'markupsafe.escape',
  'escape',
  'conditional_escape',
  'bleach.clean',
  'nh3.clean',
  'format_html',
  'format_html_join',
  'render_template',
  'flask.render_template',
  'render_to_string',
  'secure_filename',
  'werkzeug.utils.secure_filename',
  'os.path.basename',
  'safe_join',
  'werkzeug.utils.safe_join',
  'werkzeug.security.safe_join',
  'sql.Identifier',
  'sql.Literal',
  'sql.Placeholder',
  'psycopg2.sql.Identifier',
  'psycopg2.sql.Literal',
  'psycopg.sql.Identifier',
  'psycopg.sql.Literal',
]);

/** Reads of the process environment: configuration of whoever runs the program. */
const ENVIRONMENT_READS = new Set(['os.environ.get', 'os.getenv', 'environ.get', 'getenv']);
const ENVIRONMENT = new Set(['os.environ', 'environ']);
/** The program's command line, chosen by whoever runs it like its environment (`sys.argv[1]`). */
const COMMAND_LINE = new Set(['sys.argv']);
/** Temporary files and directories the process creates for itself. */
const TEMPORARY_PATHS = new Set([
  'tempfile.mkstemp',
  'tempfile.mkdtemp',
  'tempfile.mktemp',
  'tempfile.gettempdir',
  'mkstemp',
  'mkdtemp',
  'gettempdir',
]);

/** Calls whose result is their argument(s) reshaped: constant when the arguments are. */
const TRANSPARENT_CALLS = new Set([
  'str',
  'shlex.split',
  'repr',
  'textwrap.dedent',
  'dedent',
  'inspect.cleandoc',
  'os.path.abspath',
  'os.path.normpath',
  'os.path.realpath',
  'os.path.expanduser',
  'os.path.dirname',
  'sql.SQL',
  'psycopg2.sql.SQL',
  'psycopg.sql.SQL',
]);
/** Calls that join their arguments as path segments. */
const PATH_JOINS = new Set([
  'os.path.join',
  'posixpath.join',
  'ntpath.join',
  'Path',
  'pathlib.Path',
  'PurePath',
  'PurePosixPath',
  'pathlib.PurePosixPath',
]);
/** String methods whose result is built only from the receiver and the arguments. */
const STRING_METHODS = new Set([
  'lower',
  'upper',
  'strip',
  'lstrip',
  'rstrip',
  'replace',
  'title',
  'capitalize',
  'casefold',
  'swapcase',
  'zfill',
  'ljust',
  'rjust',
  'center',
  'encode',
  'decode',
  'removeprefix',
  'removesuffix',
  'expandtabs',
]);

interface Walk {
  /** Names followed so far. */
  hops: number;
  /** Expression levels descended so far. */
  nesting: number;
  /** `<scope id>:<name>` being resolved: a name met again inside its own definition adds nothing. */
  resolving: Set<string>;
  /**
   * Names already resolved for this value: a name used many times is read once. `cut`: its
   * answer met a cutoff, so an answer built on it depends on where the question came from too.
   */
  resolved: Map<string, { shape: ValueShape; cut: boolean }>;
  /** Ids of local helpers being followed with constant arguments: their parameters are constant. */
  constantParameters: Set<number>;
  /** What is known about the parse, shared by every question about it. */
  memo: ParseMemo;
  /**
   * Cycles met and hop or nesting limits hit so far (one counter for the whole walk): a name
   * resolved without one has the same shape wherever it is asked from, so the parse remembers it.
   */
  cutoffs: { count: number };
  /**
   * Parameters the value was found to depend on, in the order met (repeats allowed): a sink's
   * value handed in by the function's callers (./python-callers.ts). Shared by the whole walk.
   */
  parameters: ParameterRef[];
}

const newWalk = (parse: object | undefined): Walk => ({
  hops: 0,
  nesting: 0,
  resolving: new Set(),
  resolved: new Map(),
  constantParameters: new Set(),
  memo: memoFor(parse),
  cutoffs: { count: 0 },
  parameters: [],
});

/** What reaches `node`, and the parameters of the functions around it that it depends on. */
export function shapeWithParameters(
  node: SgNode,
  parse: object | undefined,
): { shape: ValueShape; parameters: ParameterRef[] } {
  const walk = newWalk(parse);
  const shape = shapeOf(node, walk);
  const seen = new Set<string>();
  const parameters = walk.parameters.filter((p) => {
    const key = `${p.fn.id()}:${p.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { shape, parameters };
}

export const pythonFlow: FlowLanguage = {
  shapeOf: (node: SgNode, parse?: object) => shapeOf(node, newWalk(parse)),
  prepare: (root: SgNode, parse: object, yieldNow: () => boolean) =>
    prepareIndex(root, memoFor(parse), yieldNow),
  callersReaching: (value: SgNode, parse?: object) => callersReaching(value, parse),
};

function shapeOf(node: SgNode, walk: Walk): ValueShape {
  if (walk.nesting > MAX_NESTING) {
    walk.cutoffs.count++;
    return dynamicShape();
  }
  const inner: Walk = { ...walk, nesting: walk.nesting + 1 };
  switch (node.kind()) {
    case 'string':
      return stringShape(node, inner);
    case 'concatenated_string':
      return joinShapes(node.namedChildren().map((c) => shapeOf(c, inner)));
    case 'integer':
    case 'float':
    case 'true':
    case 'false':
    case 'none':
    case 'ellipsis':
      return constantShape(node.text());
    // A boolean is never text an attacker wrote.
    case 'comparison_operator':
    case 'not_operator':
      return constantShape('False');
    case 'parenthesized_expression':
    case 'await':
    case 'unary_operator': {
      const child = node.namedChildren().find((c) => c.kind() !== 'comment');
      return child ? shapeOf(child, inner) : dynamicShape();
    }
    case 'conditional_expression': {
      const [consequence, , alternative] = node.namedChildren();
      if (!consequence || !alternative) return dynamicShape();
      return pickShape([shapeOf(consequence, inner), shapeOf(alternative, inner)]);
    }
    case 'boolean_operator': {
      const left = node.field('left');
      const right = node.field('right');
      if (!left || !right) return dynamicShape();
      return pickShape([shapeOf(left, inner), shapeOf(right, inner)]);
    }
    case 'named_expression': {
      const value = node.field('value');
      return value ? shapeOf(value, inner) : dynamicShape();
    }
    case 'binary_operator':
      return binaryShape(node, inner);
    case 'list':
    case 'tuple':
    case 'set':
    case 'expression_list':
      return listShape(node.namedChildren(), inner);
    case 'list_splat':
    case 'dictionary_splat': {
      const child = node.namedChildren()[0];
      return child ? shapeOf(child, inner) : dynamicShape();
    }
    case 'dictionary':
      return joinShapes(
        node
          .namedChildren()
          .flatMap((c) =>
            c.kind() === 'pair'
              ? [c.field('key'), c.field('value')].map((v) => (v ? shapeOf(v, inner) : dynamicShape()))
              : [shapeOf(c, inner)],
          ),
      );
    case 'list_comprehension':
    case 'set_comprehension':
    case 'generator_expression': {
      const body = node.field('body');
      return body ? shapeOf(body, inner) : dynamicShape();
    }
    case 'identifier':
      return nameShape(node, inner);
    case 'attribute':
      return attributeShape(node);
    case 'subscript':
      return subscriptShape(node, inner);
    case 'call':
      return callShape(node, inner);
    default:
      return dynamicShape();
  }
}

/** Of two values either of which may be the result: constant when both are; text of the first unknown one. */
function pickShape(options: ValueShape[]): ValueShape {
  const dynamic = options.find((o) => !o.constant);
  return dynamic ?? constantShape(options[0]?.text ?? '');
}

/** A string literal, or an f-string joined from its literal parts and interpolated values. */
function stringShape(node: SgNode, walk: Walk): ValueShape {
  const parts: ValueShape[] = [];
  const fString = /f/i.test(node.child(0)?.text() ?? '');
  for (const child of node.namedChildren()) {
    if (child.kind() === 'string_content') {
      const text = child.text();
      parts.push(constantShape(fString ? text.replace(/\{\{/g, '{').replace(/\}\}/g, '}') : text));
    } else if (child.kind() === 'interpolation') {
      const expression = child.namedChildren()[0];
      const format = child.namedChildren().find((c) => c.kind() === 'format_specifier');
      parts.push(expression ? shapeOf(expression, walk) : dynamicShape());
      // `{value:>{width}}`: the width is interpolated too.
      for (const nested of format?.findAll({ rule: { kind: 'format_expression' } }) ?? []) {
        const value = nested.namedChildren()[0];
        parts.push(value ? shapeOf(value, walk) : dynamicShape());
        parts.push(constantShape(''));
      }
    }
  }
  return joinShapes(parts);
}

function listShape(elements: SgNode[], walk: Walk): ValueShape {
  const shapes = elements.filter((e) => e.kind() !== 'comment').map((e) => shapeOf(e, walk));
  return { constant: shapes.every((s) => s.constant), text: shapes.map((s) => s.text).join(', ') };
}

function binaryShape(node: SgNode, walk: Walk): ValueShape {
  const left = node.field('left');
  const right = node.field('right');
  if (!left || !right) return dynamicShape();
  const operator = node.field('operator')?.text();
  const l = shapeOf(left, walk);
  if (operator === '%') return percentFormat(l, right, walk);
  const r = shapeOf(right, walk);
  if (operator === '+') return joinShapes([l, r]);
  // pathlib: `Path(root) / name`.
  if (operator === '/') return joinShapes([l, constantShape('/'), r]);
  // `"?" * len(ids)`, numbers, sets: the left operand's text is as good a guess as any.
  return { constant: l.constant && r.constant, text: l.constant && r.constant ? l.text : DYNAMIC };
}

const PERCENT_FIELD = /%(?:\(([^)]*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])/g;

/** `"... %s ..." % args`: the format's text with each field replaced by its argument's. */
function percentFormat(format: ValueShape, args: SgNode, walk: Walk): ValueShape {
  const positional = args.kind() === 'tuple' ? args.namedChildren().map((a) => shapeOf(a, walk)) : null;
  const named = new Map<string, ValueShape>();
  if (args.kind() === 'dictionary') {
    for (const pair of args.namedChildren()) {
      const key = pair.field('key');
      const value = pair.field('value');
      if (pair.kind() === 'pair' && key && value) named.set(stripQuotes(key.text()), shapeOf(value, walk));
    }
  }
  const whole = shapeOf(args, walk);
  let next = 0;
  const text = format.text.replace(PERCENT_FIELD, (field, key: string | undefined) => {
    if (field === '%%') return '%';
    const value = key !== undefined ? named.get(key) : positional ? positional[next++] : whole;
    return (value ?? dynamicShape()).text;
  });
  return { constant: format.constant && whole.constant, text };
}

const stripQuotes = (text: string) => text.replace(/^[a-zA-Z]*(['"]{1,3})([\s\S]*)\1$/, '$2');

/** Django's request fields are spelled like constants and are the request itself. */
const REQUEST_FIELDS = new Set(['GET', 'POST', 'FILES', 'COOKIES', 'META']);

function attributeShape(node: SgNode): ValueShape {
  const text = node.text();
  const last = node.field('attribute')?.text() ?? '';
  if (PROCESS_CONSTANTS.has(text)) return constantShape(text);
  if (ALL_CAPS.test(last) && !REQUEST_FIELDS.has(last)) return constantShape(text);
  return dynamicShape();
}

/** `TABLES[kind]`: a value picked from a constant table is one of the code's own constants. */
function subscriptShape(node: SgNode, walk: Walk): ValueShape {
  const value = node.field('value');
  if (!value) return dynamicShape();
  if (ENVIRONMENT.has(value.text()) || COMMAND_LINE.has(value.text())) return constantShape('$ENV');
  const table = shapeOf(value, walk);
  return table.constant ? constantShape(node.text()) : dynamicShape();
}

/** The dotted name of a call's function (`os.path.join`), or null for anything else. */
function calleeName(fn: SgNode | null): string | null {
  if (!fn) return null;
  return /^[A-Za-z_][\w.]*$/.test(fn.text()) ? fn.text() : null;
}

function callShape(node: SgNode, walk: Walk): ValueShape {
  const fn = node.field('function');
  const name = calleeName(fn);
  const args = callArguments(node);
  if (!fn || !args) return dynamicShape();
  if (name && SANITIZERS.has(name)) return constantShape(name === 'int' || name === 'len' ? '0' : '');
  if (name && ENVIRONMENT_READS.has(name)) return constantShape('$ENV');
  if (name && TEMPORARY_PATHS.has(name)) return constantShape('/tmp/');
  const argShapes = () =>
    args.map((a) =>
      a.kind() === 'keyword_argument' ? shapeOf(a.field('value') ?? a, walk) : shapeOf(a, walk),
    );
  if (name && TRANSPARENT_CALLS.has(name)) return joinShapes(argShapes());
  if (name && PATH_JOINS.has(name)) {
    const parts = argShapes();
    return {
      constant: parts.every((p) => p.constant),
      text: parts.map((p) => p.text).join('/'),
    };
  }
  if (fn.kind() === 'identifier') return localHelperShape(fn, args, walk);
  if (fn.kind() !== 'attribute') return dynamicShape();
  const receiver = fn.field('object');
  const method = fn.field('attribute')?.text();
  if (!receiver || !method) return dynamicShape();
  if (method === 'format') return braceFormat(shapeOf(receiver, walk), args, walk);
  if (method === 'join' && args.length === 1 && args[0]) {
    const separator = shapeOf(receiver, walk);
    const list = args[0];
    const parts = ['list', 'tuple'].includes(String(list.kind()))
      ? list.namedChildren().map((e) => shapeOf(e, walk))
      : [shapeOf(list, walk)];
    return {
      constant: separator.constant && parts.every((p) => p.constant),
      text: parts.map((p) => p.text).join(separator.text),
    };
  }
  // `ORDERINGS.get(key, "created_at")`: a value picked from a constant table, as with `[key]`.
  if (method === 'get') {
    const table = shapeOf(receiver, walk);
    const fallback = args[1] ? shapeOf(args[1], walk) : constantShape('');
    return table.constant && fallback.constant ? constantShape(node.text()) : dynamicShape();
  }
  if (STRING_METHODS.has(method)) {
    const self = shapeOf(receiver, walk);
    return { constant: self.constant && argShapes().every((a) => a.constant), text: self.text };
  }
  return dynamicShape();
}

const BRACE_FIELD = /\{\{|\}\}|\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}/g;

/** `"... {} ...".format(args)`: the format's text with each field replaced by its argument's. */
function braceFormat(format: ValueShape, args: SgNode[], walk: Walk): ValueShape {
  const positional: ValueShape[] = [];
  const named = new Map<string, ValueShape>();
  let splat = false;
  for (const arg of args) {
    if (arg.kind() === 'keyword_argument') {
      const key = arg.field('name')?.text() ?? '';
      const value = arg.field('value');
      named.set(key, value ? shapeOf(value, walk) : dynamicShape());
    } else if (arg.kind() === 'list_splat' || arg.kind() === 'dictionary_splat') {
      splat = true;
      positional.push(shapeOf(arg, walk));
    } else positional.push(shapeOf(arg, walk));
  }
  let next = 0;
  const text = format.text.replace(BRACE_FIELD, (field, key: string | undefined) => {
    if (field === '{{') return '{';
    if (field === '}}') return '}';
    const head = (key ?? '').split(/[.[]/)[0] ?? '';
    const value =
      head === '' ? positional[next++] : /^\d+$/.test(head) ? positional[Number(head)] : named.get(head);
    return (value ?? dynamicShape()).text;
  });
  const all = [...positional, ...named.values()];
  return {
    constant: format.constant && !splat && all.every((s) => s.constant),
    text,
  };
}

// --- local helpers -----------------------------------------------------------------------------

/**
 * `replace_sep(cc)`, `quote_name(table)`: a call to a function defined in an enclosing scope of
 * the same file. With constant arguments, its result is constant when every value it returns is
 * built from its parameters and constants; anything else (a parameter that is data, a helper
 * reading globals it mutates, a function we cannot find) stays dynamic.
 */
function localHelperShape(callee: SgNode, args: SgNode[], walk: Walk): ValueShape {
  if (walk.hops >= MAX_HOPS) {
    walk.cutoffs.count++;
    return dynamicShape();
  }
  const helper = localFunction(callee, callee.text(), walk.memo);
  if (!helper || walk.constantParameters.has(helper.id())) return dynamicShape();
  const inner: Walk = { ...walk, hops: walk.hops + 1 };
  const argShapes = args.map((a) =>
    shapeOf(a.kind() === 'keyword_argument' ? (a.field('value') ?? a) : a, inner),
  );
  if (!argShapes.every((a) => a.constant)) return dynamicShape();
  const returns = returnsOf(helper, walk.memo);
  const followed: Walk = {
    ...inner,
    resolved: new Map(),
    constantParameters: new Set([...walk.constantParameters, helper.id()]),
  };
  const shapes = returns.map((r) => {
    const value = r.namedChildren().find((c) => c.kind() !== 'comment');
    return value ? shapeOf(value, followed) : constantShape('');
  });
  return shapes.every((s) => s.constant) ? constantShape('') : dynamicShape();
}

// --- names -------------------------------------------------------------------------------------

function nameShape(node: SgNode, outer: Walk): ValueShape {
  if (outer.hops >= MAX_HOPS) {
    outer.cutoffs.count++;
    return dynamicShape();
  }
  const walk: Walk = { ...outer, hops: outer.hops + 1 };
  const name = node.text();
  const loop = comprehensionBinding(node, name);
  if (loop === 'destructured') return dynamicShape();
  if (loop) return iterationShape(loop, walk);
  let scope = innermostScope(node);
  while (scope) {
    resolutionWork.visits++;
    const found = scopeShape(scope, name, walk);
    if (found) return found;
    scope = outerScope(scope);
  }
  if (ALL_CAPS.test(name) || PROCESS_CONSTANTS.has(name)) return constantShape(name);
  return dynamicShape();
}

/**
 * The iterable of the comprehension clause that binds `name` around `node`, `destructured` when
 * the clause unpacks it (`for k, v in pairs`), null when no comprehension binds it.
 */
function comprehensionBinding(node: SgNode, name: string): SgNode | 'destructured' | null {
  for (const a of node.ancestors()) {
    if (SCOPES.has(String(a.kind()))) return null;
    if (!COMPREHENSIONS.has(String(a.kind()))) continue;
    for (const clause of a.namedChildren()) {
      if (clause.kind() !== 'for_in_clause') continue;
      const target = clause.field('left');
      if (target?.kind() === 'identifier' && target.text() === name) return clause.field('right');
      if (target?.find({ rule: { kind: 'identifier', regex: `^${name}$` } })) return 'destructured';
    }
  }
  return null;
}

/** A loop variable over a constant list is one of its constants; over anything else, dynamic. */
function iterationShape(iterable: SgNode, walk: Walk): ValueShape {
  const all = shapeOf(iterable, walk);
  if (!all.constant) return dynamicShape();
  const first = ['list', 'tuple', 'set'].includes(String(iterable.kind()))
    ? iterable.namedChildren()[0]
    : null;
  return first ? shapeOf(first, walk) : constantShape(all.text);
}

function parameterNames(fn: SgNode): Set<string> {
  const names = new Set<string>();
  const params = fn.field('parameters');
  for (const p of params?.namedChildren() ?? []) {
    const id = p.kind() === 'identifier' ? p : (p.field('name') ?? p.find({ rule: { kind: 'identifier' } }));
    if (id) names.add(id.text());
  }
  return names;
}

/**
 * What `name` is within `scope` itself, or null when the scope neither binds it nor declares it
 * a parameter (the caller then looks in the enclosing scope).
 */
function scopeShape(scope: SgNode, name: string, walk: Walk): ValueShape | null {
  if (scope.kind() === 'function_definition' || scope.kind() === 'lambda') {
    if (parameterNames(scope).has(name)) {
      if (walk.constantParameters.has(scope.id())) return constantShape('');
      walk.parameters.push({ fn: scope, name });
      return dynamicShape();
    }
  }
  const bindings = bindingsOf(scope, name, walk.memo);
  if (bindings.length === 0) return null;
  if (bindings.some((b) => b.kind === 'global')) {
    const module = scope.getRoot().root();
    return module.id() === scope.id() ? null : (scopeShape(module, name, walk) ?? nameFallback(name));
  }
  const key = `${scope.id()}:${name}`;
  const known = walk.resolved.get(key);
  if (known) {
    if (known.cut) walk.cutoffs.count++;
    return known.shape;
  }
  // `q = q + " AND x = 1"`: the name met inside its own definition adds nothing new.
  if (walk.resolving.has(key)) {
    walk.cutoffs.count++;
    return constantShape('');
  }
  // Inside a followed helper its parameters are constant: an answer there holds only there.
  const rememberable = walk.constantParameters.size === 0;
  const remembered = rememberable ? walk.memo.resolved.get(key) : undefined;
  if (remembered && walk.hops <= remembered.hops && walk.nesting <= remembered.nesting) {
    walk.resolved.set(key, { shape: remembered.shape, cut: false });
    walk.parameters.push(...remembered.parameters);
    return remembered.shape;
  }
  const cutoffsBefore = walk.cutoffs.count;
  const parametersBefore = walk.parameters.length;
  walk.resolving.add(key);
  try {
    let text: string | null = null;
    let constant = true;
    for (const b of bindings) {
      resolutionWork.visits++;
      const shape = bindingShape(b, walk);
      constant &&= shape.constant;
      if (b.kind === 'augmented') text = (text ?? '') + (b.operator === '+=' ? shape.text : '');
      else if (text === null) text = shape.text;
    }
    const shape = { constant, text: text ?? '' };
    const cut = walk.cutoffs.count !== cutoffsBefore;
    walk.resolved.set(key, { shape, cut });
    if (rememberable && !cut)
      walk.memo.resolved.set(key, {
        shape,
        hops: walk.hops,
        nesting: walk.nesting,
        parameters: walk.parameters.slice(parametersBefore),
      });
    return shape;
  } finally {
    walk.resolving.delete(key);
  }
}

const nameFallback = (name: string): ValueShape =>
  ALL_CAPS.test(name) ? constantShape(name) : dynamicShape();

function bindingShape(binding: Binding, walk: Walk): ValueShape {
  switch (binding.kind) {
    case 'value':
    case 'augmented':
      return shapeOf(binding.value, walk);
    case 'loop':
      return iterationShape(binding.iterable, walk);
    case 'mutation':
      return joinShapes(binding.values.map((v) => shapeOf(v, walk)));
    case 'unpacked':
      return shapeOf(binding.value, walk).constant ? constantShape('') : dynamicShape();
    default:
      return dynamicShape();
  }
}
