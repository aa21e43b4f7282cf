/**
 * What a value is, as far as the code around it tells: the data-flow question an injection rule
 * asks of the argument that reaches its sink. A rule reports only when a value the code did not
 * write itself (a parameter, a request field, a call's result) reaches the sink; constants,
 * literals and strings built only from them stay quiet.
 */
import type { SgNode } from '@ast-grep/napi';
import type { Steps } from '../../../core/cooperative';

export interface ValueShape {
  /** True when every part of the value is written in the code: literals, constants, or strings built only from them. */
  constant: boolean;
  /**
   * The value's text as far as it is known: literal parts verbatim, every part the code does not
   * fix replaced by `DYNAMIC` (U+0000). Rules match it to tell SQL from a cache key.
   */
  text: string;
}

/** Stands in the shape's text for a part whose value the code does not fix. */
export const DYNAMIC = '\u0000';

export const constantShape = (text: string): ValueShape => ({ constant: true, text });
export const dynamicShape = (text = DYNAMIC): ValueShape => ({ constant: false, text });

/** Joins the shapes of the parts of a concatenation, template or format call. */
export function joinShapes(parts: ValueShape[]): ValueShape {
  return { constant: parts.every((p) => p.constant), text: parts.map((p) => p.text).join('') };
}

/**
 * One language's answer to "what reaches this node": literals are constant; a name is resolved
 * to what is assigned to it within its enclosing function (or the module's constants), never
 * file-wide by name; a parameter, a call result or anything unresolved is dynamic.
 */
export interface FlowLanguage {
  /**
   * `parse` stands for the one parse of the file the node is in: an adapter may remember work on
   * that file under it (in a WeakMap) for the next question, so the hundredth sink in a file does
   * not search the whole file again. Without it nothing is remembered between calls.
   */
  shapeOf(node: SgNode, parse?: object): ValueShape;
  /**
   * Work on the whole parse done ahead of the first `shapeOf` for it, in steps that yield when
   * `yieldNow` says so (a search of a 1 MB file must not hold the event loop). Optional: an
   * adapter that needs it and was not prepared does the same work at once on its first question.
   */
  prepare?(root: SgNode, parse: object, yieldNow: () => boolean): Steps<void>;
  /**
   * True when `node` is a variable its function (or the file) binds, somewhere, from a call to one
   * of `callees` (`pkg.Func`): `git, err := exec.LookPath("git")` for `exec.LookPath`. A rule's
   * `flow.unless_bound_by` asks it. Answered from the parse's index, so a file of thousands of
   * sinks asks it in linear time. Optional: an adapter without it answers false.
   */
  boundBy?(node: SgNode, callees: ReadonlySet<string>, parse?: object): boolean;
  /**
   * The calls in the file that hand a non-constant value to the sink whose value is `value`
   * through a same-file function's parameter, at any depth: with `function run(cmd) { exec(cmd) }`,
   * `run('git log ' + ref)` (and a caller of a function that passes its own parameter to `run`).
   * A rule's `flow.callers` asks it, so a changed call is reported when the helper is not.
   * Optional: an adapter without it follows no helper.
   */
  callersReaching?(value: SgNode, parse?: object): HelperCall[];
  /**
   * Where the non-constant parts of `value` come in (the innermost expressions the adapter found
   * dynamic, in the sink's function and the bindings it reads): a change that edits one of their
   * lines changed what reaches the sink even when the sink's line is untouched. Optional.
   */
  sourcesOf?(value: SgNode, parse?: object): SgNode[];
}

/** A call whose argument reaches a sink through the parameters of the file's own functions. */
export interface HelperCall {
  call: SgNode;
  /** The argument that reaches the sink. */
  argument: SgNode;
  /** The functions the value passes through, from the one called here to the one holding the sink. */
  through: { helper: string; parameter: string }[];
}

/**
 * Resolution work done by the adapters: each identifier indexed, occurrence classified,
 * declaration or write examined and scope looked at adds one. Tests read it to show the work per
 * sink stays bounded as a file grows (a count, where a timing would be noise).
 */
export const resolutionWork = { visits: 0 };
