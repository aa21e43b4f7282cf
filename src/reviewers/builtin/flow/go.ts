/**
 * Data flow for Go (tree-sitter-go): what reaches a sink, read from the code around it.
 *
 * Literals are constant; `+`, `fmt.Sprintf`/`Sprint`, `strings.Join` of a literal slice, pure
 * `strings` helpers over constants and `strings.Builder`/`bytes.Buffer` writes join their parts.
 * A name is resolved in the function that declares it (a closure reads its enclosing function's
 * variable; a parameter is dynamic), then among the file's top-level `const`/`var` declarations;
 * every assignment to it there (`:=`, `=`, `+=`, `var`) must be constant, and a name whose
 * address is taken (`row.Scan(&q)`, `flag.StringVar(&q, …)`) is dynamic. Numbers formatted as
 * text (`%d`, `strconv.Itoa`) count as constant: digits cannot end a quote or add a clause.
 *
 * The work is linear in a file's sinks: names are looked up in a per-parse index
 * (flow/go-index.ts), and a variable's shape found without a cutoff is remembered for the parse,
 * so the thousandth sink reading a variable neither searches nor combines its writes again.
 */
import type { SgNode } from '@ast-grep/napi';
import { callersReaching } from './go-callers';
import {
  declaringScope,
  functionNamed,
  memoFor,
  nameIndex,
  occurrencesWithin,
  ownerScope,
  type ParseMemo,
  prepareIndex,
  type Role,
  returnsOf,
  writesIn,
} from './go-index';
import {
  constantShape,
  DYNAMIC,
  dynamicShape,
  type FlowLanguage,
  joinShapes,
  resolutionWork,
  type ValueShape,
} from './types';

/** Deeper than this, a value counts as dynamic (long chains are not worth following). */
const MAX_DEPTH = 20;
const ALL_CAPS = /^[A-Z][A-Z0-9_]*$/;
/** The text a number stands as in a shape: what matters is that it carries no quotes or words. */
const NUMBER_TEXT = '0';

/** Calls whose result is its first argument's text, transformed: constant when every argument is. */
const PURE_STRING_HELPERS = new Set(
  [
    'ToLower',
    'ToUpper',
    'ToTitle',
    'Title',
    'TrimSpace',
    'Trim',
    'TrimLeft',
    'TrimRight',
    'TrimPrefix',
    'TrimSuffix',
    'Replace',
    'ReplaceAll',
  ].map((f) => `strings.${f}`),
);
/** Calls that print a number (or a bool) as text. */
const NUMBER_FORMATTERS = new Set(
  ['Itoa', 'FormatInt', 'FormatUint', 'FormatFloat', 'FormatBool'].map((f) => `strconv.${f}`),
);
/** Conversions to these builtin types read as calls (`string(b)`); they keep the value. */
const STRING_TYPES = new Set(['string']);
const NUMBER_TYPES = new Set([
  'int',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'uintptr',
  'float32',
  'float64',
  'bool',
]);
/** fmt verbs that print digits (or `true`/`false`, a type name, a pointer): no text of the caller's choosing. */
const NUMBER_VERBS = new Set([
  'd',
  'b',
  'o',
  'O',
  'x',
  'X',
  'e',
  'E',
  'f',
  'F',
  'g',
  'G',
  't',
  'p',
  'U',
  'T',
]);
const BUILDER_TYPES = /^(?:strings\.Builder|bytes\.Buffer)$/;

interface Walk {
  depth: number;
  /** `<scope id>:<name>` pairs being resolved: a name met again inside its own value adds nothing. */
  resolving: Set<string>;
  /** What is known about the parse, shared by every question about it. */
  memo: ParseMemo;
  /**
   * Cycles met and depth limits hit so far (one counter for the whole walk): a variable resolved
   * without one has the same shape wherever it is asked from, so the parse remembers it.
   */
  cutoffs: { count: number };
  /** Parameters the value was found to depend on: what callers pass there reaches it (./go-callers.ts). */
  parameters: ParameterRef[];
  /** The innermost expressions found not constant: where the value's data comes in (`sourcesOf`). */
  sources: SgNode[];
}

