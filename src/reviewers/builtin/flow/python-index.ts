/**
 * Where each name of a Python file is bound, found once per parse (flow/python.ts asks): a file
 * with thousands of sinks asks about the same names and scopes thousands of times, and searching
 * a scope for a name at each question made the analysis quadratic in its sinks.
 *
 * One search of the file (sliced, in `prepare`) indexes its identifiers by name and its `def`s by
 * the scope they sit in; a name's bindings are then classified once and grouped by the scope that
 * owns them. Without `prepare` (a single question, as in tests) the same is made on first use.
 */
import type { SgNode } from '@ast-grep/napi';
import type { Steps } from '../../../core/cooperative';
import { findAllSliced } from '../find-sliced';
import { resolutionWork, type ValueShape } from './types';

/** Nodes that open a name scope. Comprehensions are handled where their loop variable is used. */
export const SCOPES = new Set(['function_definition', 'lambda', 'class_definition', 'module']);
const DESTRUCTURING = new Set(['pattern_list', 'tuple_pattern', 'list_pattern', 'list_splat_pattern']);
/** Methods that put their arguments into the list, dict or set they are called on. */
const MUTATORS = new Set(['append', 'extend', 'insert', 'update', 'add', 'setdefault', '__setitem__']);

export type Binding =
  | { kind: 'value'; value: SgNode }
  | { kind: 'augmented'; value: SgNode; operator: string }
  | { kind: 'loop'; iterable: SgNode }
  /** `parts.append(x)`, `opts["k"] = x`: what goes into the container becomes part of it. */
  | { kind: 'mutation'; values: SgNode[] }
  /** A target unpacked from `value`: constant when all of `value` is, otherwise dynamic. */
  | { kind: 'unpacked'; value: SgNode }
  | { kind: 'dynamic' }
  | { kind: 'global' };

/** A function's parameter a value depends on: `cmd` of `def run(cmd): os.system(cmd)`. */
export interface ParameterRef {
  /** The `def` (or lambda) whose parameter it is. */
  fn: SgNode;
  name: string;
}

/** What one parse is known to say, kept for as long as the parse is. */
export interface ParseMemo {
  /** Identifier nodes by name, from one search of the file; null until made. */
  identifiers: Map<string, SgNode[]> | null;
  /** The first `def` of each name in each scope, by `<scope id>:<name>`; null until made. */
  functions: Map<string, SgNode> | null;
  /** Each name's bindings by the id of the scope that owns them, in source order. */
  bindings: Map<string, Map<number, Binding[]>>;
  /** A helper's own `return` statements (not those of functions nested in it), by the helper's id. */
  returns: Map<number, SgNode[]>;
  /**
   * Shapes of names (`<scope id>:<name>`) resolved without meeting a cutoff, with the hops and
   * nesting they were resolved at: the same answer holds from there or shallower.
   */
  resolved: Map<string, { shape: ValueShape; hops: number; nesting: number; parameters: ParameterRef[] }>;
  /** Facts about the file's calls, kept by ./python-callers.ts; null until asked. */
  callers: unknown;
}

const memoByParse = new WeakMap<object, ParseMemo>();

/** The memo of `parse`; without one, a memo for a single question. */
export function memoFor(parse: object | undefined): ParseMemo {
  let memo = parse ? memoByParse.get(parse) : undefined;
  if (!memo) {
    memo = {
      identifiers: null,
      functions: null,
      bindings: new Map(),
      returns: new Map(),
      resolved: new Map(),
      callers: null,
    };
    if (parse) memoByParse.set(parse, memo);
  }
  return memo;
}

const INDEX_RULE = { rule: { any: [{ kind: 'identifier' }, { kind: 'function_definition' }] } };

/** Indexes the file's identifiers and `def`s in one search, yielding when `yieldNow` says so. */
export function* prepareIndex(root: SgNode, memo: ParseMemo, yieldNow: () => boolean): Steps<void> {
  if (memo.identifiers && memo.functions) return;
  const found = yield* findAllSliced(root, INDEX_RULE, yieldNow);
  const identifiers = new Map<string, SgNode[]>();
  const definitions: SgNode[] = [];
  for (const [i, node] of found.entries()) {
    resolutionWork.visits++;
    if (node.kind() === 'function_definition') definitions.push(node);
    else {
      const name = node.text();
      const list = identifiers.get(name);
      if (list) list.push(node);
      else identifiers.set(name, [node]);
    }
    if (i % 1000 === 999 && yieldNow()) yield;
  }
  memo.identifiers = identifiers;
  memo.functions = functionsByScope(definitions);
}

export const innermostScope = (node: SgNode): SgNode | null =>
  node.ancestors().find((a) => SCOPES.has(String(a.kind()))) ?? null;

/** `def`s by `<scope id>:<name>`, the first of each in source order (as a search finds it). */
function functionsByScope(definitions: SgNode[]): Map<string, SgNode> {
  const functions = new Map<string, SgNode>();
  for (const definition of definitions) {
    resolutionWork.visits++;
    const name = definition.field('name')?.text();
    const scope = innermostScope(definition);
    if (!name || !scope) continue;
    const key = `${scope.id()}:${name}`;
    if (!functions.has(key)) functions.set(key, definition);
  }
  return functions;
}

export function identifiersNamed(name: string, from: SgNode, memo: ParseMemo): SgNode[] {
  if (memo.identifiers) return memo.identifiers.get(name) ?? [];
  // Not prepared: search the file for this one name (a Python identifier needs no escaping).
  return from
    .getRoot()
    .root()
    .findAll({ rule: { kind: 'identifier', regex: `^${name}$` } });
}

