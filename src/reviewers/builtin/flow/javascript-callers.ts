/**
 * Helpers as sinks, for JavaScript and TypeScript: a function of the file whose parameter reaches
 * a sink is a sink for its callers. With `function run(cmd) { exec(cmd) }` on lines the change did
 * not touch, a new `run('git log ' + req.query.ref)` is where the command injection comes in, so
 * that call is what a rule with `flow.callers` reports. A caller that passes its own parameter on
 * makes its function a sink in turn, at any depth (each function and parameter is followed once,
 * so recursion and cycles end); a helper called only with constants reaches nothing.
 *
 * Calls are found by name from one index of the file's calls, made once per parse: a plain call
 * must resolve to the same binding as the function's declaration (`run(x)` in a closure that
 * declares its own `run` is another function); a method or a property function (`this.run(x)`,
 * `utils.run(x)`, `exports.run = function`) is matched by its property name.
 */
import type { SgNode } from '@ast-grep/napi';
import { callerMemo, declaredValues, type ParameterRef, refersTo, shapeWithParameters } from './javascript';
import { relativeImports } from './javascript-modules';
import { type HelperCall, resolutionWork } from './types';

/** Functions and parameters followed from one sink before giving up on the rest. */
const MAX_HELPERS = 200;

/** How the file's own code calls a function: by a name it binds, or as a property. */
interface CallableName {
  name: string;
  /** The identifier that declares the name (a function declaration's, a `const`'s); null: a property. */
  declared: SgNode | null;
  /**
   * For a property: the receivers that hold it. A class's method is called on `this`, the class or
   * an instance the file makes with `new`; an object's, on the name the object is bound to; an
   * export's, on `exports`. Another object's `run` (`stmt.run(sql)`) is not this function.
   */
  owner?: { kind: 'class' | 'object'; name: string | null };
}

/** One call that hands a non-constant value to a parameter that reaches a sink. */
interface Edge {
  call: SgNode;
  argument: SgNode;
  /** The parameters of the caller's own function the argument depends on. */
  next: ParameterRef[];
}

interface CallerFacts {
  /** Calls by the last name of their callee (`run` for `run(x)`, `this.run(x)`, `utils.run(x)`). */
  calls: Map<string, SgNode[]>;
  edges: Map<string, Edge[]>;
  closures: Map<string, HelperCall[]>;
}

const WRAPPERS = new Set(['parenthesized_expression', 'as_expression', 'satisfies_expression']);

function factsFor(value: SgNode, parse: object | undefined): CallerFacts {
  const memo = callerMemo(parse);
  if (memo.callers) return memo.callers as CallerFacts;
  const calls = new Map<string, SgNode[]>();
  for (const call of value
    .getRoot()
    .root()
    .findAll({ rule: { kind: 'call_expression' } })) {
    resolutionWork.visits++;
    const name = lastName(call.field('function'));
    if (!name) continue;
    const list = calls.get(name);
    if (list) list.push(call);
    else calls.set(name, [call]);
  }
  const facts: CallerFacts = { calls, edges: new Map(), closures: new Map() };
  memo.callers = facts;
  return facts;
}

function lastName(callee: SgNode | null): string {
  if (!callee) return '';
  if (callee.kind() === 'identifier') return callee.text();
  if (callee.kind() === 'member_expression') return callee.field('property')?.text() ?? '';
  return '';
}

