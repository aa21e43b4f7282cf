/**
 * The CLI's findings ledger: one small JSON file per branch (or per commit range) in the
 * repository's git dir, `<git dir>/svc/ledger/<branch>.json`, so re-runs of `svc review` on a
 * branch share one ledger without a database. A review's effect on it is decided by
 * `reconcileLedger` (./ledger-reconcile.ts), exactly as for the service's database ledger: a
 * re-run never duplicates a finding, a finding whose code is gone is fixed, a dismissed finding
 * stays dismissed, an inline `svc-ignore` dismisses with its reason.
 *
 * Writes are atomic (a temporary file renamed over the old one), so a crash leaves the old ledger
 * or the new one, never half of one; read-modify-write runs under a lock file, so two `svc`
 * processes on one branch do not lose each other's changes.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type DispositionKind, dispositionRefusal, type Severity } from '../core/review';
import { type HeadText, type LedgerEntry, reconcileLedger, reportedFields } from './ledger-reconcile';
import type { MergedFinding } from './merge';

const FORMAT_VERSION = 1;
/** Characters of the fingerprint that make a finding's id: short enough to type, long enough to be unique. */
const ID_LENGTH = 12;
/** A lock older than this was left by a process that died; ledger writes take milliseconds. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

export interface FileLedgerFinding extends LedgerEntry {
  /** The fingerprint's first characters: what `svc findings dismiss` takes. */
  id: string;
  severity: Severity;
  line: number;
  endLine: number;
  title: string;
  body: string;
  rule: string;
  category: string;
  suggestion: string | null;
  /** The head (commit, or tree of uncommitted changes) the finding was last reported at. */
  commitSha: string;
  dismissedReason: string | null;
  dismissedAt: string | null;
  /** Who dismissed it: an inline `svc-ignore`, or a person with `svc findings dismiss`. */
  dismissedBy: 'inline' | 'cli' | null;
  fixedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface LedgerDocument {
  version: number;
  /** The branch (or range) this ledger belongs to. */
  name: string;
  findings: FileLedgerFinding[];
}

export interface FileLedgerOutcome {
  /** Findings this review reported (new, still open, or still dismissed), in report order. */
  reported: FileLedgerFinding[];
  opened: number;
  reopened: number;
  fixed: number;
  stillDismissed: number;
  dismissedInline: number;
}

/** The ledger file is unreadable (hand-edited, from a newer svc): nothing is overwritten. */
export class LedgerFileError extends Error {
  override name = 'LedgerFileError';
}

/** No finding, or more than one, has the id given. */
export class FindingLookupError extends Error {
  override name = 'FindingLookupError';
}

/**
 * The ledger file's name for a branch, or for a range when no branch is reviewed. Git branch
 * names never contain `..`, so a range's name cannot collide with a branch's.
 */
export function ledgerFileName(target: { branch: string } | { base: string; head: string }): string {
  return 'branch' in target
    ? `${encodeURIComponent(target.branch)}.json`
    : `${target.base}..${target.head}.json`;
}

export class FileLedger {
  constructor(
    /** `<git dir>/svc/ledger/<name>.json` */
    readonly file: string,
    /** What the ledger belongs to, for people: `feature/login`, `<base>..<head>`. */
    readonly name: string,
  ) {}

  /** Every finding in the ledger (none when the file does not exist yet). */
  async findings(): Promise<FileLedgerFinding[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    let doc: LedgerDocument;
    try {
      doc = JSON.parse(text) as LedgerDocument;
    } catch (error) {
      throw new LedgerFileError(
        `${this.file} is not valid JSON (${(error as Error).message}); move it away to start a new ledger`,
      );
    }
    if (doc?.version !== FORMAT_VERSION || !Array.isArray(doc.findings))
      throw new LedgerFileError(
        `${this.file} is ledger format ${String(doc?.version)}, this svc reads format ${FORMAT_VERSION}`,
      );
    return doc.findings;
  }