/** Every binding of `name` whose scope is `scope`, in source order. */
export function bindingsOf(scope: SgNode, name: string, memo: ParseMemo): Binding[] {
  let byScope = memo.bindings.get(name);
  if (!byScope) {
    byScope = new Map();
    for (const id of identifiersNamed(name, scope, memo)) {
      resolutionWork.visits++;
      const binding = bindingAt(id);
      const owner = binding && innermostScope(id);
      if (!binding || !owner) continue;
      const list = byScope.get(owner.id());
      if (list) list.push(binding);
      else byScope.set(owner.id(), [binding]);
    }
    memo.bindings.set(name, byScope);
  }
  return byScope.get(scope.id()) ?? [];
}

/** The scope a name used in `scope` falls back to: the next enclosing one, skipping class bodies. */
export function outerScope(scope: SgNode): SgNode | null {
  for (const a of scope.ancestors()) {
    if (a.kind() === 'class_definition') continue;
    if (SCOPES.has(String(a.kind()))) return a;
  }
  return null;
}

/** The `def name` visible from `node`: in its own scope or an enclosing one, nearest first. */
export function localFunction(node: SgNode, name: string, memo: ParseMemo): SgNode | null {
  if (!memo.functions)
    memo.functions = functionsByScope(
      node
        .getRoot()
        .root()
        .findAll({ rule: { kind: 'function_definition' } }),
    );
  // A `def` belongs to the scope it sits in (innermostScope looks at its ancestors only).
  for (let scope = innermostScope(node); scope; scope = outerScope(scope)) {
    resolutionWork.visits++;
    const found = memo.functions.get(`${scope.id()}:${name}`);
    if (found) return found;
  }
  return null;
}

/** The `return` statements of `helper` itself, searched once per parse. */
export function returnsOf(helper: SgNode, memo: ParseMemo): SgNode[] {
  let returns = memo.returns.get(helper.id());
  if (!returns) {
    returns = helper
      .findAll({ rule: { kind: 'return_statement' } })
      .filter((r) => innermostScope(r)?.id() === helper.id());
    memo.returns.set(helper.id(), returns);
  }
  return returns;
}

/** A call's arguments (positional, keyword and splats); `f(x for x in y)` has one. */
export function callArguments(call: SgNode): SgNode[] | null {
  const args = call.field('arguments');
  if (args?.kind() === 'generator_expression') return [args];
  if (args?.kind() !== 'argument_list') return null;
  return args.namedChildren().filter((a) => a.kind() !== 'comment');
}

/** `name.append(x)` and the other mutators: a binding of the container's contents. */
function mutationAt(attribute: SgNode): Binding | null {
  const call = attribute.parent();
  const method = attribute.field('attribute')?.text() ?? '';
  if (!MUTATORS.has(method) || call?.kind() !== 'call' || call.field('function')?.id() !== attribute.id())
    return null;
  return { kind: 'mutation', values: callArguments(call) ?? [] };
}

/** The binding `id` makes, or null when it is a use of the name. */
function bindingAt(id: SgNode): Binding | null {
  const parent = id.parent();
  if (!parent) return null;
  const isField = (node: SgNode, field: string) => node.field(field)?.id() === id.id();
  switch (parent.kind()) {
    case 'assignment': {
      if (!isField(parent, 'left')) return null;
      let value = parent.field('right');
      while (value?.kind() === 'assignment') value = value.field('right');
      // `x: str` declares a type and binds nothing.
      return value ? { kind: 'value', value } : null;
    }
    case 'augmented_assignment': {
      const value = parent.field('right');
      if (!isField(parent, 'left') || !value) return null;
      return { kind: 'augmented', value, operator: parent.field('operator')?.text() ?? '' };
    }
    case 'for_statement': {
      const iterable = parent.field('right');
      return isField(parent, 'left') && iterable ? { kind: 'loop', iterable } : null;
    }
    case 'named_expression': {
      const value = parent.field('value');
      return isField(parent, 'name') && value ? { kind: 'value', value } : null;
    }
    case 'global_statement':
    case 'nonlocal_statement':
      return { kind: 'global' };
    case 'attribute':
      return mutationAt(parent);
    case 'subscript': {
      // `opts[key] = value`
      const owner = parent.parent();
      const value = owner?.field('right');
      if (!isField(parent, 'value') || owner?.kind() !== 'assignment' || !value) return null;
      return owner.field('left')?.id() === parent.id() ? { kind: 'mutation', values: [value] } : null;
    }
    case 'as_pattern_target':
      return { kind: 'dynamic' };
    case 'dotted_name':
      // `case Point(x=name)` / `case {"k": name}` capture a value.
      return parent.parent()?.kind() === 'case_pattern' ? { kind: 'dynamic' } : null;
    default:
      break;
  }
  if (DESTRUCTURING.has(String(parent.kind()))) {
    // `a, b = pair` / `for k, v in items`: destructured targets are not followed.
    let top = parent;
    while (top.parent() && DESTRUCTURING.has(String(top.parent()?.kind() ?? '')))
      top = top.parent() as SgNode;
    const owner = top.parent();
    if (owner && ['assignment', 'for_statement', 'augmented_assignment'].includes(String(owner.kind()))) {
      if (owner.field('left')?.id() !== top.id()) return null;
      // `fd, path = tempfile.mkstemp()`: every part of a constant value is constant.
      const value = owner.kind() === 'assignment' ? owner.field('right') : null;
      return value ? { kind: 'unpacked', value } : { kind: 'dynamic' };
    }
  }
  return null;
}
