/**
 * Where each name of a Go file is declared and written, found once per parse (flow/go.ts asks):
 * a file with thousands of sinks asks about the same names thousands of times, and searching a
 * function or the whole file for a name at each question made the analysis quadratic in its
 * sinks (a package-level name searched the file once per sink).
 *
 * One search of the file (sliced, in `prepare`) indexes its identifiers by name; a name's
 * occurrences are then classified once (their role), with the functions that declare it and
 * its writes grouped by the scope (function or file) whose variable they write. Without
 * `prepare` (a single question, as in tests) the same is made on first use.
 */
import type { SgNode } from '@ast-grep/napi';
import type { Steps } from '../../../core/cooperative';
import { findAllSliced } from '../find-sliced';
import { resolutionWork, type ValueShape } from './types';

export const FUNCTION_KINDS = new Set(['function_declaration', 'method_declaration', 'func_literal']);

export type Role =
  | { kind: 'parameter' }
  /** `x := v`, `var x T = v`, `const x = v`; `value` null: the zero value (or `iota` repeated). */
  | { kind: 'declare'; value: SgNode | null; type: SgNode | null; dynamic: boolean }
  | { kind: 'assign'; value: SgNode | null; type: null; dynamic: boolean; append: boolean }
  /** `&x`: the variable may be written through the pointer. */
  | { kind: 'escape' }
  | { kind: 'use' };

/** A name's occurrences in the file, in source order, each with its role. */
export interface NameIndex {
  occurrences: SgNode[];
  /** The role of each occurrence, by its place in `occurrences`. */
  roles: Role[];
  /** Ids of the functions whose own parameters, results or body declare the name. */
  declaringFunctions: Set<number>;
  /** The roles that write or bind the name, by the id of the scope whose variable they are; made on first use. */
  writes: Map<number, Role[]> | null;
}

/** What one parse is known to say, kept for as long as the parse is. */
export interface ParseMemo {
  /** Identifier nodes by name, from one search of the file; null until made. */
  identifiers: Map<string, SgNode[]> | null;
  names: Map<string, NameIndex>;
  /**
   * Shapes of variables (`<scope id>:<name>`, and builders under `builder:`) resolved without a
   * cycle or the depth limit, with the depth they were resolved at: the answer holds from there
   * or shallower.
   */
  resolved: Map<
    string,
    { shape: ValueShape; depth: number; parameters: { fn: SgNode; name: string }[]; sources: SgNode[] }
  >;
  /**
   * For `<callees>\n<name>`: the ids of the scopes whose variable `name` is bound from a call to
   * one of the callees (flow/go.ts `boundBy`).
   */
  boundBy: Map<string, Set<number>>;
  /** The file's function declarations by name, from one search; null until made. */
  functions: Map<string, SgNode[]> | null;
  /** A function's own `return` statements (not those of closures in it), by its id. */
  returns: Map<number, SgNode[]>;
}

const memoByParse = new WeakMap<object, ParseMemo>();

/** The memo of `parse`; without one, a memo for a single question. */
export function memoFor(parse: object | undefined): ParseMemo {
  let memo = parse ? memoByParse.get(parse) : undefined;
  if (!memo) {
    memo = {
      identifiers: null,
      names: new Map(),
      resolved: new Map(),
      boundBy: new Map(),
      functions: null,
      returns: new Map(),
    };
    if (parse) memoByParse.set(parse, memo);
  }
  return memo;
}

const IDENTIFIER_RULE = { rule: { kind: 'identifier' } };

/** Indexes the file's identifiers by name in one search, yielding when `yieldNow` says so. */
export function* prepareIndex(root: SgNode, memo: ParseMemo, yieldNow: () => boolean): Steps<void> {
  if (memo.identifiers) return;
  const found = yield* findAllSliced(root, IDENTIFIER_RULE, yieldNow);
  const identifiers = new Map<string, SgNode[]>();
  for (const [i, node] of found.entries()) {
    resolutionWork.visits++;
    const name = node.text();
    const list = identifiers.get(name);
    if (list) list.push(node);
    else identifiers.set(name, [node]);
    if (i % 1000 === 999 && yieldNow()) yield;
  }
  memo.identifiers = identifiers;
}

export function innermostFunction(node: SgNode): SgNode | null {
  for (let p = node.parent(); p; p = p.parent()) if (FUNCTION_KINDS.has(String(p.kind()))) return p;
  return null;
}

