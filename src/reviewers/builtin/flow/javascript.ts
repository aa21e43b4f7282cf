/**
 * Data flow for JavaScript, TypeScript and TSX (one adapter: the TypeScript grammars extend the
 * JavaScript one). It answers "is the value reaching this sink written in the code?" by reading
 * literals, string building (`+`, templates, `.concat()`, `.join()`, `util.format`) and names.
 *
 * A name is resolved lexically, never file-wide: from the use outwards through its blocks and
 * functions to the first scope that declares it (a parameter, `const`/`let`/`var`, a `for` binding,
 * an import). Every write to that one binding (its declarations, `=`, `+=`, `.push()`) must be
 * constant for the name to be constant; a parameter, a destructuring or a `catch` binding is not.
 * So a `query` built from a request in one function says nothing about a `query` holding a
 * constant in another.
 *
 * The program's own input counts as constant too, as the process environment does for Python
 * (flow/python.ts): its command line (`process.argv`), its environment (`process.env`), a file
 * at a path it fixes or was given there (`fs.readFileSync(process.argv[2])`), and JSON parsed
 * from those. Whoever runs the program chooses them and is as trusted as the code (CodeQL's
 * default "remote" threat model leaves these local sources out for the same reason). Members and
 * elements of such a value are constant as long as nothing in the code assigns to them.
 */
import type { SgNode } from '@ast-grep/napi';
import { findAllSliced } from '../find-sliced';
import { callersReaching } from './javascript-callers';
import { dynamicShape, type FlowLanguage, joinShapes, resolutionWork, type ValueShape } from './types';

/** Name resolutions followed from one value before giving up (and calling it dynamic). */
const MAX_DEPTH = 20;

const FUNCTION_KINDS = new Set([
  'function_declaration',
  'function_expression',
  'function',
  'arrow_function',
  'method_definition',
  'generator_function_declaration',
  'generator_function',
]);
/** Nodes that own `let`/`const` bindings (functions own parameters and `var`). */
const BLOCK_KINDS = new Set([
  'statement_block',
  'for_statement',
  'for_in_statement',
  'switch_body',
  'catch_clause',
]);
/** Wrappers a value passes through unchanged. */
const TRANSPARENT_KINDS = new Set([
  'parenthesized_expression',
  'as_expression',
  'satisfies_expression',
  'non_null_expression',
  'type_assertion',
  'await_expression',
]);
/** Nodes between a bound identifier and what binds it (destructuring, defaults, TS parameters). */
const PATTERN_KINDS = new Set([
  'object_pattern',
  'array_pattern',
  'pair_pattern',
  'rest_pattern',
  'assignment_pattern',
  'object_assignment_pattern',
  'required_parameter',
  'optional_parameter',
]);
/** Literals whose value is their text. */
const LITERAL_KINDS = new Set(['number', 'true', 'false', 'null', 'undefined', 'regex']);
/** Code written in place is not data: a function passed to `setTimeout` is constant. */
const CODE_KINDS = new Set([
  'arrow_function',
  'function_expression',
  'function',
  'generator_function',
  'class',
]);

/** String methods whose result is built only from the receiver and the arguments. */
const STRING_METHODS = new Set([
  'toString',
  'trim',
  'trimStart',
  'trimEnd',
  'toLowerCase',
  'toUpperCase',
  'toLocaleLowerCase',
  'toLocaleUpperCase',
  'normalize',
  'padStart',
  'padEnd',
  'repeat',
  'slice',
  'substring',
  'substr',
  'replace',
  'replaceAll',
  'at',
  'charAt',
]);
/** Calls that return numbers or booleans: no text an attacker can shape. */
const NUMERIC_FUNCTIONS = new Set([
  'Number',
  'parseInt',
  'parseFloat',
  'Boolean',
  'isNaN',
  'isFinite',
  'BigInt',
]);
const NUMERIC_METHODS = new Set([
  'indexOf',
  'lastIndexOf',
  'charCodeAt',
  'codePointAt',
  'getTime',
  'toFixed',
  'includes',
  'startsWith',
  'endsWith',
  'test',
]);
const NUMERIC_OBJECTS = new Set(['Math', 'Date']);
/** Binary operators whose result is a number or a boolean. */
const NUMERIC_OPERATORS = new Set([
  '-',
  '*',
  '/',
  '%',
  '**',
  '<<',
  '>>',
  '>>>',
  '&',
  '|',
  '^',
  '==',
  '===',
  '!=',
  '!==',
  '<',
  '<=',
  '>',
  '>=',
  'in',
  'instanceof',
]);
/**
 * Escaping and sanitizing helpers (`escapeHtml`, `mysql.escape`, `DOMPurify.sanitize`,
 * `shellQuote.quote`, `encodeURIComponent`): what they return is safe to embed, so it counts as
 * constant. `unescape` and `escapeRegExp` do not make text safe for HTML, SQL or a shell.
 */
