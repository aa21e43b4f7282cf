/**
 * Helpers as sinks, for Python: a function of the file whose parameter reaches a sink is a sink
 * for its callers. With `def run(cmd, **kw): kw["shell"] = True; subprocess.Popen(cmd, **kw)` on
 * lines the change did not touch, a new `run(f"git log {ref}")` is where the command injection
 * comes in, so that call is what a rule with `flow.callers` reports. A caller that passes its own
 * parameter on makes its function a sink in turn, at any depth (each function and parameter is
 * followed once, so recursion and cycles end); a helper called only with constants reaches nothing.
 *
 * Calls are found by name in the parse's identifier index (./python-index.ts): a plain call
 * `run(x)` must resolve to the same `def` (the nearest enclosing scope's), a method only through
 * `self.`/`cls.` inside its own class or through the class's name, so `subprocess.run(...)` is
 * never taken for a method the file happens to call `run`. Not followed: functions imported from
 * other files, functions passed around as values, and `*args`/`**kwargs` forwarding.
 */
import type { SgNode } from '@ast-grep/napi';
import { shapeWithParameters } from './python';
import {
  callArguments,
  identifiersNamed,
  innermostScope,
  localFunction,
  memoFor,
  type ParameterRef,
  type ParseMemo,
} from './python-index';
import { type HelperCall, resolutionWork } from './types';

/** Functions and parameters followed from one sink before giving up on the rest. */
const MAX_HELPERS = 200;

/** One call that hands a non-constant value to a parameter that reaches a sink. */
interface Edge {
  call: SgNode;
  argument: SgNode;
  /** The parameters of the caller's own functions the argument depends on. */
  next: ParameterRef[];
}

interface CallerFacts {
  edges: Map<string, Edge[]>;
  closures: Map<string, HelperCall[]>;
}

function factsFor(memo: ParseMemo): CallerFacts {
  if (!memo.callers) memo.callers = { edges: new Map(), closures: new Map() } satisfies CallerFacts;
  return memo.callers as CallerFacts;
}

/** Where a parameter sits: its position among the positional ones (null: keyword-only), `*args`. */
interface Position {
  index: number | null;
  rest: boolean;
  /** A method's first parameter (`self`, `cls`) is the receiver, not an argument. */
  method: boolean;
}

const isMethod = (fn: SgNode): boolean => {
  if (innermostScope(fn)?.kind() !== 'class_definition') return false;
  const decorators = fn.parent()?.kind() === 'decorated_definition' ? (fn.parent()?.text() ?? '') : '';
  return !/@staticmethod\b/.test(decorators);
};

function parameterPosition(fn: SgNode, name: string): Position | null {
  const parameters = (fn.field('parameters')?.namedChildren() ?? []).filter((c) => c.kind() !== 'comment');
  const method = isMethod(fn);
  let index = 0;
  let keywordOnly = false;
  for (const parameter of parameters) {
    const kind = parameter.kind();
    if (kind === 'keyword_separator' || kind === 'positional_separator') {
      if (kind === 'keyword_separator') keywordOnly = true;
      continue;
    }
    const id =
      kind === 'identifier'
        ? parameter
        : (parameter.field('name') ?? parameter.find({ rule: { kind: 'identifier' } }));
    const binds = id?.text() === name;
    if (kind === 'list_splat_pattern') {
      if (binds) return { index, rest: true, method };
      keywordOnly = true;
      continue;
    }
    // `**kwargs`: which key lands in it is not followed.
    if (kind === 'dictionary_splat_pattern') return null;
    if (binds) return { index: keywordOnly ? null : index, rest: false, method };
    index++;
  }
  return null;
}

/** Whether `call` (whose callee names `fn`) calls that very `def`. */
function callsFunction(call: SgNode, callee: SgNode, fn: SgNode, memo: ParseMemo): boolean {
  const name = fn.field('name')?.text() ?? '';
  if (callee.kind() === 'identifier') return localFunction(callee, name, memo)?.id() === fn.id();
  if (callee.kind() !== 'attribute') return false;
  const owner = innermostScope(fn);
  if (owner?.kind() !== 'class_definition') return false;
  const receiver = callee.field('object')?.text() ?? '';
  const className = owner.field('name')?.text();
  if (receiver === className) return true;
  return (receiver === 'self' || receiver === 'cls') && call.ancestors().some((a) => a.id() === owner.id());
}

