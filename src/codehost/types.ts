/**
 * What svc needs from a code host (the local git host, GitHub). This slice: find a
 * repository and read its tree; pull requests, diffs and posting arrive with the reviews work.
 */
export interface RepositoryTree {
  /** The ref that was read (e.g. HEAD, main). */
  ref: string;
  commit: string;
  files: { path: string; size: number | null }[];
  /** True when the tree was larger than the host returns at once. */
  truncated: boolean;
}

export interface CodeHost {
  readonly kind: 'local' | 'github';
  readonly installationId: number;
  /** Resolves `owner/repo`; false when the host does not have it. */
  repositoryExists(fullName: string): Promise<boolean>;
  /** The repository's tree at its default branch head. */
  readTree(fullName: string): Promise<RepositoryTree>;
}

/** The code host answered with something svc cannot use; the message says what. */
export class CodeHostError extends Error {
  constructor(
    message: string,
    readonly reason: 'not_found' | 'unavailable' | 'failed',
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CodeHostError';
  }
}