const SANITIZER =
  /escape|sanitiz|purify|^quote$|^shellquote$|htmlencode|encodehtml|^xss$|^filterxss$|^encodeuricomponent$/i;
const NOT_SANITIZER = /^unescape|regexp?$/i;
/** Template tags that escape or parameterise their substitutions (`sql\`...\``, `html\`...\``, execa's `$`). */
const ESCAPING_TAG = /^(sql|SQL|html|svg|\$)$/;
/** A constant's name: `MAX_ROWS`, `TABLE`. */
const ALL_CAPS = /^_*[A-Z][A-Z0-9_]*$/;

/** A value's shape; `input` marks the program's own input, whose members are its input too. */
interface Shape extends ValueShape {
  input?: boolean;
}

const constant = (text: string): ValueShape => ({ constant: true, text });
/** The program's own input: constant, its text unknown. */
const INPUT: Shape = { constant: true, text: '', input: true };
/** `process.argv` and `process.env`: what the program was started with. */
const PROCESS_INPUT = /^process\.(argv|env)$/;
/** `fs.readFileSync(path)`, `fs.promises.readFile(path)`, `readFile(path)`: a file's contents. */
const FILE_READS = new Set(['readFileSync', 'readFile']);
const FILE_MODULES = /^(fs|fsp|promises|fs\.promises|fsPromises)$/;
/** What a reference to the binding being resolved contributes to its own value (`sql = sql + x`). */
const NEUTRAL = constant('');
const NUMBER = constant('0');

interface Context {
  depth: number;
  /** Bindings being resolved (`<scope id>:<name>`): a reference back to one is a cycle. */
  visiting: Set<string>;
  /** Cycles met and depth limits hit so far: a binding resolved without one can be remembered. */
  cutoffs: number;
  memo: ParseMemo;
  /** Parameters the value was found to depend on (a sink's value handed in by callers). */
  parameters: ParameterRef[];
  /** Where the value's non-constant parts come in: the innermost expressions found dynamic. */
  sources: SgNode[];
}

/** Sources remembered with one resolved binding: enough to place a finding, bounded per binding. */
const MAX_SOURCES = 16;

/** A function's parameter a value depends on: `cmd` of `function run(cmd) { exec(cmd) }`. */
export interface ParameterRef {
  /** The function whose parameter it is. */
  fn: SgNode;
  name: string;
}

/**
 * What resolution learnt about one parse, kept for as long as the parse is: a file with thousands
 * of sinks asks about the same names and bindings thousands of times, and each answer found by a
 * search of the file or of all the name's declarations made the analysis quadratic in its sinks.
 */
interface ParseMemo {
  /** Identifier nodes by name, from one search of the file (`prepare`); null until made. */
  identifiers: Map<string, SgNode[]> | null;
  /** Each name's occurrences, classified, with its declarations and writes grouped by binding. */
  names: Map<string, NameBindings>;
  /**
   * Shapes of bindings (`<scope id>:<name>`) resolved without meeting a cycle or the depth limit,
   * with the depth they were resolved at: the same answer holds from that depth or shallower.
   */
  resolved: Map<string, { shape: Shape; depth: number; parameters: ParameterRef[]; sources: SgNode[] }>;
  /** Facts about the calls of the file, kept by ./javascript-callers.ts; null until asked. */
  callers: unknown;
}

interface NameBindings {
  occurrences: Occurrence[];
  /** Declarations by the id of the scope they bind in. */
  declarations: Map<number, Declaration[]>;
  /** Writes by the id of the scope whose binding they write (GLOBAL: none declares it), in source order; made on first use. */
  writes: Map<number, Write[]> | null;
}

/** The binding of a name no scope declares (an implicit global), as a scope id. */
const GLOBAL = -1;

const memoByParse = new WeakMap<object, ParseMemo>();

function memoFor(parse: object | undefined): ParseMemo {
  let memo = parse ? memoByParse.get(parse) : undefined;
  if (!memo) {
    memo = { identifiers: null, names: new Map(), resolved: new Map(), callers: null };
    if (parse) memoByParse.set(parse, memo);
  }
  return memo;
}

/** Identifiers and the names destructuring binds (`{ url } = ...`): where a name can occur. */
const NAME_RULE = {
  rule: { any: [{ kind: 'identifier' }, { kind: 'shorthand_property_identifier_pattern' }] },
};

/** A fresh question about one parse. */
const contextFor = (parse: object | undefined): Context => ({
  depth: 0,
  visiting: new Set(),
  cutoffs: 0,
  memo: memoFor(parse),
  parameters: [],
  sources: [],
});

/**
 * The value's shape and the parameters it depends on: with `function run(cmd) { exec('ls ' + cmd) }`
 * the sink's value is not constant because of `cmd`, so what callers pass as `cmd` reaches it.
 */