/** The argument of `call` that lands in the parameter at `position` (or is passed by `name`). */
function argumentFor(call: SgNode, callee: SgNode, position: Position, name: string): SgNode[] {
  const args = callArguments(call) ?? [];
  const byName = args.find((a) => a.kind() === 'keyword_argument' && a.field('name')?.text() === name);
  if (byName) return [byName.field('value') ?? byName];
  if (position.index === null) return [];
  // `self.run(x)`: the receiver fills `self`; `Runner.run(self, x)` passes it.
  const offset = position.method && callee.kind() === 'attribute' && !isClassCall(callee) ? 1 : 0;
  const index = position.index - offset;
  if (index < 0) return [];
  const positional: SgNode[] = [];
  for (const a of args) {
    if (a.kind() === 'keyword_argument' || a.kind() === 'dictionary_splat') continue;
    // A splat before the parameter hides which argument lands in it.
    if (a.kind() === 'list_splat') return positional.length > index ? [positional[index] as SgNode] : [];
    positional.push(a);
  }
  return position.rest ? positional.slice(index) : positional.slice(index, index + 1);
}

/** `Runner.run(obj, cmd)`: a method called through its class's name passes its receiver itself. */
const isClassCall = (callee: SgNode): boolean => {
  const receiver = callee.field('object')?.text() ?? '';
  return /^[A-Z]/.test(receiver);
};

/** The calls of `ref.fn` whose argument for `ref`'s parameter is not constant. */
function edgesOf(ref: ParameterRef, facts: CallerFacts, memo: ParseMemo, parse: object | undefined): Edge[] {
  const key = `${ref.fn.id()}:${ref.name}`;
  const known = facts.edges.get(key);
  if (known) return known;
  const edges: Edge[] = [];
  facts.edges.set(key, edges);
  const name = ref.fn.kind() === 'function_definition' ? ref.fn.field('name')?.text() : undefined;
  const position = name ? parameterPosition(ref.fn, ref.name) : null;
  if (!name || !position) return edges;
  for (const id of identifiersNamed(name, ref.fn, memo)) {
    resolutionWork.visits++;
    const holder = id.parent();
    const callee =
      holder?.kind() === 'attribute' && holder.field('attribute')?.id() === id.id() ? holder : id;
    const call = callee.parent();
    if (call?.kind() !== 'call' || call.field('function')?.id() !== callee.id()) continue;
    if (!callsFunction(call, callee, ref.fn, memo)) continue;
    for (const argument of argumentFor(call, callee, position, ref.name)) {
      const { shape, parameters } = shapeWithParameters(argument, parse);
      if (shape.constant) continue;
      edges.push({ call, argument, next: parameters.filter((p) => p.fn.kind() === 'function_definition') });
      break;
    }
  }
  return edges;
}

