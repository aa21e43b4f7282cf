/**
 * Diffs of reviewed passes, kept for a while in the process: the console reads a pass's diff one
 * file at a time (`review_results_diff?path=…`), and without this each file asked the code host
 * for the whole diff again (git processes on the local host, paged API calls on GitHub, which
 * count against its rate limit). A diff between two commit ids never changes, so the only reasons
 * to drop one are memory and time: the cache holds at most ~64 MiB of diff text and forgets a
 * diff ten minutes after it was read. Readers of the same diff at the same moment share one read;
 * a failed read is not kept.
 */
import { LRUCache } from 'lru-cache';
import type { Diff } from '../core/review';
import type { CodeHost, DiffOptions } from './types';

const MAX_BYTES = 64 * 1024 * 1024;
const KEEP_MS = 10 * 60_000;

interface DiffRead {
  host: CodeHost;
  repo: string;
  base: string;
  head: string;
  options: DiffOptions;
}

/** Roughly what a diff holds in memory: its lines' text and a fixed cost per line and file. */
function approximateBytes(diff: Diff): number {
  let bytes = 1024;
  for (const file of diff.files) {
    bytes += 512 + file.path.length * 2;
    for (const hunk of file.hunks) for (const line of hunk.lines) bytes += 64 + line.text.length * 2;
  }
  return bytes;
}

/** `host.getDiff` with the default limits, from memory when this cache read it lately. */
export class DiffCache {
  private readonly diffs = new LRUCache<string, Diff, DiffRead>({
    maxSize: MAX_BYTES,
    // A diff bigger than the whole cache is answered but not kept.
    maxEntrySize: MAX_BYTES,
    sizeCalculation: approximateBytes,
    ttl: KEEP_MS,
    fetchMethod: (_key, _stale, { context }) =>
      context.host.getDiff(context.repo, context.base, context.head, {}, context.options),
  });

  async read(host: CodeHost, repo: string, base: string, head: string, options: DiffOptions = {}) {
    const key = [host.installationId, repo, base, head, options.pullRequest ?? ''].join('\u0000');
    const diff = await this.diffs.fetch(key, { context: { host, repo, base, head, options } });
    if (!diff) throw new Error(`the diff ${base}..${head} of ${repo} could not be read`);
    return diff;
  }
}