function identifiersNamed(name: string, from: SgNode, memo: ParseMemo): SgNode[] {
  if (memo.identifiers) return memo.identifiers.get(name) ?? [];
  // Not prepared: search the file for this one name.
  const literal = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return from
    .getRoot()
    .root()
    .findAll({ rule: { kind: 'identifier', regex: `^${literal}$` } });
}

/** The occurrences of `name` in the file, classified (once per name and parse). */
export function nameIndex(name: string, from: SgNode, memo: ParseMemo): NameIndex {
  let found = memo.names.get(name);
  if (!found) {
    const occurrences = identifiersNamed(name, from, memo);
    const roles: Role[] = [];
    const declaringFunctions = new Set<number>();
    for (const occurrence of occurrences) {
      resolutionWork.visits++;
      const role = roleOf(occurrence);
      roles.push(role);
      if (role.kind !== 'parameter' && role.kind !== 'declare') continue;
      const own = innermostFunction(occurrence);
      if (own) declaringFunctions.add(own.id());
    }
    found = { occurrences, roles, declaringFunctions, writes: null };
    memo.names.set(name, found);
  }
  return found;
}

/** The function that declares the `name` used at `use` (closures reach outwards), or the file. */
export function declaringScope(use: SgNode, names: NameIndex): SgNode | null {
  for (let fn = innermostFunction(use); fn; fn = innermostFunction(fn)) {
    resolutionWork.visits++;
    if (names.declaringFunctions.has(fn.id())) return fn;
  }
  let root = use;
  for (let p = use.parent(); p; p = p.parent()) root = p;
  return root.kind() === 'source_file' ? root : null;
}

/**
 * The roles that bind or write the variable `scope` declares (not a nested function's own
 * variable of that name), in source order.
 */
export function writesIn(scope: SgNode, names: NameIndex): Role[] {
  if (!names.writes) {
    const writes = new Map<number, Role[]>();
    names.occurrences.forEach((occurrence, i) => {
      const role = names.roles[i] as Role;
      if (role.kind === 'use') return;
      resolutionWork.visits++;
      const owner = ownerScope(occurrence, role, names);
      if (!owner) return;
      const list = writes.get(owner.id());
      if (list) list.push(role);
      else writes.set(owner.id(), [role]);
    });
    names.writes = writes;
  }
  return names.writes.get(scope.id()) ?? [];
}

/** The scope an occurrence's variable belongs to: its own function for a declaration, else where the name is declared. */
export function ownerScope(occurrence: SgNode, role: Role, names: NameIndex): SgNode | null {
  const own = innermostFunction(occurrence);
  if ((role.kind === 'parameter' || role.kind === 'declare') && own) return own;
  // A top-level declaration: the file's variable.
  if (role.kind === 'declare' && !own) return occurrence.getRoot().root();
  return declaringScope(occurrence, names);
}

/** The occurrences of the name inside `scope` (nested functions included), with their roles, in source order. */
export function occurrencesWithin(scope: SgNode, names: NameIndex): { occurrence: SgNode; role: Role }[] {
  const { start, end } = scope.range();
  const at = (i: number) => (names.occurrences[i] as SgNode).range().start.index;
  // The first occurrence at or after the scope's start (occurrences are in source order).
  let low = 0;
  let high = names.occurrences.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (at(mid) < start.index) low = mid + 1;
    else high = mid;
  }
  const out: { occurrence: SgNode; role: Role }[] = [];
  for (let i = low; i < names.occurrences.length && at(i) < end.index; i++) {
    resolutionWork.visits++;
    out.push({ occurrence: names.occurrences[i] as SgNode, role: names.roles[i] as Role });
  }
  return out;
}

/** What an identifier occurrence does to its variable. */
function roleOf(occurrence: SgNode): Role {
  const parent = occurrence.parent();
  if (!parent) return { kind: 'use' };
  switch (parent.kind()) {
    case 'parameter_declaration':
    case 'variadic_parameter_declaration':
      return parent.field('type')?.id() === occurrence.id() ? { kind: 'use' } : parameterRole(parent);
    case 'var_spec':
    case 'const_spec':
      return specRole(parent, occurrence);
    case 'expression_list':
      return listRole(parent, occurrence);
    case 'unary_expression':
      return parent.field('operator')?.text() === '&' ? { kind: 'escape' } : { kind: 'use' };
    case 'inc_statement':
    case 'dec_statement':
      return { kind: 'assign', value: null, type: null, dynamic: false, append: false };
    default:
      return { kind: 'use' };
  }
}

