/**
 * `findAll` over a large tree in pieces, with a yield between them. One `findAll` over a 1 MB
 * file runs 70-400 ms in native code without a break, and a file is searched once per rule: the
 * file budget is checked, and a cooperative caller yields, only between native calls. Searching
 * subtrees separately finds the same nodes in the same (pre-)order: relational rules (`inside`,
 * `follows`) still see the whole tree, since a subtree's nodes keep their parents.
 *
 * Every native call compiles the rule again: 0.1-2 ms for most of the catalog's rules, ~10 ms
 * for one with large case-insensitive regular expressions. So pieces are few and large: an
 * 80 KB file cut into 32 KB pieces, its statements searched one call each, made 284 calls and
 * 3 s of compiling for one rule that found nothing (jquery-ui's datepicker.js).
 */
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import type { Steps } from '../../core/cooperative';

/**
 * A node larger than this is searched through its children (but see MAX_FANOUT). The service
 * matches in an analysis thread (./match-pool.ts), so a native call of this size holds no
 * request; it only delays the next budget check by a few tens of milliseconds.
 */
export const SLICE_BYTES = 128_000;
/**
 * Children a large node is split into at most: a node of more (a module of many functions, one
 * long function body) is searched in one call, since splitting it would cost a compile per
 * child. A 1 MB file of thousands of small functions is one call per rule either way.
 */
export const MAX_FANOUT = 16;

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
