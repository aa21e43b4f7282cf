/**
 * Same-file helpers as sinks, for Java: with `private void run(String cmd) { Runtime.getRuntime()
 * .exec(cmd); }`, a changed `run("ping -c 1 " + request.getParameter("host"))` is where the defect
 * is made, while the sink sits in a helper the change did not touch. A rule with `flow.callers`
 * asks, for a sink whose value depends on its method's parameters, which calls in the file pass
 * those parameters a non-constant value, at any depth (a caller passing on its own parameter makes
 * its callers sinks too; a cycle of calls is followed once).
 *
 * A helper is a method or constructor declared in the file, called by its name with no receiver,
 * on `this`, or on a class name (`Shell.run(...)`); `new Helper(...)` calls a constructor. Where
 * the file declares several methods of that name and arity (overloads on types), the call is not
 * followed. Calls and the reaches of each (method, parameter) are found once per parse.
 */
import type { SgNode } from '@ast-grep/napi';
import { declaredParameters, type ParameterRef, shapeWithParameters } from './java';
import { type HelperCall, resolutionWork } from './types';

interface CallerMemo {
  /** Calls by called name (`run` for `run(x)`, `Shell` for `new Shell(x)`); null until made. */
  calls: Map<string, SgNode[]> | null;
  /** How many methods/constructors the file declares under each `<name>/<arity>`. */
  declared: Map<string, number>;
  /** The reaches of one method's parameter (`<scope id>:<parameter>`), once complete. */
  reaches: Map<string, HelperCall[]>;
}

const memoByParse = new WeakMap<object, CallerMemo>();

function memoFor(parse: object | undefined): CallerMemo {
  let memo = parse ? memoByParse.get(parse) : undefined;
  if (!memo) {
    memo = { calls: null, declared: new Map(), reaches: new Map() };
    if (parse) memoByParse.set(parse, memo);
  }
  return memo;
}

const CALLS_AND_DECLARATIONS = {
  rule: {
    any: [
      { kind: 'method_invocation' },
      { kind: 'object_creation_expression' },
      { kind: 'method_declaration' },
      { kind: 'constructor_declaration' },
    ],
  },
};

/** The name a call calls: the method's, or the class a `new` creates. */
function calledName(call: SgNode): string | null {
  if (call.kind() === 'method_invocation') return call.field('name')?.text() ?? null;
  return call.field('type')?.text().replace(/<.*$/s, '') ?? null;
}

/** One search of the file: its calls by called name and its declarations by name and arity. */
function callsOf(from: SgNode, memo: CallerMemo): Map<string, SgNode[]> {
  if (memo.calls) return memo.calls;
  const calls = new Map<string, SgNode[]>();
  for (const node of from.getRoot().root().findAll(CALLS_AND_DECLARATIONS)) {
    resolutionWork.visits++;
    const kind = node.kind();
    if (kind === 'method_declaration' || kind === 'constructor_declaration') {
      const name = node.field('name')?.text();
      const key = `${name}/${declaredParameters(node).names.length}`;
      if (name) memo.declared.set(key, (memo.declared.get(key) ?? 0) + 1);
      continue;
    }
    const name = calledName(node);
    if (!name) continue;
    const list = calls.get(name);
    if (list) list.push(node);
    else calls.set(name, [node]);
  }
  memo.calls = calls;
  return calls;
}

/** A call that can reach the file's own method: no receiver, `this`, or a class name. */
function callsOwnMethod(call: SgNode): boolean {
  if (call.kind() === 'object_creation_expression') return true;
  const object = call.field('object');
  return !object || object.kind() === 'this' || /^[A-Z]\w*$/.test(object.text());
}

/** The calls of the file whose arguments reach the sink whose value is `value` (FlowLanguage.callersReaching). */
export function callersReaching(value: SgNode, parse?: object): HelperCall[] {
  const { shape, parameters } = shapeWithParameters(value, parse);
  if (shape.constant || parameters.length === 0) return [];
  const memo = memoFor(parse);
  return parameters.flatMap((p) => reachesOf(p, value, memo, parse, new Set()));
}

/**
 * The calls that pass `parameter` a non-constant value: each call of its method whose argument
 * is not constant, and the callers of a caller that passes on its own parameter.
 */
function reachesOf(
  parameter: ParameterRef,
  from: SgNode,
  memo: CallerMemo,
  parse: object | undefined,
  visiting: Set<string>,
): HelperCall[] {
  const key = `${parameter.fn.id()}:${parameter.name}`;
  const known = memo.reaches.get(key);
  if (known) return known;
  // A cycle of calls: its other callers are found where it was entered.
  if (visiting.has(key)) return [];
  visiting.add(key);
  const out: HelperCall[] = [];
  const kind = parameter.fn.kind();
  const name = parameter.fn.field('name')?.text();
  const { names, variadic } = declaredParameters(parameter.fn);
  const index = names.indexOf(parameter.name);
  const calls = callsOf(from, memo);
  const unambiguous = (memo.declared.get(`${name}/${names.length}`) ?? 0) <= 1;
  if (
    (kind === 'method_declaration' || kind === 'constructor_declaration') &&
    name &&
    index >= 0 &&
    unambiguous
  ) {
    const step = { helper: name, parameter: parameter.name };
    for (const call of calls.get(name) ?? []) {
      resolutionWork.visits++;
      if ((call.kind() === 'object_creation_expression') !== (kind === 'constructor_declaration')) continue;
      if (!callsOwnMethod(call)) continue;
      const args = call.field('arguments')?.namedChildren() ?? [];
      const arity = variadic ? args.length >= names.length - 1 : args.length === names.length;
      if (!arity) continue;
      const lastIndex = names.length - 1;
      const passed = variadic && index === lastIndex ? args.slice(index) : args.slice(index, index + 1);
      for (const argument of passed) {
        const found = shapeWithParameters(argument, parse);
        if (found.shape.constant) continue;
        out.push({ call, argument, through: [step] });
        // The caller hands on its own parameter: its callers reach the sink too.
        for (const outer of found.parameters)
          for (const reach of reachesOf(outer, from, memo, parse, visiting))
            out.push({ ...reach, through: [...reach.through, step] });
      }
    }
  }
  visiting.delete(key);
  memo.reaches.set(key, out);
  return out;
}
