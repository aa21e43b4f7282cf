/**
 * What `svc review` and `svc findings` exit with, for CI: 1 is reserved for "a P0 is open", so a
 * typo on the command line (2) or a review that could not run (3) never reads as a finding.
 */
export const EXIT = {
  ok: 0,
  openP0: 1,
  usage: 2,
  failed: 3,
} as const;

/** An error the command reports in one line on stderr and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);