/** The name the file calls `fn` by, if any (an anonymous callback has none). */
export function callableName(fn: SgNode): CallableName | null {
  const kind = fn.kind();
  if (kind === 'function_declaration' || kind === 'generator_function_declaration') {
    const name = fn.field('name');
    return name ? { name: name.text(), declared: name } : null;
  }
  if (kind === 'method_definition') {
    const name = fn.field('name');
    return name ? { name: name.text(), declared: null, owner: ownerOf(fn.parent()) } : null;
  }
  let holder = fn.parent();
  while (holder && WRAPPERS.has(String(holder.kind()))) holder = holder.parent();
  if (!holder) return null;
  switch (holder.kind()) {
    case 'variable_declarator': {
      const name = holder.field('name');
      return name?.kind() === 'identifier' ? { name: name.text(), declared: name } : null;
    }
    case 'pair': {
      const key = holder.field('key');
      return key
        ? { name: key.text().replace(/^['"]|['"]$/g, ''), declared: null, owner: ownerOf(holder.parent()) }
        : null;
    }
    case 'assignment_expression': {
      // `exports.run = function (cmd) {...}`, `Runner.prototype.run = ...`, `utils.run = ...`
      const left = holder.field('left');
      if (left?.kind() !== 'member_expression') return null;
      const target = left.field('object')?.text() ?? '';
      const prototype = /^([A-Za-z_$][\w$]*)\.prototype$/.exec(target)?.[1];
      return {
        name: left.field('property')?.text() ?? '',
        declared: null,
        owner: prototype ? { kind: 'class', name: prototype } : { kind: 'object', name: target },
      };
    }
    default:
      return null;
  }
}

/** What holds a method or a property function: its class, or the name its object is bound to. */
function ownerOf(container: SgNode | null): CallableName['owner'] {
  if (container?.kind() === 'class_body') {
    const name = container.parent()?.field('name')?.text() ?? null;
    return { kind: 'class', name };
  }
  if (container?.kind() === 'object') {
    let holder = container.parent();
    while (holder && WRAPPERS.has(String(holder.kind()))) holder = holder.parent();
    if (holder?.kind() === 'variable_declarator')
      return { kind: 'object', name: holder.field('name')?.text() ?? null };
    if (holder?.kind() === 'assignment_expression')
      return { kind: 'object', name: holder.field('left')?.text() ?? null };
  }
  return { kind: 'object', name: null };
}

/** Whether `receiver` (the object of `receiver.run(x)`) holds the function `callable` names. */
function holdsIt(receiver: SgNode, callable: CallableName, parse: object | undefined): boolean {
  const owner = callable.owner;
  if (!owner) return false;
  const text = receiver.text();
  if (text === 'this' || text === 'super') return true;
  if (owner.name === null) return false;
  if (owner.kind === 'object') {
    const exportsObject = /^(module\.)?exports$/;
    return text === owner.name || (exportsObject.test(owner.name) && exportsObject.test(text));
  }
  // A class: its static methods on the class, its methods on an instance the file makes.
  const name = owner.name;
  const isInstance = (node: SgNode) =>
    node.kind() === 'new_expression' && node.field('constructor')?.text() === name;
  if (text === name || isInstance(receiver)) return true;
  return receiver.kind() === 'identifier' && declaredValues(receiver, parse).some(isInstance);
}

/** The position of the parameter named `name` among `fn`'s parameters, and whether it is `...rest`. */
function parameterPosition(fn: SgNode, name: string): { index: number; rest: boolean } | null {
  const single = fn.field('parameter');
  if (single) return single.text() === name ? { index: 0, rest: false } : null;
  const parameters = fn.field('parameters');
  if (!parameters) return null;
  const list = parameters.namedChildren().filter((c) => c.kind() !== 'comment');
  for (const [index, parameter] of list.entries()) {
    const binds =
      (parameter.kind() === 'identifier' && parameter.text() === name) ||
      parameter.find({
        rule: {
          any: [{ kind: 'identifier' }, { kind: 'shorthand_property_identifier_pattern' }],
          regex: `^${name.replace(/\$/g, '\\$')}$`,
        },
      }) !== null;
    if (binds)
      return { index, rest: parameter.kind() === 'rest_pattern' || parameter.text().startsWith('...') };
  }
  return null;
}

/** The calls of `ref.fn` whose argument for `ref`'s parameter is not constant. */
function edgesOf(ref: ParameterRef, facts: CallerFacts, parse: object | undefined): Edge[] {
  const key = `${ref.fn.id()}:${ref.name}`;
  const known = facts.edges.get(key);
  if (known) return known;
  const edges: Edge[] = [];
  facts.edges.set(key, edges);
  const callable = callableName(ref.fn);
  const position = callable ? parameterPosition(ref.fn, ref.name) : null;
  if (!callable || !position) return edges;
  const calls = (facts.calls.get(callable.name) ?? []).filter((call) => {
    resolutionWork.visits++;
    const callee = call.field('function');
    if (!callee) return false;
    if (callable.declared)
      return callee.kind() === 'identifier' && refersTo(callee, callable.declared, parse);
    const receiver = callee.kind() === 'member_expression' ? callee.field('object') : null;
    return receiver !== null && holdsIt(receiver, callable, parse);
  });
  edges.push(...dynamicArguments(calls, position, parse));
  return edges;
}

/** The calls among `calls` whose argument at `position` is not constant. */
function dynamicArguments(
  calls: readonly SgNode[],
  position: { index: number; rest: boolean },
  parse: object | undefined,
): Edge[] {
  const edges: Edge[] = [];
  for (const call of calls) {
    const args = (call.field('arguments')?.namedChildren() ?? []).filter((c) => c.kind() !== 'comment');
    // A spread before the parameter hides which argument lands in it.
    if (args.slice(0, position.index + 1).some((a) => a.kind() === 'spread_element')) continue;
    const candidates = position.rest
      ? args.slice(position.index)
      : args.slice(position.index, position.index + 1);
    for (const argument of candidates) {
      const { shape, parameters } = shapeWithParameters(argument, parse);
      if (shape.constant) continue;
      edges.push({ call, argument, next: parameters });
      break;
    }
  }
  return edges;
}

type Through = HelperCall['through'];

/**
 * Every call reaching `start`'s parameter, directly or through callers of callers; with `edges`,
 * starting from those calls instead (the calls of an imported helper), `through` naming it.
 */
function closureOf(start: ParameterRef, facts: CallerFacts, parse: object | undefined): HelperCall[] {
  const key = `${start.fn.id()}:${start.name}`;
  const known = facts.closures.get(key);
  if (known) return known;
  const startName = callableName(start.fn)?.name;
  const found = startName
    ? closureFrom(
        edgesOf(start, facts, parse),
        [{ helper: startName, parameter: start.name }],
        [key],
        facts,
        parse,
      )
    : [];
  facts.closures.set(key, found);
  return found;
}

function closureFrom(
  first: Edge[],
  firstThrough: Through,
  visitedKeys: string[],
  facts: CallerFacts,
  parse: object | undefined,
): HelperCall[] {
  const found: HelperCall[] = [];
  const visited = new Set(visitedKeys);
  const queue: { edges: () => Edge[]; through: Through }[] = [{ edges: () => first, through: firstThrough }];
  for (let i = 0; i < queue.length && visited.size <= MAX_HELPERS; i++) {
    const { edges, through } = queue[i] as (typeof queue)[number];
    for (const edge of edges()) {
      found.push({ call: edge.call, argument: edge.argument, through });
      for (const next of edge.next) {
        const nextKey = `${next.fn.id()}:${next.name}`;
        const name = callableName(next.fn)?.name;
        if (visited.has(nextKey) || !name) continue;
        visited.add(nextKey);
        queue.push({
          edges: () => edgesOf(next, facts, parse),
          through: [{ helper: name, parameter: next.name }, ...through],
        });
      }
    }
  }
  return found;
}

/**
 * The parameters of the file's functions that reach the sink whose value is `value`, directly or
 * through the file's own calls, each with the path from its function to the sink: what an
 * importing file can reach it by (./javascript-modules.ts says which of them are exported).
 */
export function parametersReaching(
  value: SgNode,
  parse?: object,
): { ref: ParameterRef; index: number; rest: boolean; through: Through }[] {
  const { shape, parameters } = shapeWithParameters(value, parse);
  if (shape.constant) return [];
  const facts = factsFor(value, parse);
  const out: { ref: ParameterRef; index: number; rest: boolean; through: Through }[] = [];
  const visited = new Set<string>();
  const queue: { ref: ParameterRef; through: Through }[] = [];
  const enqueue = (ref: ParameterRef, after: Through) => {
    const key = `${ref.fn.id()}:${ref.name}`;
    const name = callableName(ref.fn)?.name;
    if (visited.has(key) || !name) return;
    visited.add(key);
    queue.push({ ref, through: [{ helper: name, parameter: ref.name }, ...after] });
  };
  for (const parameter of parameters) enqueue(parameter, []);
  for (let i = 0; i < queue.length && visited.size <= MAX_HELPERS; i++) {
    const { ref, through } = queue[i] as (typeof queue)[number];
    const position = parameterPosition(ref.fn, ref.name);
    if (position) out.push({ ref, ...position, through });
    for (const edge of edgesOf(ref, facts, parse)) for (const next of edge.next) enqueue(next, through);
  }
  return out;
}

/** A helper another file of the repository exports, whose parameter at `index` reaches a sink. */
export interface ImportedHelper {
  /** How this file names the module (`./sh`). */
  specifier: string;
  /** The export (`run`, or `default`). */
  exported: string;
  index: number;
  rest: boolean;
  /** The path from the exported function to the sink, in the other file. */
  through: Through;
}

/**
 * The calls of this file that hand a non-constant value to an imported helper's parameter that
 * reaches a sink, directly or through this file's own functions (which are followed at any depth,
 * as for a sink of the file's own).
 */
export function callersOfImported(root: SgNode, helper: ImportedHelper, parse?: object): HelperCall[] {
  const facts = factsFor(root, parse);
  const calls: SgNode[] = [];
  for (const binding of relativeImports(root)) {
    if (binding.specifier !== helper.specifier) continue;
    const local = binding.local.text();
    // `run(x)` for `import { run }` or `const run = require('./sh').run`; `sh.run(x)` for a module object.
    const direct = binding.imported === helper.exported;
    const viaModule = binding.imported === '*';
    if (direct || (viaModule && helper.exported === 'default')) {
      for (const call of facts.calls.get(local) ?? []) {
        const callee = call.field('function');
        if (callee?.kind() === 'identifier' && refersTo(callee, binding.local, parse)) calls.push(call);
      }
    }
    if (viaModule) {
      for (const call of facts.calls.get(helper.exported) ?? []) {
        const object = call.field('function')?.field('object');
        if (object?.kind() === 'identifier' && refersTo(object, binding.local, parse)) calls.push(call);
      }
    }
  }
  if (calls.length === 0) return [];
  return closureFrom(dynamicArguments(calls, helper, parse), helper.through, [], facts, parse);
}

/** The calls that hand a non-constant value to the sink whose value is `value` (FlowLanguage.callersReaching). */
export function callersReaching(value: SgNode, parse?: object): HelperCall[] {
  const { shape, parameters } = shapeWithParameters(value, parse);
  if (shape.constant || parameters.length === 0) return [];
  const facts = factsFor(value, parse);
  const seen = new Set<number>();
  const calls: HelperCall[] = [];
  for (const parameter of parameters) {
    for (const helperCall of closureOf(parameter, facts, parse)) {
      if (seen.has(helperCall.call.id())) continue;
      seen.add(helperCall.call.id());
      calls.push(helperCall);
    }
  }
  return calls;
}
