/** File paths as both hosts take them from callers. */
import { repoPathProblem } from '../core/git-grammar';
import { CodeHostError } from './types';

/** A repository-relative file path (core/git-grammar.ts): no absolute paths, no `.`/`..`/empty segments. */
export function checkRepoPath(path: string): void {
  const why = repoPathProblem(path);
  if (why)
    throw new CodeHostError(
      `path ${JSON.stringify(path)} is not a file path inside the repository (relative, without . or .. segments): ${why}`,
      'invalid_input',
    );
}
