/**
 * A range of a local repository as a review reads it, straight from git in the repository's own
 * directory: the diff between two commits (or a commit and a tree, for uncommitted changes) and
 * the head side's file contents. The same git invocations and parser as the local code host
 * (src/codehost/local/local-host.ts `getDiff`/`readFiles`), without its `owner/repo` layout,
 * so `svc review` works on a repository anywhere on disk.
 */

import { GitDiffParser } from '../codehost/local/diff-parser';
import { GitFailure, gitBuffer, gitOrNull, gitStream } from '../codehost/local/git';
import { DEFAULT_DIFF_LIMITS } from '../codehost/types';
import type { Diff } from '../core/review';

/** Git could not read the range: a name that resolves to nothing, a broken repository. */
export class RangeReadError extends Error {
  override name = 'RangeReadError';
}

/**
 * The diff from `base` to `head` (commit or tree ids). Settings that would change git's output
 * format (a user's diff config) are pinned so the parser always reads the same layout.
 */
export async function diffRange(dir: string, base: string, head: string): Promise<Diff> {
  const limits = DEFAULT_DIFF_LIMITS;
  const parser = new GitDiffParser(base, head, limits);
  const args = [
    '-c',
    'core.quotepath=off',
    '-c',
    'diff.noprefix=false',
    '-c',
    'diff.mnemonicPrefix=false',
    '-c',
    'diff.suppressBlankEmpty=false',
    '-c',
    'diff.relative=false',
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--submodule=short',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '-U3',
    '-M',
    ...(limits.detectCopies ? ['-C'] : []),
    '-z',
    '--raw',
    '--numstat',
    '-p',
    base,
    head,
    '--',
  ];
  try {
    const { stderr } = await gitStream(dir, args, (chunk) => parser.push(chunk));
    return parser.end(stderr);
  } catch (error) {
    if (error instanceof GitFailure) throw new RangeReadError(`git diff failed: ${error.message}`);
    throw error;
  }
}

/** The contents of `paths` in `treeish` (null: absent there, or not a file), with one `git cat-file --batch`. */
export async function readBlobs(
  dir: string,
  treeish: string,
  paths: readonly string[],
): Promise<Map<string, Buffer | null>> {
  const unique = [...new Set(paths)];
  // A batch request is one line; a path with a line break is looked up on its own first.
  const requests = await Promise.all(
    unique.map(async (path) =>
      /[\n\r]/.test(path)
        ? ((await gitOrNull(dir, ['rev-parse', '--verify', '--quiet', `${treeish}:${path}`]))?.trim() ??
          'missing')
        : `${treeish}:${path}`,
    ),
  );
  const result = new Map<string, Buffer | null>();
  if (unique.length === 0) return result;
  let out: Buffer;
  try {
    out = await gitBuffer(dir, ['cat-file', '--batch'], `${requests.join('\n')}\n`);
  } catch (error) {
    if (error instanceof GitFailure) throw new RangeReadError(`git cat-file failed: ${error.message}`);
    throw error;
  }
  let at = 0;
  for (const path of unique) {
    const nl = out.indexOf(10, at);
    if (nl < 0) {
      result.set(path, null);
      continue;
    }
    const header = out.toString('latin1', at, nl);
    at = nl + 1;
    const match = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
    if (!match) {
      result.set(path, null);
      continue;
    }
    const size = Number(match[3]);
    result.set(path, match[2] === 'blob' ? Buffer.from(out.subarray(at, at + size)) : null);
    at += size + 1;
  }
  return result;
}

/** Bytes as text the way the service reads them: UTF-8, or latin1 when that is not valid UTF-8. */
export function decodeText(buffer: Buffer | null | undefined): string | null {
  if (!buffer) return null;
  const text = buffer.toString('utf8');
  // Not UTF-8: read it as latin1 so offsets stay one character per byte (the diff did the same).
  return text.includes('\uFFFD') ? buffer.toString('latin1') : text;
}