/** Every call reaching `start`'s parameter, directly or through callers of callers. */
function closureOf(
  start: ParameterRef,
  facts: CallerFacts,
  memo: ParseMemo,
  parse: object | undefined,
): HelperCall[] {
  const key = `${start.fn.id()}:${start.name}`;
  const known = facts.closures.get(key);
  if (known) return known;
  const found: HelperCall[] = [];
  facts.closures.set(key, found);
  const startName = start.fn.field('name')?.text();
  if (!startName) return found;
  const queue = [{ ref: start, through: [{ helper: startName, parameter: start.name }] }];
  const visited = new Set([key]);
  for (let i = 0; i < queue.length && visited.size <= MAX_HELPERS; i++) {
    const { ref, through } = queue[i] as (typeof queue)[number];
    for (const edge of edgesOf(ref, facts, memo, parse)) {
      found.push({ call: edge.call, argument: edge.argument, through });
      for (const next of edge.next) {
        const nextKey = `${next.fn.id()}:${next.name}`;
        const name = next.fn.field('name')?.text();
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
  const memo = memoFor(parse);
  const facts = factsFor(memo);
  const seen = new Set<number>();
  const calls: HelperCall[] = [];
  for (const parameter of parameters) {
    if (parameter.fn.kind() !== 'function_definition') continue;
    for (const helperCall of closureOf(parameter, facts, memo, parse)) {
      if (seen.has(helperCall.call.id())) continue;
      seen.add(helperCall.call.id());
      calls.push(helperCall);
    }
  }
  return calls;
}

// --- across one import -------------------------------------------------------------------------

/** A module-level function's parameter that reaches a sink of the module (possibly through its other functions). */
export interface ModuleSinkParameter {
  /** The function's name, as other modules import it. */
  exported: string;
  /** The parameter's position among the positional ones (-1: keyword-only), and whether it is `*args`. */
  index: number;
  rest: boolean;
  /** From the exported function to the one holding the sink. */
  through: HelperCall['through'];
}

/** The module-level functions whose parameter reaches the sink whose value is `value`. */
export function moduleParametersReaching(value: SgNode, parse?: object): ModuleSinkParameter[] {
  const { shape, parameters } = shapeWithParameters(value, parse);
  if (shape.constant) return [];
  const memo = memoFor(parse);
  const facts = factsFor(memo);
  const found: ModuleSinkParameter[] = [];
  const queue: { ref: ParameterRef; through: HelperCall['through'] }[] = [];
  const visited = new Set<string>();
  const enqueue = (ref: ParameterRef, after: HelperCall['through']) => {
    const key = `${ref.fn.id()}:${ref.name}`;
    const name = ref.fn.kind() === 'function_definition' ? ref.fn.field('name')?.text() : undefined;
    if (!name || visited.has(key) || visited.size > MAX_HELPERS) return;
    visited.add(key);
    queue.push({ ref, through: [{ helper: name, parameter: ref.name }, ...after] });
  };
  for (const ref of parameters) enqueue(ref, []);
  for (let i = 0; i < queue.length; i++) {
    const { ref, through } = queue[i] as (typeof queue)[number];
    if (innermostScope(ref.fn)?.kind() === 'module') {
      const position = parameterPosition(ref.fn, ref.name);
      const exported = through[0]?.helper;
      if (position && exported)
        found.push({ exported, index: position.index ?? -1, rest: position.rest, through });
    }
    for (const edge of edgesOf(ref, facts, memo, parse)) for (const next of edge.next) enqueue(next, through);
  }
  return found;
}

/** What the importing file knows of a helper of another module (ImportedSink's fields it reads). */
export interface ImportedPythonHelper {
  specifier: string;
  exported: string;
  index: number;
  rest: boolean;
  through: HelperCall['through'];
}

/**
 * The calls in this file (`root`) of `helper`, imported by `from <specifier> import <exported>`
 * (or its module by `from . import <module>`), that pass it a non-constant value, and the calls of
 * this file's own functions that pass theirs on to such a call, at any depth.
 */
export function pythonCallersOfImported(
  root: SgNode,
  helper: ImportedPythonHelper,
  bindings: readonly { specifier: string; imported: string; local: SgNode }[],
  parse?: object,
): HelperCall[] {
  const memo = memoFor(parse);
  const facts = factsFor(memo);
  const keyword = helper.through[0]?.parameter ?? '';
  const position: Position = {
    index: helper.index < 0 ? null : helper.index,
    rest: helper.rest,
    method: false,
  };
  const found: HelperCall[] = [];
  const seen = new Set<number>();
  for (const binding of bindings) {
    if (binding.specifier !== helper.specifier) continue;
    const direct = binding.imported === helper.exported;
    if (!direct && binding.imported !== '*') continue;
    const local = binding.local.text();
    // `run(x)` for `from .sh import run`; `sh.run(x)` for `from . import sh`.
    for (const id of identifiersNamed(direct ? local : helper.exported, root, memo)) {
      resolutionWork.visits++;
      const holder = id.parent();
      const callee = direct ? id : holder;
      if (!callee || (!direct && (callee.kind() !== 'attribute' || callee.field('object')?.text() !== local)))
        continue;
      if (!direct && callee.field('attribute')?.id() !== id.id()) continue;
      const call = callee.parent();
      if (call?.kind() !== 'call' || call.field('function')?.id() !== callee.id() || seen.has(call.id()))
        continue;
      // A function of the file with the same name hides the import.
      if (direct && localFunction(id, local, memo)) continue;
      for (const argument of argumentFor(call, callee, position, keyword)) {
        const { shape, parameters } = shapeWithParameters(argument, parse);
        if (shape.constant) continue;
        seen.add(call.id());
        found.push({ call, argument, through: helper.through });
        for (const next of parameters) {
          if (next.fn.kind() !== 'function_definition') continue;
          for (const c of closureOf(next, facts, memo, parse)) {
            if (seen.has(c.call.id())) continue;
            seen.add(c.call.id());
            found.push({ ...c, through: [...c.through, ...helper.through] });
          }
        }
        break;
      }
    }
  }
  return found;
}
