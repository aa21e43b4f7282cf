/**
 * The two reads every review makes of a repository on disk, shared by the local code host and
 * `svc review` (which works on a repository anywhere, without the host's `owner/repo` layout):
 * the diff between two commits (or a commit and a tree) and the head side's file contents. Both
 * throw `GitFailure`; callers name the failure in their own terms.
 */
import type { Diff } from '../../core/review';
import type { DiffLimits } from '../types';
import { GitDiffParser } from './diff-parser';
import { gitBuffer, gitOrNull, gitStream } from './git';

/**
 * `git diff` from `base` to `head`, parsed. Settings that would change git's output format (a
 * user's diff config) are pinned so the parser always reads the same layout.
 */
export async function gitDiff(dir: string, base: string, head: string, limits: DiffLimits): Promise<Diff> {
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
    // Both ends are revisions, whatever they start with; no path limits the diff.
    '--end-of-options',
    base,
    head,
    '--',
  ];
  const { stderr } = await gitStream(dir, args, (chunk) => parser.push(chunk));
  return parser.end(stderr);
}

/** The contents of `paths` in `treeish` (null: absent there, or not a file), with one `git cat-file --batch`. */
export async function readBlobs(
  dir: string,
  treeish: string,
  paths: readonly string[],
): Promise<Map<string, Buffer | null>> {
  const unique = [...new Set(paths)];
  const result = new Map<string, Buffer | null>();
  if (unique.length === 0) return result;
  // A batch request is one line; a path with a line break is looked up on its own first.
  const requests = await Promise.all(
    unique.map(async (path) =>
      /[\n\r]/.test(path)
        ? ((
            await gitOrNull(dir, [
              'rev-parse',
              '--verify',
              '--quiet',
              '--end-of-options',
              `${treeish}:${path}`,
            ])
          )?.trim() ?? 'missing')
        : `${treeish}:${path}`,
    ),
  );
  const out = await gitBuffer(dir, ['cat-file', '--batch'], `${requests.join('\n')}\n`);
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
