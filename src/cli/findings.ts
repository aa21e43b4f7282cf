/**
 * `svc findings list|dismiss|reopen`: a person's answers to the CLI's findings, kept in the
 * branch's file ledger, which the next `svc review` honours (a dismissed finding stays dismissed
 * and does not count toward the exit code).
 */
import { join, resolve } from 'node:path';
import { FileLedger, FindingLookupError, LedgerFileError, ledgerFileName } from '../review/file-ledger';
import { CliError, EXIT, usageError } from './exit-codes';
import { findingOutput, formatLedgerText } from './format-text';
import { currentBranch, openRepository } from './repository';

export interface FindingsCliOptions {
  repo?: string;
  branch?: string;
  status?: string;
  format?: string;
  reason?: string;
}

export const STATUSES = ['open', 'dismissed', 'fixed', 'all'] as const;

async function ledgerOf(options: FindingsCliOptions): Promise<FileLedger> {
  const repo = await openRepository(resolve(options.repo ?? '.'));
  const branch = options.branch ?? (await currentBranch(repo.dir));
  if (!branch) throw usageError('HEAD is detached, so there is no branch ledger: pass --branch <name>');
  return new FileLedger(join(repo.commonDir, 'svc', 'ledger', ledgerFileName({ branch })), branch);
}

/** Runs one findings subcommand; ledger problems are failures (3), a wrong id or state is input (2). */
async function guarded(work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FindingLookupError) throw usageError(error.message);
    if (error instanceof LedgerFileError) throw new CliError(error.message, EXIT.failed);
    throw error;
  }
}

export function findingsList(options: FindingsCliOptions, out = (s: string) => process.stdout.write(s)) {
  return guarded(async () => {
    const status = options.status ?? 'all';
    if (!STATUSES.includes(status as (typeof STATUSES)[number]))
      throw usageError(`--status must be one of ${STATUSES.join(', ')}, not ${status}`);
    const ledger = await ledgerOf(options);
    const findings = (await ledger.findings()).filter((f) => status === 'all' || f.status === status);
    if (options.format === 'json')
      out(`${JSON.stringify({ ledger: ledger.name, findings: findings.map(findingOutput) }, null, 2)}\n`);
    else out(formatLedgerText(findings, { color: process.stdout.isTTY === true && !process.env.NO_COLOR }));
    return EXIT.ok;
  });
}

export function findingsDismiss(
  id: string,
  options: FindingsCliOptions,
  err = (s: string) => process.stderr.write(s),
) {
  return guarded(async () => {
    const reason = options.reason?.trim();
    if (!reason) throw usageError('a dismissal needs a reason: --reason "why this is not a defect here"');
    const ledger = await ledgerOf(options);
    const { after } = await ledger.dismiss(id, reason);
    err(`svc: dismissed ${after.id} (${after.rule} at ${after.path}:${after.line})\n`);
    return EXIT.ok;
  });
}

export function findingsReopen(
  id: string,
  options: FindingsCliOptions,
  err = (s: string) => process.stderr.write(s),
) {
  return guarded(async () => {
    const ledger = await ledgerOf(options);
    const { before, after } = await ledger.reopen(id);
    err(`svc: reopened ${after.id} (${after.rule} at ${after.path}:${after.line})\n`);
    if (before.dismissedBy === 'inline')
      err(
        'svc: its svc-ignore comment dismisses it again on the next review: remove the comment to keep it open\n',
      );
    return EXIT.ok;
  });
}
