/**
 * The data-flow adapters by rule language. A language without an adapter treats every value as
 * dynamic, so its rules report exactly what their patterns match.
 */
import type { SgNode } from '@ast-grep/napi';
import type { Steps } from '../../../core/cooperative';
import type { RuleLanguage } from '../../../skills/catalog';
import { goFlow } from './go';
import { javaFlow } from './java';
import { javascriptFlow } from './javascript';
import { pythonFlow } from './python';
import { dynamicShape, type FlowLanguage, type HelperCall, type ValueShape } from './types';

const ADAPTERS: Partial<Record<RuleLanguage, FlowLanguage>> = {
  // tree-sitter's TypeScript and TSX grammars extend JavaScript's: one adapter reads all three.
  javascript: javascriptFlow,
  typescript: javascriptFlow,
  tsx: javascriptFlow,
  python: pythonFlow,
  go: goFlow,
  java: javaFlow,
};

/** What reaches `node`, read by the adapter for `language`; `parse` as in FlowLanguage.shapeOf. */
export function shapeOf(language: RuleLanguage, node: SgNode, parse?: object): ValueShape {
  const adapter = ADAPTERS[language];
  return adapter ? adapter.shapeOf(node, parse) : dynamicShape(node.text());
}

/** Whether `node` is a variable bound from a call to one of `callees` (FlowLanguage.boundBy). */
export function boundBy(
  language: RuleLanguage,
  node: SgNode,
  callees: ReadonlySet<string>,
  parse?: object,
): boolean {
  return ADAPTERS[language]?.boundBy?.(node, callees, parse) ?? false;
}

/** The calls that reach the sink whose value is `node` through helpers (FlowLanguage.callersReaching). */
export function callersReaching(language: RuleLanguage, node: SgNode, parse?: object): HelperCall[] {
  return ADAPTERS[language]?.callersReaching?.(node, parse) ?? [];
}

/** Where the non-constant parts of the value `node` come in (FlowLanguage.sourcesOf); none without an adapter. */
export function sourcesOf(language: RuleLanguage, node: SgNode, parse?: object): SgNode[] {
  return ADAPTERS[language]?.sourcesOf?.(node, parse) ?? [];
}

/** The adapter's `prepare` steps for one parse (nothing for a language that needs none). */
export function* prepareFlow(
  language: RuleLanguage,
  root: SgNode,
  parse: object,
  yieldNow: () => boolean,
): Steps<void> {
  const adapter = ADAPTERS[language];
  if (adapter?.prepare) yield* adapter.prepare(root, parse, yieldNow);
}

export { type HelperCall, resolutionWork, type ValueShape } from './types';
