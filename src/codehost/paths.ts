/** File paths as both hosts take them from callers. */
import { CodeHostError } from './types';

/** A repository-relative file path: no absolute paths, no `.`/`..`/empty segments. */
export function checkRepoPath(path: string): void {
  if (
    typeof path !== 'string' ||
    path.length === 0 ||
    path.includes('\0') ||
    path.startsWith('/') ||
    path.split('/').some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new CodeHostError(
      `path ${JSON.stringify(path)} is not a file path inside the repository (relative, without . or .. segments)`,
      'invalid_input',
    );
  }
}
