/**
 * `findAll` over a large tree in pieces, with a yield between them. One `findAll` over a 1 MB
 * file runs 70-400 ms in native code without a break, and a file is searched once per rule: the
 * server could not answer meanwhile. Searching subtrees of at most SLICE_BYTES separately finds
 * the same nodes in the same (pre-)order: relational rules (`inside`, `follows`) still see the
 * whole tree, since a subtree's nodes keep their parents.
 */
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import type { Steps } from '../../core/cooperative';

/** Source bytes searched by one native call at most (but see MAX_FANOUT). */
export const SLICE_BYTES = 32_000;
/**
 * Children a large node is split into at most. Each native call compiles the rule again (0.1-2 ms
 * for the catalog's rules), so a node of thousands of small children (a module of many short
 * functions, one long function body) is searched in one call: split, the calls would cost more
 * than the search.
 */
export const MAX_FANOUT = 256;

const sizeOf = (node: SgNode): number => {
  const range = node.range();
  return range.end.index - range.start.index;
};

/**
 * The nodes under `node` (itself included) that match `config`, in pre-order as `findAll` returns
 * them. `yieldNow` is asked after every native search; when it says so, the steps yield.
 */
export function* findAllSliced(
  node: SgNode,
  config: NapiConfig,
  yieldNow: () => boolean,
  into: SgNode[] = [],
): Steps<SgNode[]> {
  const children = sizeOf(node) > SLICE_BYTES ? node.children() : [];
  if (children.length === 0 || children.length > MAX_FANOUT) {
    into.push(...node.findAll(config));
    if (yieldNow()) yield;
    return into;
  }
  // `find` returns the first match in pre-order: the node itself when it matches, with its
  // metavariables bound as `findAll` would have.
  if (node.matches(config)) {
    const self = node.find(config);
    if (self) into.push(self);
  }
  for (const child of children) yield* findAllSliced(child, config, yieldNow, into);
  return into;
}
