/**
 * Same-file helpers as sinks, for Go: with `func runScript(script string) { exec.Command("sh",
 * "-c", script).Run() }`, a changed `runScript("tar czf " + r.FormValue("dir"))` is where the
 * defect is made, while the sink sits in a helper the change did not touch. A rule with
 * `flow.callers` asks, for a sink whose value depends on its function's parameters, which calls
 * of the file pass those parameters a non-constant value, at any depth (a caller passing on its
 * own parameter makes its callers sinks too; a cycle of calls is followed once).
 *
 * A helper is called by its name: a function as `name(...)`, a method as `x.name(...)`, a function
 * literal bound to a variable as `name(...)`. A name the file declares twice (two types' methods)
 * is not followed, since which one a call reaches is a type question this adapter does not answer.
 * Calls and the reaches of each (function, parameter) are found once per parse, so many sinks in
 * one helper, or many callers, keep the work linear.
 */
import type { SgNode } from '@ast-grep/napi';
import { type ParameterRef, shapeWithParameters } from './go';
import { type HelperCall, resolutionWork } from './types';

interface CallerMemo {
  /** Calls by the name they call (`run` for `run(x)` and `s.run(x)`); null until made. */
  calls: Map<string, SgNode[]> | null;
  /** How many functions and methods the file declares under each name. */
  declared: Map<string, number>;
  /** The reaches of one function's parameter (`<function id>:<parameter>`), once complete. */
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
    any: [{ kind: 'call_expression' }, { kind: 'function_declaration' }, { kind: 'method_declaration' }],
  },
};

/** One search of the file: its calls by called name and its declarations by name. */
function callsOf(from: SgNode, memo: CallerMemo): Map<string, SgNode[]> {
  if (memo.calls) return memo.calls;
  const calls = new Map<string, SgNode[]>();
  for (const node of from.getRoot().root().findAll(CALLS_AND_DECLARATIONS)) {
    resolutionWork.visits++;
    if (node.kind() !== 'call_expression') {
      const name = node.field('name')?.text();
      if (name) memo.declared.set(name, (memo.declared.get(name) ?? 0) + 1);
      continue;
    }
    const fn = node.field('function');
    const name =
      fn?.kind() === 'identifier'
        ? fn.text()
        : fn?.kind() === 'selector_expression'
          ? fn.field('field')?.text()
          : undefined;
    if (!name) continue;
    const list = calls.get(name);
    if (list) list.push(node);
    else calls.set(name, [node]);
  }
  memo.calls = calls;
  return calls;
}

/** The name a helper is called by, and whether its calls are method calls (`x.name(...)`). */
function helperName(fn: SgNode): { name: string; method: boolean } | null {
  if (fn.kind() === 'function_declaration') {
    const name = fn.field('name')?.text();
    return name ? { name, method: false } : null;
  }
  if (fn.kind() === 'method_declaration') {
    const name = fn.field('name')?.text();
    return name ? { name, method: true } : null;
  }
  // `run := func(script string) { ... }`: called by the variable's name.
  const list = fn.parent();
  const statement = list?.parent();
  if (!statement || list?.kind() !== 'expression_list' || statement.field('right')?.id() !== list.id())
    return null;
  const lefts = statement.field('left')?.namedChildren() ?? [];
  const rights = list.namedChildren();
  if (lefts.length !== 1 || rights.length !== 1 || lefts[0]?.kind() !== 'identifier') return null;
  return { name: (lefts[0] as SgNode).text(), method: false };
}

/** The position of parameter `name` in `fn`'s parameter list, and whether it is variadic. */
function parameterPosition(fn: SgNode, name: string): { index: number; variadic: boolean } | null {
  let index = 0;
  for (const declaration of fn.field('parameters')?.namedChildren() ?? []) {
    const names = declaration.children().filter((c) => c.kind() === 'identifier');
    const variadic = declaration.kind() === 'variadic_parameter_declaration';
    for (const n of names.length > 0 ? names : [null]) {
      if (n?.text() === name) return { index, variadic };
      index++;
    }
  }
  return null;
}

/** The calls of the file whose arguments reach the sink whose value is `value` (FlowLanguage.callersReaching). */
export function callersReaching(value: SgNode, parse?: object): HelperCall[] {
  const { shape, parameters } = shapeWithParameters(value, parse);
  if (shape.constant || parameters.length === 0) return [];
  const memo = memoFor(parse);
  return parameters.flatMap((p) => reachesOf(p, value, memo, parse, new Set()));
}

/**
 * The calls that pass `parameter` a non-constant value: each call of its function whose argument
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
  const helper = helperName(parameter.fn);
  const position = parameterPosition(parameter.fn, parameter.name);
  const out: HelperCall[] = [];
  const calls = callsOf(from, memo);
  const unambiguous = helper !== null && (memo.declared.get(helper.name) ?? 0) <= 1;
  if (helper && position && unambiguous) {
    const step = { helper: helper.name, parameter: parameter.name };
    for (const call of calls.get(helper.name) ?? []) {
      resolutionWork.visits++;
      const fn = call.field('function');
      if ((fn?.kind() === 'selector_expression') !== helper.method) continue;
      const args = call.field('arguments')?.namedChildren() ?? [];
      const passed = position.variadic
        ? args.slice(position.index)
        : args.slice(position.index, position.index + 1);
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