  /** Records a review's findings (see the file comment); `head` is the reviewed commit or tree. */
  async record(
    found: MergedFinding[],
    headText: HeadText,
    inspectedPaths: ReadonlySet<string>,
    head: string,
  ): Promise<FileLedgerOutcome> {
    return this.locked(async () => {
      const now = new Date().toISOString();
      const existing = await this.findings();
      const plan = reconcileLedger(existing, found, headText, inspectedPaths);
      const fieldsOf = (finding: MergedFinding) => ({
        ...reportedFields(finding),
        commitSha: head,
        updatedAt: now,
      });
      const replaced = new Map<FileLedgerFinding, FileLedgerFinding>();
      const reported: FileLedgerFinding[] = [];
      for (const { entry, finding, reviewers, transition, dismissedReason, anchor } of plan.seenAgain) {
        const updated: FileLedgerFinding = {
          ...entry,
          ...fieldsOf(finding),
          reviewers,
          ...(anchor !== null ? { anchorText: anchor } : {}),
          ...(transition === 'reopen' ? { status: 'open' as const, fixedAt: null } : {}),
          ...(transition === 'dismiss'
            ? {
                status: 'dismissed' as const,
                dismissedReason,
                dismissedAt: now,
                dismissedBy: 'inline' as const,
                fixedAt: null,
              }
            : {}),
        };
        replaced.set(entry, updated);
        reported.push(updated);
      }
      const fresh = plan.fresh.map(
        (f): FileLedgerFinding => ({
          id: f.fingerprint.slice(0, ID_LENGTH),
          fingerprint: f.fingerprint,
          status: f.status,
          rule: f.finding.rule,
          reviewers: f.finding.reviewers,
          anchorText: f.anchor,
          dismissedReason: f.dismissedReason,
          dismissedAt: f.status === 'dismissed' ? now : null,
          dismissedBy: f.status === 'dismissed' ? 'inline' : null,
          fixedAt: null,
          createdAt: now,
          ...fieldsOf(f.finding),
        }),
      );
      reported.push(...fresh);
      for (const entry of plan.fixed)
        replaced.set(entry, { ...entry, status: 'fixed', fixedAt: now, updatedAt: now });
      await this.write([...existing.map((f) => replaced.get(f) ?? f), ...fresh]);
      return {
        reported,
        opened: fresh.filter((f) => f.status === 'open').length,
        reopened: plan.reopened,
        fixed: plan.fixed.length,
        stillDismissed: plan.stillDismissed,
        dismissedInline: plan.dismissedInline,
      };
    });
  }

  /**
   * Changes the one finding whose id (or fingerprint) starts with `idPrefix`; `change` returns the
   * finding as it should be. Returns the finding before and after.
   */
  async update(
    idPrefix: string,
    change: (finding: FileLedgerFinding, now: string) => FileLedgerFinding,
  ): Promise<{ before: FileLedgerFinding; after: FileLedgerFinding }> {
    const prefix = idPrefix.trim().toLowerCase();
    if (!/^[0-9a-f]{4,}$/.test(prefix))
      throw new FindingLookupError(`${JSON.stringify(idPrefix)} is not a finding id (4 or more hex digits)`);
    return this.locked(async () => {
      const all = await this.findings();
      const matches = all.filter((f) => f.fingerprint.startsWith(prefix));
      const before = matches[0];
      if (!before || matches.length > 1)
        throw new FindingLookupError(
          matches.length === 0
            ? `no finding ${prefix} in the ledger of ${this.name}`
            : `${prefix} names ${matches.length} findings (${matches.map((f) => f.id).join(', ')}); give more of the id`,
        );
      const after = change(before, new Date().toISOString());
      await this.write(all.map((f) => (f === before ? after : f)));
      return { before, after };
    });
  }

  /** A person's answer: the finding stays dismissed, with `reason`, on every later review. */
  dismiss(idPrefix: string, reason: string) {
    return this.update(idPrefix, (f, now) => ({
      ...refuseUnless(f, 'dismissed'),
      status: 'dismissed',
      dismissedReason: reason,
      dismissedAt: now,
      dismissedBy: 'cli',
      fixedAt: null,
      updatedAt: now,
    }));
  }

  /** Takes a dismissal back: the finding is open again (only a dismissed finding can be reopened). */
  reopen(idPrefix: string) {
    return this.update(idPrefix, (f, now) => {
      return {
        ...refuseUnless(f, 'reopened'),
        status: 'open',
        dismissedReason: null,
        dismissedAt: null,
        dismissedBy: null,
        updatedAt: now,
      };
    });
  }

  /** Replaces the file atomically: a crash leaves the old ledger or the new one. */
  private async write(findings: FileLedgerFinding[]): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const doc: LedgerDocument = {
      version: FORMAT_VERSION,
      name: this.name,
      findings: [...findings].sort(
        (a, b) => a.path.localeCompare(b.path) || a.line - b.line || a.id.localeCompare(b.id),
      ),
    };
    const temp = join(
      dirname(this.file),
      `.${basename(this.file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(doc, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, this.file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** Runs `work` holding `<file>.lock` (created exclusively); a lock left by a dead process is broken. */
  private async locked<T>(work: () => Promise<T>): Promise<T> {
    const lock = `${this.file}.lock`;
    await mkdir(dirname(lock), { recursive: true });
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const handle = await open(lock, 'wx');
        await handle.writeFile(String(process.pid));
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > STALE_LOCK_MS) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline)
          throw new LedgerFileError(`${lock} is held by another svc process; remove it if none is running`);
        await new Promise((r) => setTimeout(r, 25 + Math.random() * 25));
      }
    }
    try {
      return await work();
    } finally {
      await rm(lock, { force: true });
    }
  }
}

/** The same rules as the service's ledger (`dispositionRefusal`): the CLI and the API agree. */
function refuseUnless(f: FileLedgerFinding, kind: DispositionKind): FileLedgerFinding {
  const refusal = dispositionRefusal(f.status, kind);
  if (refusal) throw new FindingLookupError(`finding ${f.id} cannot be ${kind}: ${refusal}`);
  return f;
}