/** Sources remembered with one variable: enough to find a changed line among them. */
const MAX_SOURCES = 16;
/** Expressions that can be where data comes in (not the operators that join it). */
const SOURCE_KINDS = new Set([
  'call_expression',
  'selector_expression',
  'index_expression',
  'slice_expression',
  'identifier',
  'type_assertion_expression',
]);

/** A function's parameter a value depends on: `script` of `func run(script string) { exec... }`. */
export interface ParameterRef {
  /** The function (declaration, method or literal) whose parameter it is. */
  fn: SgNode;
  name: string;
}

const walkFor = (parse: object | undefined): Walk => ({
  depth: 0,
  resolving: new Set(),
  memo: memoFor(parse),
  cutoffs: { count: 0 },
  parameters: [],
  sources: [],
});

/**
 * The value's shape and the parameters of its functions it depends on, each once: with
 * `func run(script string) { exec.Command("sh", "-c", "set -e; "+script) }` the sink's script is
 * not constant because of `script`, so what callers pass as `script` reaches it.
 */
export function shapeWithParameters(
  node: SgNode,
  parse?: object,
): { shape: ValueShape; parameters: ParameterRef[] } {
  const walk = walkFor(parse);
  const shape = shapeOf(node, walk);
  return { shape, parameters: uniqueParameters(walk.parameters) };
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
 * Where the non-constant parts of `node`'s value come in: the innermost expressions found not
 * constant (a request read, a call's result, a parameter), in the sink's function and the
 * variables it reads (FlowLanguage.sourcesOf). A change that edits one of their lines changed
 * what reaches the sink, though the sink's own line is untouched.
 */
function sourcesOf(node: SgNode, parse?: object): SgNode[] {
  const walk = walkFor(parse);
  shapeOf(node, walk);
  const seen = new Set<number>();
  return walk.sources.filter((s) => !seen.has(s.id()) && seen.add(s.id()));
}

export const goFlow: FlowLanguage = {
  shapeOf: (node: SgNode, parse?: object) => shapeOf(node, walkFor(parse)),
  sourcesOf,
  callersReaching: (value: SgNode, parse?: object) => callersReaching(value, parse),
  prepare: (root: SgNode, parse: object, yieldNow: () => boolean) =>
    prepareIndex(root, memoFor(parse), yieldNow),
  boundBy: (node: SgNode, callees: ReadonlySet<string>, parse?: object) =>
    boundBy(node, callees, memoFor(parse)),
};

function shapeOf(node: SgNode, walk: Walk): ValueShape {
  const before = walk.sources.length;
  const shape = shapeOfNode(node, walk);
  // Not constant, and nothing inside it was: this is where the data comes in.
  if (!shape.constant && walk.sources.length === before && SOURCE_KINDS.has(String(node.kind())))
    walk.sources.push(node);
  return shape;
}

function shapeOfNode(node: SgNode, walk: Walk): ValueShape {
  if (walk.depth > MAX_DEPTH) {
    walk.cutoffs.count++;
    return dynamicShape();
  }
  const next = { ...walk, depth: walk.depth + 1 };
  switch (node.kind()) {
    case 'interpreted_string_literal':
      return constantShape(decodeEscapes(node.text().slice(1, -1)));
    case 'raw_string_literal':
      return constantShape(node.text().slice(1, -1).replace(/\r/g, ''));
    case 'rune_literal':
      return constantShape(decodeEscapes(node.text().slice(1, -1)));
    case 'int_literal':
    case 'float_literal':
    case 'imaginary_literal':
    case 'true':
    case 'false':
    case 'nil':
    case 'iota':
      return constantShape(node.text());
    case 'parenthesized_expression':
    case 'literal_element':
    case 'type_conversion_expression':
    case 'type_assertion_expression':
      return operandShape(node, next);
    case 'unary_expression':
      return unaryShape(node, next);
    case 'binary_expression':
      return binaryShape(node, next);
    case 'call_expression':
      return callShape(node, next);
    case 'composite_literal':
      return joinElements(elementsOf(node), ', ', next);
    case 'identifier':
      return resolveName(node, next);
    case 'selector_expression': {
      const field = node.field('field')?.text() ?? '';
      return ALL_CAPS.test(field) ? constantShape(node.text()) : dynamicShape();
    }
    default:
      return dynamicShape();
  }
}

/** The expression inside parentheses, a slice element, a conversion (`[]byte(s)`) or an assertion (`v.(string)`). */
function operandShape(node: SgNode, walk: Walk): ValueShape {
  const inner = node.field('operand') ?? node.namedChildren()[0];
  return inner ? shapeOf(inner, walk) : dynamicShape();
}

function unaryShape(node: SgNode, walk: Walk): ValueShape {
  const operator = node.field('operator')?.text();
  const operand = node.field('operand');
  if (!operand || !['-', '+', '!', '^'].includes(operator ?? '')) return dynamicShape();
  const inner = shapeOf(operand, walk);
  return inner.constant ? constantShape(node.text()) : inner;
}

function binaryShape(node: SgNode, walk: Walk): ValueShape {
  const left = node.field('left');
  const right = node.field('right');
  if (!left || !right) return dynamicShape();
  const parts = [shapeOf(left, walk), shapeOf(right, walk)];
  if (node.field('operator')?.text() === '+') return joinShapes(parts);
  // Arithmetic and comparisons: constant operands give a constant; its text is not a string's.
  return parts.every((p) => p.constant) ? constantShape(node.text()) : dynamicShape();
}

// ---------------------------------------------------------------------------------------------
// Calls

/** `pkg.Func` or `Func` for a call's function, null for anything more complex. */
function calleeName(fn: SgNode): string | null {
  if (fn.kind() === 'identifier') return fn.text();
  if (fn.kind() !== 'selector_expression') return null;
  const operand = fn.field('operand');
  const field = fn.field('field');
  if (!operand || !field || operand.kind() !== 'identifier') return null;
  return `${operand.text()}.${field.text()}`;
}

function argumentsOf(call: SgNode): SgNode[] {
  return call.field('arguments')?.namedChildren() ?? [];
}

function callShape(call: SgNode, walk: Walk): ValueShape {
  const fn = call.field('function');
  if (!fn) return dynamicShape();
  const args = argumentsOf(call);
  const name = calleeName(fn);
  const spread = args.some((a) => a.kind() === 'variadic_argument');

  if (name && STRING_TYPES.has(name) && args.length === 1) return shapeOf(args[0] as SgNode, walk);
  if (name && NUMBER_TYPES.has(name) && args.length === 1) return constantShape(NUMBER_TEXT);
  if (name && NUMBER_FORMATTERS.has(name)) return constantShape(NUMBER_TEXT);
  if (name === 'append') return joinElements(args, ', ', walk);
  if (spread) return dynamicShape();
  switch (name) {
    case 'fmt.Sprintf':
      return args[0] ? formatShape(args[0], args.slice(1), walk) : dynamicShape();
    case 'fmt.Sprint':
      return joinShapes(args.map((a) => shapeOf(a, walk)));
    case 'fmt.Sprintln':
      return joinElements(args, ' ', walk);
    case 'strings.Join':
      return args[0] && args[1] ? joinList(args[0], args[1], walk) : dynamicShape();
    case 'strings.Repeat':
      // `strings.Repeat("?, ", len(ids))`: the count changes how often, never what.
      return args[0] ? shapeOf(args[0], walk) : dynamicShape();
    case 'path.Join':
    case 'filepath.Join':
      return joinElements(args, '/', walk);
  }
  if (name && PURE_STRING_HELPERS.has(name)) {
    const shapes = args.map((a) => shapeOf(a, walk));
    const first = shapes[0]?.text ?? '';
    const text =
      name === 'strings.ToLower'
        ? first.toLowerCase()
        : name === 'strings.ToUpper'
          ? first.toUpperCase()
          : first;
    return { constant: shapes.every((s) => s.constant), text };
  }
  if (fn.kind() === 'identifier') {
    const local = functionNamed(fn.text(), fn, walk.memo);
    if (local) return returnedShape(local, walk);
  }
  if (fn.kind() === 'selector_expression') {
    const method = fn.field('field')?.text();
    const receiver = fn.field('operand');
    // sqlx `db.Rebind(q)` / `sqlx.Rebind(bindType, q)` only rewrites `?` placeholders.
    if (method === 'Rebind' && args.length >= 1) return shapeOf(args[args.length - 1] as SgNode, walk);
    if (method === 'String' && args.length === 0 && receiver?.kind() === 'identifier')
      return builderShape(receiver, walk);
  }
  return dynamicShape();
}

/**
 * A call of a function this file declares: what its `return` statements give (their first
 * value), constant when every one is, whatever the arguments, since a parameter is dynamic
 * there. So `exec.Command("sh", "-c", cleanupScript())` over `return "rm -rf /tmp/x"` is
 * constant. The helper's own parameters are not the caller's: they are not recorded for
 * `callersReaching`. Followed at any depth; a recursive call adds nothing.
 */
function returnedShape(helper: SgNode, walk: Walk): ValueShape {
  const key = `returns:${helper.id()}`;
  if (walk.resolving.has(key)) {
    walk.cutoffs.count++;
    return constantShape('');
  }
  return remembered(key, walk, () => {
    const inner: Walk = { ...walk, resolving: new Set(walk.resolving).add(key), parameters: [] };
    const shapes: ValueShape[] = [];
    for (const statement of returnsOf(helper, walk.memo)) {
      const value = statement.namedChildren()[0]?.namedChildren()[0];
      // A bare `return` of named results: what they hold is not followed.
      if (!value) return dynamicShape();
      shapes.push(shapeOf(value, inner));
    }
    if (shapes.length === 0) return dynamicShape();
    return { constant: shapes.every((x) => x.constant), text: (shapes[0] as ValueShape).text };
  });
}

/**
 * `fmt.Sprintf(format, args...)`: the format's text with each verb replaced by its argument's
 * shape (numeric verbs by a number). A format that is not constant makes the result dynamic.
 */
function formatShape(format: SgNode, args: SgNode[], walk: Walk): ValueShape {
  const fmtShape = shapeOf(format, walk);
  if (!fmtShape.constant) return dynamicShape(fmtShape.text);
  const parts: ValueShape[] = [];
  const used = new Set<number>();
  let argIndex = 0;
  let last = 0;
  const verb = /%([-+# 0]*)(?:\[(\d+)\])?(\*|\d+)?(?:\.(\*|\d+)?)?(?:\[(\d+)\])?([a-zA-Z%])/g;
  const take = (explicit: string | undefined): SgNode | undefined => {
    if (explicit) argIndex = Number(explicit) - 1;
    used.add(argIndex);
    return args[argIndex++];
  };
  for (const m of fmtShape.text.matchAll(verb)) {
    parts.push(constantShape(fmtShape.text.slice(last, m.index)));
    last = (m.index ?? 0) + m[0].length;
    const letter = m[6] as string;
    if (letter === '%') {
      parts.push(constantShape('%'));
      continue;
    }
    if (m[3] === '*') take(m[2]);
    if (m[4] === '*') take(undefined);
    const arg = take(m[5] ?? (m[3] === '*' ? undefined : m[2]));
    if (!arg) parts.push(constantShape(''));
    else if (NUMBER_VERBS.has(letter)) parts.push(constantShape(NUMBER_TEXT));
    else parts.push(shapeOf(arg, walk));
  }
  parts.push(constantShape(fmtShape.text.slice(last)));
  // Arguments no verb consumes are still printed (`%!(EXTRA …)`).
  args.forEach((a, i) => {
    if (!used.has(i)) parts.push(shapeOf(a, walk));
  });
  return joinShapes(parts);
}

/** `strings.Join(list, sep)`: the list's elements joined with the separator. */
function joinList(list: SgNode, separator: SgNode, walk: Walk): ValueShape {
  const sep = shapeOf(separator, walk);
  const listShape =
    list.kind() === 'composite_literal'
      ? joinElements(elementsOf(list), sep.text, walk)
      : shapeOf(list, walk);
  return { constant: listShape.constant && sep.constant, text: listShape.text };
}

function joinElements(nodes: SgNode[], separator: string, walk: Walk): ValueShape {
  const shapes = nodes.map((n) =>
    n.kind() === 'variadic_argument' && n.namedChildren()[0]
      ? shapeOf(n.namedChildren()[0] as SgNode, walk)
      : shapeOf(n, walk),
  );
  return { constant: shapes.every((s) => s.constant), text: shapes.map((s) => s.text).join(separator) };
}

/** The values of a composite literal (`[]string{"a", "b"}`, `T{Name: v}`). */
function elementsOf(literal: SgNode): SgNode[] {
  const body = literal.field('body');
  if (!body) return [];
  const out: SgNode[] = [];
  for (const element of body.namedChildren()) {
    const value = element.kind() === 'keyed_element' ? element.field('value') : element;
    const inner = value?.kind() === 'literal_element' ? value.namedChildren()[0] : value;
    if (inner) out.push(inner);
  }
  return out;
}

/**
 * `sb.String()` for a `strings.Builder`/`bytes.Buffer` declared in the function: the join of
 * everything written to it, in order. Any other use of the builder (passed to a function, a
 * template writing into it) makes it dynamic.
 */
function builderShape(receiver: SgNode, walk: Walk): ValueShape {
  const name = receiver.text();
  const names = nameIndex(name, receiver, walk.memo);
  const scope = declaringScope(receiver, names);
  if (!scope || scope.kind() === 'source_file') return dynamicShape();
  const key = `${scope.id()}:${name}`;
  if (walk.resolving.has(key)) {
    walk.cutoffs.count++;
    return constantShape('');
  }
  // The receiver's own `.String()` is neutral like every other: the answer is the builder's, whichever call asks.
  return remembered(`builder:${key}`, walk, () => {
    const resolving = new Set(walk.resolving).add(key);
    const inner = { ...walk, resolving };
    let declared = false;
    const parts: ValueShape[] = [];
    for (const { occurrence, role } of occurrencesWithin(scope, names)) {
      if (occurrence.id() === receiver.id()) continue;
      if (role.kind === 'declare' || role.kind === 'assign') {
        if (!isEmptyBuilder(role)) return dynamicShape();
        declared = true;
        continue;
      }
      const write = builderWrite(occurrence, inner);
      if (write === 'neutral') continue;
      if (write === null) return dynamicShape();
      parts.push(write);
    }
    return declared ? joinShapes(parts) : dynamicShape();
  });
}

/**
 * `compute`'s answer for the variable `key`, remembered for the parse when it met no cycle and
 * no depth limit: it is then the same wherever the question comes from, at that depth or shallower.
 */
function remembered(key: string, walk: Walk, compute: () => ValueShape): ValueShape {
  const known = walk.memo.resolved.get(key);
  if (known && walk.depth <= known.depth) {
    walk.parameters.push(...known.parameters);
    walk.sources.push(...known.sources);
    return known.shape;
  }
  const cutoffsBefore = walk.cutoffs.count;
  const parametersBefore = walk.parameters.length;
  const sourcesBefore = walk.sources.length;
  const shape = compute();
  if (walk.cutoffs.count === cutoffsBefore)
    walk.memo.resolved.set(key, {
      shape,
      depth: walk.depth,
      // Once each: a variable written a thousand times from one parameter depends on it once.
      parameters: uniqueParameters(walk.parameters.slice(parametersBefore)),
      sources: walk.sources.slice(sourcesBefore, sourcesBefore + MAX_SOURCES),
    });
  return shape;
}

function isEmptyBuilder(role: Role): boolean {
  if (role.kind !== 'declare' && role.kind !== 'assign') return false;
  if (role.value === null)
    return role.type !== null && BUILDER_TYPES.test(role.type.text().replace(/^\*/, ''));
  const value = role.value.kind() === 'unary_expression' ? role.value.field('operand') : role.value;
  if (!value) return false;
  if (value.kind() === 'composite_literal')
    return BUILDER_TYPES.test(value.field('type')?.text() ?? '') && elementsOf(value).length === 0;
  if (value.kind() === 'call_expression' && value.field('function')?.text() === 'new')
    return BUILDER_TYPES.test(argumentsOf(value)[0]?.text() ?? '');
  return false;
}

/** What one occurrence of a builder does: a write (its shape), nothing to the content, or anything else (null). */
function builderWrite(occurrence: SgNode, walk: Walk): ValueShape | 'neutral' | null {
  const parent = occurrence.parent();
  if (parent?.kind() === 'selector_expression' && parent.field('operand')?.id() === occurrence.id()) {
    const call = parent.parent();
    const method = parent.field('field')?.text() ?? '';
    if (call?.kind() !== 'call_expression') return null;
    const args = argumentsOf(call);
    if (['String', 'Len', 'Cap', 'Grow'].includes(method)) return 'neutral';
    if (['WriteString', 'WriteByte', 'WriteRune', 'Write'].includes(method) && args[0])
      return shapeOf(args[0], walk);
    return null;
  }
  // fmt.Fprintf(&sb, format, args...) / fmt.Fprint(&sb, ...)
  const target = parent?.kind() === 'unary_expression' ? parent : occurrence;
  const list = target.parent();
  const call = list?.parent();
  if (list?.kind() !== 'argument_list' || call?.kind() !== 'call_expression') return null;
  const args = argumentsOf(call);
  if (args[0]?.id() !== target.id()) return null;
  const fn = call.field('function');
  const name = fn ? calleeName(fn) : null;
  if (args.slice(1).some((a) => a.kind() === 'variadic_argument')) return null;
  if (name === 'fmt.Fprintf' && args[1]) return formatShape(args[1], args.slice(2), walk);
  if (name === 'fmt.Fprint') return joinShapes(args.slice(1).map((a) => shapeOf(a, walk)));
  if (name === 'fmt.Fprintln') return joinElements(args.slice(1), ' ', walk);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Names

function resolveName(use: SgNode, walk: Walk): ValueShape {
  const name = use.text();
  if (name === '_') return dynamicShape();
  const names = nameIndex(name, use, walk.memo);
  const scope = declaringScope(use, names);
  if (!scope) return dynamicShape();
  const key = `${scope.id()}:${name}`;
  // `q = q + " AND x"`: the name inside its own value adds nothing the other assignments do not.
  if (walk.resolving.has(key)) {
    walk.cutoffs.count++;
    return constantShape('');
  }
  return remembered(key, walk, () => {
    const resolving = new Set(walk.resolving).add(key);
    // Writes by a nested function that declares its own `name` are another variable's: not here.
    const roles = writesIn(scope, names);
    if (scope.kind() === 'source_file' && !roles.some((r) => r.kind === 'declare'))
      return ALL_CAPS.test(name) ? constantShape(name) : dynamicShape();
    if (roles.some((r) => r.kind === 'parameter')) walk.parameters.push({ fn: scope, name });
    return combine(roles, { ...walk, resolving });
  });
}

/**
 * Whether the variable `use` reads is bound, anywhere in the scope that declares it, from a call
 * to one of `callees`: `git, err := exec.LookPath("git")`, `git, err = exec.LookPath("git")`,
 * `editor := os.Getenv("EDITOR")`, `var self, _ = os.Executable()`, whatever else is assigned to
 * it. The scopes binding a name so are found once per name and parse (one pass over the name's
 * writes), so each question costs a walk up the functions around `use`.
 */
function boundBy(use: SgNode, callees: ReadonlySet<string>, memo: ParseMemo): boolean {
  if (use.kind() !== 'identifier') return false;
  const name = use.text();
  if (name === '_') return false;
  const names = nameIndex(name, use, memo);
  const scope = declaringScope(use, names);
  if (!scope) return false;
  const key = `${[...callees].join(',')}\n${name}`;
  let scopes = memo.boundBy.get(key);
  if (!scopes) {
    const found = new Set<number>();
    names.occurrences.forEach((occurrence, i) => {
      const role = names.roles[i] as Role;
      if (role.kind !== 'declare' && role.kind !== 'assign') return;
      resolutionWork.visits++;
      const fn = producingCall(occurrence)?.field('function');
      const callee = fn ? calleeName(fn) : null;
      if (callee === null || !callees.has(callee)) return;
      const owner = ownerScope(occurrence, role, names);
      if (owner) found.add(owner.id());
    });
    scopes = found;
    memo.boundBy.set(key, scopes);
  }
  return scopes.has(scope.id());
}

/**
 * The call whose (first) result an `x := f()`, `x, err = f()` or `var x, y = f()` binds to the
 * name at `occurrence` (the value paired with it, or the one call of several results for the
 * first name), or null.
 */
function producingCall(occurrence: SgNode): SgNode | null {
  const parent = occurrence.parent();
  let lefts: SgNode[];
  let rights: SgNode[];
  if (parent?.kind() === 'expression_list') {
    const statement = parent.parent();
    if (statement?.field('left')?.id() !== parent.id()) return null;
    if (statement.kind() === 'assignment_statement') {
      if (statement.field('operator')?.text() !== '=') return null;
    } else if (statement.kind() !== 'short_var_declaration') return null;
    lefts = parent.namedChildren();
    rights = statement.field('right')?.namedChildren() ?? [];
  } else if (parent?.kind() === 'var_spec') {
    lefts = parent.children().filter((c) => c.kind() === 'identifier');
    rights = parent.field('value')?.namedChildren() ?? [];
  } else return null;
  const index = lefts.findIndex((n) => n.id() === occurrence.id());
  if (index < 0) return null;
  const value =
    rights.length === lefts.length
      ? rights[index]
      : rights.length === 1 && index === 0
        ? rights[0]
        : undefined;
  return value?.kind() === 'call_expression' ? value : null;
}

/** Constant when every assignment is; text: the first value's text plus what `+=` appends. */
function combine(roles: Role[], walk: Walk): ValueShape {
  let constant = true;
  let base: string | null = null;
  const appended: string[] = [];
  for (const role of roles) {
    resolutionWork.visits++;
    if (role.kind === 'parameter' || role.kind === 'escape') return dynamicShape();
    if (role.kind !== 'declare' && role.kind !== 'assign') continue;
    if (role.dynamic) return dynamicShape();
    if (role.value === null) continue;
    const shape = shapeOf(role.value, walk);
    constant &&= shape.constant;
    if (role.kind === 'assign' && role.append) appended.push(shape.text);
    else base ??= shape.text;
  }
  const text = (base ?? '') + appended.join('');
  return constant ? constantShape(text) : dynamicShape(text || DYNAMIC);
}

/** Go's escapes in interpreted strings and runes (`\n`, `\"`, `\x41`, `\u00e9`, `\101`). */
function decodeEscapes(body: string): string {
  const simple: Record<string, string> = {
    a: '\u0007',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
  };
  return body.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/g,
    (whole, e: string) => {
      if (e.length === 1) return simple[e] ?? whole;
      const code =
        e[0] === 'x' || e[0] === 'u' || e[0] === 'U'
          ? Number.parseInt(e.slice(1), 16)
          : Number.parseInt(e, 8);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}
