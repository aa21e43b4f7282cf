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
import { callerMemo, type ParameterRef, refersTo, shapeWithParameters } from './javascript';
import { type HelperCall, resolutionWork } from './types';

/** Functions and parameters followed from one sink before giving up on the rest. */
const MAX_HELPERS = 200;

/** How the file's own code calls a function: by a name it binds, or as a property. */
interface CallableName {
  name: string;
  /** The identifier that declares the name (a function declaration's, a `const`'s); null: a property. */
  declared: SgNode | null;
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
    return name ? { name: name.text(), declared: null } : null;
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
      return key ? { name: key.text().replace(/^['"]|['"]$/g, ''), declared: null } : null;
    }
    case 'assignment_expression': {
      // `exports.run = function (cmd) {...}`, `Runner.prototype.run = ...`
      const left = holder.field('left');
      return left?.kind() === 'member_expression'
        ? { name: left.field('property')?.text() ?? '', declared: null }
        : null;
    }
    default:
      return null;
  }
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
  for (const call of facts.calls.get(callable.name) ?? []) {
    resolutionWork.visits++;
    const callee = call.field('function');
    if (!callee) continue;
    if (callable.declared) {
      if (callee.kind() !== 'identifier' || !refersTo(callee, callable.declared, parse)) continue;
    } else if (callee.kind() !== 'member_expression') continue;
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

/** Every call reaching `start`'s parameter, directly or through callers of callers. */
function closureOf(start: ParameterRef, facts: CallerFacts, parse: object | undefined): HelperCall[] {
  const key = `${start.fn.id()}:${start.name}`;
  const known = facts.closures.get(key);
  if (known) return known;
  const found: HelperCall[] = [];
  facts.closures.set(key, found);
  const startName = callableName(start.fn)?.name;
  if (!startName) return found;
  const queue = [{ ref: start, through: [{ helper: startName, parameter: start.name }] }];
  const visited = new Set([key]);
  for (let i = 0; i < queue.length && visited.size <= MAX_HELPERS; i++) {
    const { ref, through } = queue[i] as (typeof queue)[number];
    for (const edge of edgesOf(ref, facts, parse)) {
      found.push({ call: edge.call, argument: edge.argument, through });
      for (const next of edge.next) {
        const nextKey = `${next.fn.id()}:${next.name}`;
        const name = callableName(next.fn)?.name;
        if (visited.has(nextKey) || !name) continue;
        visited.add(nextKey);
        queue.push({ ref: next, through: [{ helper: name, parameter: next.name }, ...through] });
      }
    }
  }
  return found;
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