/** A named result starts at its zero value and is assigned like a variable; other parameters come from the caller. */
function parameterRole(declaration: SgNode): Role {
  const list = declaration.parent();
  const fn = list?.parent();
  // `cb func(q string)`: a name inside a function type declares nothing.
  if (!fn || !FUNCTION_KINDS.has(String(fn.kind()))) return { kind: 'use' };
  const isResult = fn.field('result')?.id() === list?.id();
  return isResult
    ? { kind: 'declare', value: null, type: declaration.field('type'), dynamic: false }
    : { kind: 'parameter' };
}

function specRole(spec: SgNode, occurrence: SgNode): Role {
  const names = spec.children().filter((c) => c.kind() === 'identifier');
  const index = names.findIndex((n) => n.id() === occurrence.id());
  if (index < 0) return { kind: 'use' };
  const values = spec.field('value')?.namedChildren() ?? [];
  const type = spec.field('type');
  if (values.length === 0) return { kind: 'declare', value: null, type, dynamic: false };
  // `var a, b = f()`: one call, several results.
  if (values.length !== names.length) return { kind: 'declare', value: null, type, dynamic: true };
  return { kind: 'declare', value: values[index] ?? null, type, dynamic: false };
}

function listRole(list: SgNode, occurrence: SgNode): Role {
  const statement = list.parent();
  if (!statement || statement.field('left')?.id() !== list.id()) {
    // `switch v := x.(type)`: the left list has no field name.
    if (statement?.kind() === 'type_switch_statement' && list.id() === statement.namedChildren()[0]?.id())
      return { kind: 'declare', value: null, type: null, dynamic: true };
    return { kind: 'use' };
  }
  const lefts = list.namedChildren();
  const index = lefts.findIndex((n) => n.id() === occurrence.id());
  const declares = statement.children().some((c) => c.text() === ':=');
  switch (statement.kind()) {
    case 'short_var_declaration':
    case 'assignment_statement': {
      const rights = statement.field('right')?.namedChildren() ?? [];
      const operator = statement.field('operator')?.text() ?? ':=';
      const paired = rights.length === lefts.length ? (rights[index] ?? null) : null;
      const dynamic = paired === null;
      if (statement.kind() === 'short_var_declaration')
        return { kind: 'declare', value: paired, type: null, dynamic };
      return { kind: 'assign', value: paired, type: null, dynamic, append: operator === '+=' };
    }
    case 'range_clause': {
      const range = statement.field('right');
      const kind = declares ? 'declare' : 'assign';
      // Ranging over a constant list gives its constant elements; anything else is data.
      const source = range?.kind() === 'composite_literal' ? range : null;
      if (kind === 'declare') return { kind, value: source, type: null, dynamic: source === null };
      return { kind, value: source, type: null, dynamic: source === null, append: false };
    }
    case 'receive_statement':
      return declares
        ? { kind: 'declare', value: null, type: null, dynamic: true }
        : { kind: 'assign', value: null, type: null, dynamic: true, append: false };
    default:
      return { kind: 'use' };
  }
}

const FUNCTION_DECLARATION_RULE = { rule: { kind: 'function_declaration' } };
const RETURN_RULE = { rule: { kind: 'return_statement' } };

/** The one function the file declares under `name` (not a method), or null (none, or several). */
export function functionNamed(name: string, from: SgNode, memo: ParseMemo): SgNode | null {
  if (!memo.functions) {
    const functions = new Map<string, SgNode[]>();
    for (const fn of from.getRoot().root().findAll(FUNCTION_DECLARATION_RULE)) {
      resolutionWork.visits++;
      const declared = fn.field('name')?.text();
      if (!declared) continue;
      const list = functions.get(declared);
      if (list) list.push(fn);
      else functions.set(declared, [fn]);
    }
    memo.functions = functions;
  }
  const found = memo.functions.get(name);
  return found?.length === 1 ? (found[0] as SgNode) : null;
}

/** The `return` statements of `fn` itself, searched once per function and parse. */
export function returnsOf(fn: SgNode, memo: ParseMemo): SgNode[] {
  let returns = memo.returns.get(fn.id());
  if (!returns) {
    returns = fn.findAll(RETURN_RULE).filter((r) => innermostFunction(r)?.id() === fn.id());
    resolutionWork.visits += returns.length;
    memo.returns.set(fn.id(), returns);
  }
  return returns;
}