export function shapeWithParameters(
  node: SgNode,
  parse?: object,
): { shape: ValueShape; parameters: ParameterRef[] } {
  const ctx = contextFor(parse);
  const found = shape(node, ctx);
  return { shape: found, parameters: uniqueParameters(ctx.parameters) };
}

/**
 * Where the non-constant parts of the value come in: the innermost expressions found dynamic (a
 * parameter's use, `req.query.ref`, a call's result), in the sink's function or the bindings it
 * reads, at most MAX_SOURCES per binding. A change that edits one of their lines changed what
 * reaches the sink, even when the sink's own line is untouched.
 */
export function valueSources(node: SgNode, parse?: object): SgNode[] {
  const ctx = contextFor(parse);
  if (shape(node, ctx).constant) return [];
  return uniqueNodes(ctx.sources, Number.POSITIVE_INFINITY);
}

function uniqueNodes(nodes: readonly SgNode[], limit: number): SgNode[] {
  const seen = new Set<number>();
  const out: SgNode[] = [];
  for (const n of nodes) {
    if (out.length >= limit) break;
    if (seen.has(n.id())) continue;
    seen.add(n.id());
    out.push(n);
  }
  return out;
}

function uniqueParameters(parameters: readonly ParameterRef[]): ParameterRef[] {
  const seen = new Set<string>();
  return parameters.filter((p) => {
    const key = `${p.fn.id()}:${p.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * True when the identifier `use` refers to the binding `declared` names (a function's name where
 * it is declared): `run(x)` calls that `run`, not another one a closure declares.
 */
export function refersTo(use: SgNode, declared: SgNode, parse?: object): boolean {
  const ctx = contextFor(parse);
  const declaration = classify(declared);
  if (!('scope' in declaration)) return false;
  const scope = bindingScope(use, bindingsOf(use.text(), use, ctx));
  return scope !== null && scope.id() === declaration.scope.id();
}

/**
 * The values the binding `use` refers to is declared with (`new Repo(dir)` for `repo` after
 * `const repo = new Repo(dir)`), or an empty list when it is a parameter, an import or unbound.
 */
export function declaredValues(use: SgNode, parse?: object): SgNode[] {
  const ctx = contextFor(parse);
  const bindings = bindingsOf(use.text(), use, ctx);
  const scope = bindingScope(use, bindings);
  const own = scope ? (bindings.declarations.get(scope.id()) ?? []) : [];
  return own.flatMap((d) => (d.role === 'declaration' && d.value && !d.destructured ? [d.value] : []));
}

/** The parse's memo, for ./javascript-callers.ts to keep its own facts next to the names'. */
export function callerMemo(parse: object | undefined): { callers: unknown } {
  return memoFor(parse);
}

export const javascriptFlow: FlowLanguage = {
  shapeOf: (node: SgNode, parse?: object) => shape(node, contextFor(parse)),
  callersReaching: (value: SgNode, parse?: object) => callersReaching(value, parse),
  sourcesOf: (value: SgNode, parse?: object) => valueSources(value, parse),
  *prepare(root: SgNode, parse: object, yieldNow: () => boolean) {
    const memo = memoFor(parse);
    if (memo.identifiers) return;
    const found = yield* findAllSliced(root, NAME_RULE, yieldNow);
    const identifiers = new Map<string, SgNode[]>();
    for (const [i, node] of found.entries()) {
      const name = node.text();
      const list = identifiers.get(name);
      if (list) list.push(node);
      else identifiers.set(name, [node]);
      resolutionWork.visits++;
      if (i % 1000 === 999 && yieldNow()) yield;
    }
    memo.identifiers = identifiers;
  },
};

/** The node's grammar kind as a plain string (the typed kinds do not index string sets). */
const kindOf = (node: SgNode): string => String(node.kind());

function shape(node: SgNode, ctx: Context): Shape {
  const before = ctx.sources.length;
  const found = shapeOfKind(node, ctx);
  // Dynamic, and no part of it was: the data comes in here.
  if (!found.constant && ctx.sources.length === before) ctx.sources.push(node);
  return found;
}

function shapeOfKind(node: SgNode, ctx: Context): Shape {
  const kind = kindOf(node);
  if (kind === 'string') return constant(node.text().slice(1, -1));
  if (kind === 'template_string') return templateShape(node, ctx);
  if (LITERAL_KINDS.has(kind)) return constant(node.text());
  if (CODE_KINDS.has(kind)) return constant('');
  if (TRANSPARENT_KINDS.has(kind)) {
    const inner = expressionChildren(node);
    // `<T>x` puts the type first, `x as T` last: the expression is the first child that is not a type.
    const value = kind === 'type_assertion' ? inner[inner.length - 1] : inner[0];
    return value ? shape(value, ctx) : dynamicShape();
  }
  switch (kind) {
    case 'identifier':
      return identifierShape(node, ctx);
    case 'shorthand_property_identifier': // `{ url }` reads the variable `url`
      return resolveName(node.text(), node, ctx);
    case 'binary_expression':
      return binaryShape(node, ctx);
    case 'unary_expression':
    case 'update_expression':
      return NUMBER;
    case 'ternary_expression':
      return eitherShape(
        [node.field('consequence'), node.field('alternative')].map((b) =>
          b ? shape(b, ctx) : dynamicShape(),
        ),
      );
    case 'sequence_expression': {
      const last = expressionChildren(node).pop();
      return last ? shape(last, ctx) : dynamicShape();
    }
    case 'assignment_expression': {
      const right = node.field('right');
      return right ? shape(right, ctx) : dynamicShape();
    }
    case 'member_expression':
      return memberShape(node, ctx);
    case 'subscript_expression':
      return elementShape(node, ctx);
    case 'call_expression':
      return callShape(node, ctx);
    case 'new_expression':
      return newShape(node, ctx);
    case 'array':
      return joinWith(
        expressionChildren(node).map((e) => shape(e, ctx)),
        ' ',
      );
    case 'object':
      return objectShape(node, ctx);
    default:
      return dynamicShape();
  }
}

/** Named children that are expressions (comments are named nodes too). */
function expressionChildren(node: SgNode): SgNode[] {
  return node.namedChildren().filter((c) => c.kind() !== 'comment');
}

function joinWith(parts: ValueShape[], separator: string): ValueShape {
  return {
    constant: parts.every((p) => p.constant),
    text: parts.map((p) => p.text).join(separator),
  };
}

/** One of several values (a conditional): constant when all are; the text of the first dynamic one. */
function eitherShape(options: ValueShape[]): ValueShape {
  const dynamic = options.find((o) => !o.constant);
  return dynamic ?? options[0] ?? dynamicShape();
}

function templateShape(node: SgNode, ctx: Context): ValueShape {
  const parts: ValueShape[] = [];
  for (const child of node.namedChildren()) {
    if (child.kind() === 'template_substitution') {
      const inner = expressionChildren(child)[0];
      parts.push(inner ? shape(inner, ctx) : dynamicShape());
    } else if (child.kind() !== 'comment') {
      parts.push(constant(child.text()));
    }
  }
  return joinShapes(parts);
}

function binaryShape(node: SgNode, ctx: Context): ValueShape {
  const operator = node.field('operator')?.text() ?? '';
  if (operator === '+') {
    // `a + b + c + ...` nests to the left; walk the chain without recursing once per part.
    const operands: SgNode[] = [];
    let current: SgNode | null = node;
    while (current?.kind() === 'binary_expression' && current.field('operator')?.text() === '+') {
      const right = current.field('right');
      if (right) operands.push(right);
      current = current.field('left');
    }
    if (current) operands.push(current);
    return joinShapes(operands.reverse().map((o) => shape(o, ctx)));
  }
  if (NUMERIC_OPERATORS.has(operator)) return NUMBER;
  // `a || b`, `a ?? b`, `a && b`: the value is one of the operands.
  const sides = [node.field('left'), node.field('right')];
  return eitherShape(sides.map((s) => (s ? shape(s, ctx) : dynamicShape())));
}

/**
 * `X.MAX_ROWS`, `process.env.DB_NAME`, `this.TABLE`: a constant on a class or module (its text, the
 * expression, stands in for the value it holds). `.length` is a number. A member of the program's
 * own input (`process.argv`, a parsed file it was given) is its input. Anything else is data.
 */
function memberShape(node: SgNode, ctx: Context): Shape {
  const property = node.field('property')?.text() ?? '';
  if (ALL_CAPS.test(property)) return constant(node.text());
  if (property === 'length' || property === 'size') return NUMBER;
  if (PROCESS_INPUT.test(node.text())) return INPUT;
  const object = node.field('object');
  return object && shape(object, ctx).input ? INPUT : dynamicShape();
}

/** `process.argv[2]`, `job.steps[i]`: an element of the program's own input is its input. */
function elementShape(node: SgNode, ctx: Context): Shape {
  const object = node.field('object');
  return object && shape(object, ctx).input ? INPUT : dynamicShape();
}

function objectShape(node: SgNode, ctx: Context): ValueShape {
  const values: ValueShape[] = [];
  for (const entry of expressionChildren(node)) {
    if (entry.kind() === 'pair') {
      const value = entry.field('value');
      values.push(value ? shape(value, ctx) : dynamicShape());
    } else if (entry.kind() === 'shorthand_property_identifier') {
      values.push(resolveName(entry.text(), entry, ctx));
    } else if (entry.kind() !== 'method_definition') {
      values.push(dynamicShape());
    }
  }
  return { constant: values.every((v) => v.constant), text: '' };
}

function lastName(callee: SgNode): string {
  if (callee.kind() === 'member_expression') return callee.field('property')?.text() ?? '';
  return callee.kind() === 'identifier' ? callee.text() : '';
}

function callShape(node: SgNode, ctx: Context): ValueShape {
  const callee = node.field('function');
  const args = node.field('arguments');
  if (!callee || !args) return dynamicShape();
  if (args.kind() === 'template_string') return taggedTemplateShape(callee, args, ctx);
  const name = lastName(callee);
  const receiver = callee.kind() === 'member_expression' ? callee.field('object') : null;
  const argNodes = expressionChildren(args);
  const argShapes = () => argNodes.map((a) => shape(a, ctx));

  if (SANITIZER.test(name) && !NOT_SANITIZER.test(name)) return constant('');
  if (NUMERIC_FUNCTIONS.has(name) && !receiver) return NUMBER;
  if (isProgramInputRead(name, receiver))
    return argNodes[0] && shape(argNodes[0], ctx).constant ? INPUT : dynamicShape();
  if (receiver && (NUMERIC_METHODS.has(name) || NUMERIC_OBJECTS.has(receiver.text()))) return NUMBER;
  if (name === 'String' && !receiver) return argNodes[0] ? shape(argNodes[0], ctx) : constant('');
  if (!receiver) return name === 'format' ? formatShape(argNodes, ctx) : dynamicShape();

  const object = receiver.text();
  if (name === 'concat') return joinShapes([shape(receiver, ctx), ...argShapes()]);
  if (/^(path|posix|win32|path\.posix|path\.win32)$/.test(object) && /^(join|resolve|normalize)$/.test(name))
    return joinWith(argShapes(), '/');
  if (name === 'join') {
    const separator = argNodes[0] ? shape(argNodes[0], ctx) : constant(',');
    const elements = shape(receiver, ctx);
    return { constant: elements.constant && separator.constant, text: elements.text };
  }
  if (STRING_METHODS.has(name)) {
    const own = shape(receiver, ctx);
    return { constant: own.constant && argShapes().every((a) => a.constant), text: own.text };
  }
  if (name === 'format') {
    // mysql's and sqlstring's `format` escape every value they place; `util.format` does not.
    if (/sql/i.test(object)) return argNodes[0] ? shape(argNodes[0], ctx) : dynamicShape();
    return formatShape(argNodes, ctx);
  }
  return dynamicShape();
}

/**
 * A file read at a path the code fixes or was started with, or JSON parsed from such text: the
 * program's own input when its first argument is constant.
 */
function isProgramInputRead(name: string, receiver: SgNode | null): boolean {
  if (FILE_READS.has(name)) return !receiver || FILE_MODULES.test(receiver.text());
  return name === 'parse' && receiver?.text() === 'JSON';
}

/**
 * `sql\`...\`` and `html\`...\`` build parameterised or escaped values from their substitutions;
 * any other tag (`String.raw`, `dedent`) builds the text like a plain template.
 */
function taggedTemplateShape(tag: SgNode, template: SgNode, ctx: Context): ValueShape {
  const names = tag.text().split('.');
  if (names.some((n) => ESCAPING_TAG.test(n))) return constant('');
  return templateShape(template, ctx);
}

/**
 * `util.format('%s ...', a)` and pg-format's `format('%I ... %L', a, b)`: each `%s`-style
 * placeholder takes an argument's text; `%L`/`%I`/`%%` are escaped by pg-format (or literal).
 */
function formatShape(argNodes: SgNode[], ctx: Context): ValueShape {
  const [first, ...rest] = argNodes;
  if (!first) return dynamicShape();
  const template = shape(first, ctx);
  const parts: ValueShape[] = [];
  let next = 0;
  let last = 0;
  for (const m of template.text.matchAll(/%([sdifjoOcLIQ%])/g)) {
    parts.push(constant(template.text.slice(last, m.index)));
    last = (m.index ?? 0) + m[0].length;
    const spec = m[1];
    if (spec === '%') parts.push(constant('%'));
    else {
      const arg = rest[next++];
      if (spec === 'L' || spec === 'I' || spec === 'Q') parts.push(constant(''));
      else parts.push(arg ? shape(arg, ctx) : constant(''));
    }
  }
  parts.push(constant(template.text.slice(last)));
  // Arguments without a placeholder are appended by util.format.
  for (const extra of rest.slice(next)) parts.push(shape(extra, ctx));
  const joined = joinShapes(parts);
  return { constant: joined.constant && template.constant, text: joined.text };
}

function newShape(node: SgNode, ctx: Context): ValueShape {
  const constructorName = node.field('constructor')?.text() ?? '';
  const args = node.field('arguments');
  const argNodes = args ? expressionChildren(args) : [];
  if (constructorName === 'String') return argNodes[0] ? shape(argNodes[0], ctx) : constant('');
  if (constructorName === 'URL') {
    // new URL(path, base): the base decides the host, so its text comes first.
    const [path, base] = argNodes.map((a) => shape(a, ctx));
    return path ? (base ? joinShapes([base, path]) : path) : dynamicShape();
  }
  return dynamicShape();
}

// --- names ---------------------------------------------------------------------------------

/** What binds or writes a name at one occurrence. */
type Occurrence =
  | { role: 'parameter'; scope: SgNode }
  | { role: 'declaration'; scope: SgNode; value: SgNode | null; destructured: boolean; at: SgNode }
  | { role: 'loop'; scope: SgNode; collection: SgNode | null; destructured: boolean; at: SgNode }
  | { role: 'code'; scope: SgNode }
  | { role: 'import'; scope: SgNode }
  | { role: 'opaque'; scope: SgNode }
  | { role: 'assign'; value: SgNode | null; destructured: boolean; at: SgNode }
  | { role: 'append'; values: SgNode[]; at: SgNode }
  /** `name.key = v`, `name[i] = v`: a member of the binding's value rewritten. */
  | { role: 'member'; at: SgNode }
  | { role: 'number'; at: SgNode }
  | { role: 'read' };

type Write = Extract<Occurrence, { at: SgNode }>;
type Declaration = Extract<Occurrence, { scope: SgNode }>;

function identifierShape(node: SgNode, ctx: Context): Shape {
  const name = node.text();
  if (name === 'undefined' || name === 'NaN' || name === 'Infinity')
    return constant(name === 'undefined' ? '' : name);
  return resolveName(name, node, ctx);
}

function isFunction(node: SgNode): boolean {
  return FUNCTION_KINDS.has(kindOf(node));
}
function isScope(node: SgNode): boolean {
  return isFunction(node) || BLOCK_KINDS.has(kindOf(node)) || node.kind() === 'program';
}

/** The scopes around `node`, innermost first, ending with the program. */
function scopeChain(node: SgNode): SgNode[] {
  return node.ancestors().filter(isScope);
}

/** The nearest function (or the program) around `node`: where `var` and parameters live. */
function functionScope(node: SgNode): SgNode {
  const scopes = scopeChain(node);
  return scopes.find((s) => isFunction(s) || s.kind() === 'program') ?? scopes[scopes.length - 1] ?? node;
}

/** The nearest block, function or program around `node`: where `let` and `const` live. */
function blockScope(node: SgNode): SgNode {
  return scopeChain(node)[0] ?? node;
}

/**
 * Every occurrence of `name` in the file, classified, with its declarations grouped by scope.
 * The search is file-wide only to find the candidates; each is then tied to the one scope that
 * binds it. Made once per name and parse.
 */
function bindingsOf(name: string, from: SgNode, ctx: Context): NameBindings {
  let found = ctx.memo.names.get(name);
  if (!found) {
    const nodes = identifiersNamed(name, from, ctx.memo);
    const occurrences = nodes.map(classify);
    const declarations = new Map<number, Declaration[]>();
    for (const o of occurrences) {
      resolutionWork.visits++;
      if (!('scope' in o)) continue;
      const id = o.scope.id();
      const list = declarations.get(id);
      if (list) list.push(o);
      else declarations.set(id, [o]);
    }
    found = { occurrences, declarations, writes: null };
    ctx.memo.names.set(name, found);
  }
  return found;
}

function identifiersNamed(name: string, from: SgNode, memo: ParseMemo): SgNode[] {
  if (memo.identifiers) return memo.identifiers.get(name) ?? [];
  // Not prepared (a single question, as in tests): search the file for this one name.
  const escaped = name.replace(/[$]/g, '\\$');
  return from
    .getRoot()
    .root()
    .findAll({ rule: { ...NAME_RULE.rule, regex: `^${escaped}$` } });
}

/** The writes of the binding of `name` declared in `scope` (null: the implicit global), in source order. */
function writesOf(bindings: NameBindings, scope: SgNode | null): Write[] {
  if (!bindings.writes) {
    const writes = new Map<number, Write[]>();
    for (const o of bindings.occurrences) {
      if (!('at' in o)) continue;
      resolutionWork.visits++;
      const owner = 'scope' in o ? o.scope : bindingScope(o.at, bindings);
      const id = owner?.id() ?? GLOBAL;
      const list = writes.get(id);
      if (list) list.push(o);
      else writes.set(id, [o]);
    }
    for (const list of writes.values())
      list.sort((a, b) => a.at.range().start.index - b.at.range().start.index);
    bindings.writes = writes;
  }
  return bindings.writes.get(scope?.id() ?? GLOBAL) ?? [];
}

function same(a: SgNode | null | undefined, b: SgNode | null | undefined): boolean {
  return !!a && !!b && a.id() === b.id();
}

function classify(occurrence: SgNode): Occurrence {
  // Climb out of destructuring and parameter wrappers to what binds the name.
  let node = occurrence;
  let destructured = occurrence.kind() === 'shorthand_property_identifier_pattern';
  let parent = node.parent();
  while (parent && PATTERN_KINDS.has(kindOf(parent))) {
    const k = parent.kind();
    // A default value or a pair's key is not a binding of the name.
    if (
      (k === 'assignment_pattern' || k === 'object_assignment_pattern') &&
      !same(parent.field('left'), node)
    )
      return { role: 'read' };
    if (k === 'pair_pattern' && !same(parent.field('value'), node)) return { role: 'read' };
    if ((k === 'required_parameter' || k === 'optional_parameter') && !same(parent.field('pattern'), node))
      return { role: 'read' };
    if (k === 'object_pattern' || k === 'array_pattern' || k === 'pair_pattern') destructured = true;
    node = parent;
    parent = node.parent();
  }
  if (!parent) return { role: 'read' };
  switch (parent.kind()) {
    case 'formal_parameters':
      return { role: 'parameter', scope: parent.parent() ?? parent };
    case 'arrow_function':
      return same(parent.field('parameter'), node) ? { role: 'parameter', scope: parent } : { role: 'read' };
    case 'variable_declarator': {
      if (!same(parent.field('name'), node)) return { role: 'read' };
      const isVar = parent.parent()?.kind() === 'variable_declaration';
      const scope = isVar ? functionScope(parent) : blockScope(parent);
      return { role: 'declaration', scope, value: parent.field('value'), destructured, at: parent };
    }
    case 'assignment_expression':
      if (!same(parent.field('left'), node)) return { role: 'read' };
      return { role: 'assign', value: parent.field('right'), destructured, at: parent };
    case 'augmented_assignment_expression': {
      if (!same(parent.field('left'), node)) return { role: 'read' };
      const operator = parent.field('operator')?.text() ?? parent.children()[1]?.text() ?? '';
      const right = parent.field('right');
      if (operator === '+=') return { role: 'append', values: right ? [right] : [], at: parent };
      if (operator === '||=' || operator === '??=' || operator === '&&=')
        return { role: 'assign', value: right, destructured: false, at: parent };
      return { role: 'number', at: parent };
    }
    case 'update_expression':
      return { role: 'number', at: parent };
    case 'for_in_statement': {
      if (!same(parent.field('left'), node)) return { role: 'read' };
      const collection = parent.field('right');
      // `for (x of xs)` without a declaration writes an existing binding.
      if (!parent.field('kind')) return { role: 'assign', value: null, destructured: true, at: parent };
      return { role: 'loop', scope: parent, collection, destructured, at: parent };
    }
    case 'catch_clause':
      return same(parent.field('parameter'), node) ? { role: 'opaque', scope: parent } : { role: 'read' };
    case 'function_declaration':
    case 'generator_function_declaration':
    case 'class_declaration':
      return same(parent.field('name'), node)
        ? { role: 'code', scope: blockScope(parent) }
        : { role: 'read' };
    case 'import_specifier':
    case 'import_clause':
    case 'namespace_import':
      return { role: 'import', scope: parent.getRoot().root() };
    case 'member_expression':
      return memberWrite(parent, node) ?? arrayAppend(parent, node);
    case 'subscript_expression':
      return memberWrite(parent, node) ?? { role: 'read' };
    default:
      return { role: 'read' };
  }
}

/** `name.key = v`, `name[i] += v`: the member written is the target of an assignment. */
function memberWrite(member: SgNode, object: SgNode): Occurrence | null {
  if (!same(member.field('object'), object)) return null;
  const assignment = member.parent();
  const kind = assignment?.kind();
  if (kind !== 'assignment_expression' && kind !== 'augmented_assignment_expression') return null;
  return assignment && same(assignment.field('left'), member) ? { role: 'member', at: assignment } : null;
}

/** `parts.push(a, b)` / `parts.unshift(a)` add to the array the name holds. */
function arrayAppend(member: SgNode, object: SgNode): Occurrence {
  if (!same(member.field('object'), object)) return { role: 'read' };
  const method = member.field('property')?.text();
  const call = member.parent();
  if ((method !== 'push' && method !== 'unshift') || call?.kind() !== 'call_expression')
    return { role: 'read' };
  if (!same(call.field('function'), member)) return { role: 'read' };
  const args = call.field('arguments');
  return { role: 'append', values: args ? expressionChildren(args) : [], at: call };
}

/** The scope whose binding of the name is visible at `node` (null: none declares it). */
function bindingScope(node: SgNode, bindings: NameBindings): SgNode | null {
  for (const scope of scopeChain(node)) {
    resolutionWork.visits++;
    if (bindings.declarations.has(scope.id())) return scope;
  }
  return null;
}

function resolveName(name: string, use: SgNode, ctx: Context): Shape {
  if (ctx.depth >= MAX_DEPTH) {
    ctx.cutoffs++;
    return dynamicShape();
  }
  const bindings = bindingsOf(name, use, ctx);
  const scope = bindingScope(use, bindings);
  const own = scope ? (bindings.declarations.get(scope.id()) ?? []) : [];
  // Unbound, or bound by an import: ALL_CAPS names are constants from elsewhere.
  const capsOrDynamic = () => (ALL_CAPS.test(name) ? constant(name) : dynamicShape());
  const parameter = own.find((d) => d.role === 'parameter');
  if (parameter) {
    ctx.parameters.push({ fn: parameter.scope, name });
    return dynamicShape();
  }
  if (own.some((d) => d.role === 'opaque')) return dynamicShape();
  if (own.some((d) => d.role === 'import')) return capsOrDynamic();
  if (own.some((d) => d.role === 'code')) return constant('');

  // The binding's writes: its declarations, and assignments that see this binding (not a shadow).
  const writes = writesOf(bindings, scope);
  // Members written (`name.key = v`) do not bind the name itself.
  if (!scope && writes.every((w) => w.role === 'member')) return capsOrDynamic();

  const key = `${scope?.id() ?? 'global'}:${name}`;
  const known = ctx.memo.resolved.get(key);
  if (known && ctx.depth <= known.depth) {
    ctx.parameters.push(...known.parameters);
    ctx.sources.push(...known.sources);
    return known.shape;
  }
  if (ctx.visiting.has(key)) {
    ctx.cutoffs++;
    return NEUTRAL;
  }
  const cutoffsBefore = ctx.cutoffs;
  const parametersBefore = ctx.parameters.length;
  const sourcesBefore = ctx.sources.length;
  ctx.visiting.add(key);
  ctx.depth++;
  try {
    const resolved = combineWrites(name, writes, ctx);
    // Met no cycle and no depth limit: the answer does not depend on where the question came from.
    if (ctx.cutoffs === cutoffsBefore)
      ctx.memo.resolved.set(key, {
        shape: resolved,
        depth: ctx.depth - 1,
        // Once each: a binding written a thousand times from one parameter depends on it once.
        parameters: uniqueParameters(ctx.parameters.slice(parametersBefore)),
        sources: uniqueNodes(ctx.sources.slice(sourcesBefore), MAX_SOURCES),
      });
    return resolved;
  } finally {
    ctx.depth--;
    ctx.visiting.delete(key);
  }
}

/**
 * Constant when every write is; the text is the first value written plus what `+=`, `.push()`
 * and `name = name + ...` append after it. The program's own input when every value written is,
 * and no member of it is rewritten.
 */
function combineWrites(name: string, writes: readonly Write[], ctx: Context): Shape {
  let isConstant = true;
  let isInput = writes.some((w) => w.role === 'declaration' || w.role === 'assign');
  let text: string | null = null;
  const append = (s: ValueShape) => {
    isConstant &&= s.constant;
    isInput = false;
    text = (text ?? '') + s.text;
  };
  for (const write of writes) {
    resolutionWork.visits++;
    let value: Shape;
    switch (write.role) {
      case 'number':
        continue;
      case 'member':
        isInput = false;
        continue;
      case 'append':
        append(joinShapes(write.values.map((v) => shape(v, ctx))));
        continue;
      case 'loop':
        value =
          write.destructured || !write.collection ? dynamicShape() : loopElementShape(write.collection, ctx);
        break;
      case 'declaration':
      case 'assign':
        if (write.destructured) value = dynamicShape();
        else if (!write.value)
          continue; // `let sql;` declares, writes nothing
        else if (write.role === 'assign' && startsWithName(write.value, name)) {
          append(shape(write.value, ctx));
          continue;
        } else value = shape(write.value, ctx);
        break;
    }
    isConstant &&= value.constant;
    isInput &&= value.input === true;
    text ??= value.text;
  }
  return isInput && isConstant ? INPUT : { constant: isConstant, text: text ?? '' };
}

/** `for (const t of ['a', 'b'])`: an element of a constant collection is constant. */
function loopElementShape(collection: SgNode, ctx: Context): ValueShape {
  if (collection.kind() === 'array') {
    const elements = expressionChildren(collection).map((e) => shape(e, ctx));
    return eitherShape(elements);
  }
  const whole = shape(collection, ctx);
  return whole.constant ? constant(whole.text) : dynamicShape();
}

/** `sql + ...`: the value extends what the name already holds. */
function startsWithName(value: SgNode, name: string): boolean {
  let node: SgNode | null = value;
  while (node?.kind() === 'binary_expression') node = node.field('left');
  return node?.kind() === 'identifier' && node.text() === name;
}
