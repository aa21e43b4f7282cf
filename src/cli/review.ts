/**
 * `svc review`: reviews a local git range without the service (no database, no worker) and keeps
 * the findings in the branch's file ledger in the git dir, so re-runs on a branch share one ledger
 * and honour `svc findings dismiss`. With no flags it reviews the current branch against its merge
 * base with the default branch. Exit codes (./exit-codes.ts): 0 no open P0, 1 an open P0, 2 usage
 * or input error, 3 the review failed.
 */
import { writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { FileLedger, type FileLedgerFinding, LedgerFileError, ledgerFileName } from '../review/file-ledger';
import { RangeReadError } from '../review/local-range';
import {
  type LocalReviewResult,
  ReviewFailedError,
  ReviewInputError,
  reviewLocalRange,
} from '../review/local-review';
import { CliError, EXIT, usageError } from './exit-codes';
import { bySeverity, formatReviewText, reviewFindingOutput } from './format-text';
import {
  commitOf,
  countCommits,
  currentBranch,
  defaultBranch,
  mergeBase,
  openRepository,
  type Repository,
  uncommittedPaths,
  workTreeSnapshot,
} from './repository';
import { packageVersion } from './version';

export const FORMATS = ['text', 'json', 'sarif'] as const;
export type Format = (typeof FORMATS)[number];

/** Open findings the text output shows before it counts the rest (`--all` shows every one). */
export const TEXT_LIMIT = 50;

export interface ReviewCliOptions {
  repo?: string;
  base?: string;
  head?: string;
  includeUncommitted?: boolean;
  reviewers?: string;
  format?: string;
  output?: string;
  all?: boolean;
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  color: boolean;
}

const processIo = (): CliIo => ({
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
});

/** What is reviewed: the two ends, as given and as commits, and the ledger it belongs to. */
interface Target {
  baseLabel: string;
  headLabel: string;
  baseSha: string;
  headSha: string;
  /** The base as named, as a commit (`baseSha` is where the head left it, when they share history). */
  baseRefSha: string;
  /** Where the head left the base; null when they share no history (then `baseSha` is the base). */
  mergeBaseSha: string | null;
  /** The branch whose ledger this is; null: a range ledger (detached HEAD, a commit as --head). */
  branch: string | null;
  commits: number;
  /** Why there is nothing to review (said on stderr), or null. */
  nothing: string | null;
}

/** What the JSON output counts, in this order. */
const COUNT_NAMES = [
  'findings',
  'p0',
  'p1',
  'p2',
  'opened',
  'reopened',
  'fixed',
  'dismissed',
  'dismissed_inline',
  'files',
  'changed_lines',
  'reviewers',
] as const;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

async function resolveEnd(repo: Repository, ref: string, flag: string): Promise<string> {
  if (ref.startsWith('-')) throw usageError(`${flag} ${ref} is not a ref`);
  const sha = await commitOf(repo.dir, ref);
  if (!sha) throw usageError(`${flag} ${ref} does not resolve to a commit in ${repo.dir}`);
  return sha;
}

async function chooseTarget(repo: Repository, options: ReviewCliOptions): Promise<Target> {
  const headSha = options.head
    ? await resolveEnd(repo, options.head, '--head')
    : await commitOf(repo.dir, 'HEAD').then((sha) => {
        if (!sha) throw usageError(`${repo.dir} has no commits yet`);
        return sha;
      });
  const branch = options.head
    ? (await commitOf(repo.dir, `refs/heads/${options.head}`))
      ? options.head
      : null
    : await currentBranch(repo.dir);
  const headLabel = options.head ?? branch ?? 'HEAD';

  if (options.base) {
    const given = await resolveEnd(repo, options.base, '--base');
    // As `git diff base...head` and a pull request show it: from where the head left the base.
    const mergeBaseSha = await mergeBase(repo.dir, given, headSha);
    const baseSha = mergeBaseSha ?? given;
    return branchRange(repo, {
      baseLabel: options.base,
      headLabel,
      baseSha,
      headSha,
      baseRefSha: given,
      mergeBaseSha,
      branch,
    });
  }
  const main = await defaultBranch(repo.dir);
  if (!main)
    throw usageError(
      'found no default branch to compare with (no origin/HEAD, init.defaultBranch, main or master names an existing branch); pass --base <ref>',
    );
  if (branch !== null && branch === main.name)
    return {
      baseLabel: main.ref,
      headLabel,
      baseSha: headSha,
      headSha,
      baseRefSha: headSha,
      mergeBaseSha: headSha,
      branch,
      commits: 0,
      nothing: `on the default branch ${main.name}: nothing to compare (check out a branch, or pass --base <ref>)`,
    };
  const baseSha = await mergeBase(repo.dir, main.ref, headSha);
  if (!baseSha)
    throw usageError(
      `${headLabel} shares no history with ${main.ref} (a shallow clone? fetch the history, e.g. fetch-depth: 0), or pass --base <ref>`,
    );
  return branchRange(repo, {
    baseLabel: main.ref,
    headLabel,
    baseSha,
    headSha,
    baseRefSha: (await commitOf(repo.dir, main.ref)) ?? baseSha,
    mergeBaseSha: baseSha,
    branch,
  });
}

/** The range from the merge base to the head, and whether it holds anything to review. */
async function branchRange(repo: Repository, ends: Omit<Target, 'commits' | 'nothing'>): Promise<Target> {
  const commits = await countCommits(repo.dir, ends.baseSha, ends.headSha);
  return {
    ...ends,
    commits,
    nothing:
      commits === 0
        ? `nothing to compare: ${ends.headLabel} has no commits that are not on ${ends.baseLabel}`
        : null,
  };
}

function parseReviewers(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) throw usageError('--reviewers needs at least one reviewer id');
  return ids;
}

interface Rendered {
  reported: FileLedgerFinding[];
  target: Target;
  head: string;
  uncommitted: boolean;
  ledger: FileLedger | null;
  review: LocalReviewResult | null;
  counts: Record<string, number>;
}

async function render(format: Format, r: Rendered, options: ReviewCliOptions, io: CliIo): Promise<string> {
  const reported = [...r.reported].sort(bySeverity);
  if (format === 'text')
    return formatReviewText(reported, {
      color: io.color && !options.output,
      limit: options.all ? Infinity : TEXT_LIMIT,
      coverage: r.review?.coverage,
      gaps: r.review?.gaps,
    });
  if (format === 'sarif') {
    const [{ toSarif }, { loadCatalog }] = await Promise.all([
      import('./sarif'),
      import('../skills/catalog'),
    ]);
    const doc = toSarif(reported, {
      toolVersion: packageVersion(),
      baseSha: r.target.baseSha,
      headSha: r.head,
      skills: await loadCatalog(),
      gaps: r.review?.gaps ?? [],
      coverage: r.review?.coverage ?? null,
    });
    return `${JSON.stringify(doc, null, 2)}\n`;
  }
  const doc = {
    object: 'review' as const,
    tool: { name: 'svc', version: packageVersion() },
    base: { ref: r.target.baseLabel, sha: r.target.baseSha },
    head: { ref: r.target.headLabel, sha: r.target.headSha, reviewed: r.head, uncommitted: r.uncommitted },
    commits: r.target.commits,
    ledger: r.ledger ? { name: r.ledger.name, file: r.ledger.file } : null,
    lineup: r.review?.lineup ?? [],
    plan: r.review?.plan ?? null,
    counts: r.counts,
    coverage: r.review?.coverage ?? null,
    gaps: r.review?.gaps ?? [],
    timings: r.review ? { ...r.review.timings, by_reviewer_ms: r.review.byReviewerMs } : {},
    findings: reported.map((f) => reviewFindingOutput(f, r.review?.roles ?? new Map())),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export async function reviewCommand(options: ReviewCliOptions, io: CliIo = processIo()): Promise<number> {
  const started = performance.now();
  const format = (options.format ?? 'text') as Format;
  if (!FORMATS.includes(format))
    throw usageError(`--format must be text, json or sarif, not ${options.format}`);
  const reviewers = parseReviewers(options.reviewers);
  if (options.includeUncommitted && options.head)
    throw usageError('--include-uncommitted reviews the work tree, so it cannot be combined with --head');
  const repo = await openRepository(resolve(options.repo ?? '.'));
  const target = await chooseTarget(repo, options);

  // Uncommitted changes belong to the checked-out HEAD: only then are they the user's next commit.
  const dirty = options.head || repo.bare ? [] : await uncommittedPaths(repo.dir);
  const uncommitted = options.includeUncommitted === true && dirty.length > 0;
  if (dirty.length > 0 && !uncommitted)
    io.stderr(
      `svc: warning: ${plural(dirty.length, 'file has', 'files have')} uncommitted changes that are not reviewed (--include-uncommitted reviews them)\n`,
    );
  const range = `${target.baseLabel}...${target.headLabel}`;
  const output = async (rendered: Rendered) => {
    const text = await render(format, rendered, options, io);
    if (options.output) writeFileSync(options.output, text);
    else io.stdout(text);
  };

  if (target.nothing !== null && !uncommitted) {
    io.stderr(`svc: ${target.nothing}\n`);
    await output({
      reported: [],
      target,
      head: target.headSha,
      uncommitted: false,
      ledger: null,
      review: null,
      counts: Object.fromEntries(COUNT_NAMES.map((name) => [name, 0])),
    });
    return EXIT.ok;
  }

  const head = uncommitted ? await workTreeSnapshot(repo) : target.headSha;
  const what = [
    target.commits > 0 ? plural(target.commits, 'commit') : null,
    uncommitted ? `uncommitted changes (${plural(dirty.length, 'file')})` : null,
  ]
    .filter(Boolean)
    .join(' and ');
  io.stderr(`svc: reviewing ${what} ${range}\n`);

  const ledger = new FileLedger(
    join(
      repo.commonDir,
      'svc',
      'ledger',
      ledgerFileName(
        target.branch ? { branch: target.branch } : { base: target.baseSha, head: target.headSha },
      ),
    ),
    target.branch ?? `${target.baseSha}..${target.headSha}`,
  );
  try {
    const openPaths = (await ledger.findings()).filter((f) => f.status === 'open').map((f) => f.path);
    const review = await reviewLocalRange({
      dir: repo.dir,
      base: target.baseSha,
      head,
      ends: { base: target.baseRefSha, mergeBase: target.mergeBaseSha },
      ledgerPaths: [...new Set(openPaths)],
      reviewers,
      env: io.env,
    });
    const outcome = await ledger.record(review.findings, review.headText, review.inspectedPaths, head);
    for (const gap of review.gaps) io.stderr(`svc: note: ${gap.code}: ${gap.message}\n`);
    const open = outcome.reported.filter((f) => f.status === 'open');
    const counts: Record<(typeof COUNT_NAMES)[number], number> = {
      findings: outcome.reported.length,
      p0: open.filter((f) => f.severity === 'P0').length,
      p1: open.filter((f) => f.severity === 'P1').length,
      p2: open.filter((f) => f.severity === 'P2').length,
      opened: outcome.opened,
      reopened: outcome.reopened,
      fixed: outcome.fixed,
      dismissed: outcome.stillDismissed,
      dismissed_inline: outcome.dismissedInline,
      files: review.diff.files.length,
      changed_lines: review.diff.files.reduce((n, f) => n + f.additions, 0),
      reviewers: review.lineup.length,
    };
    await output({ reported: outcome.reported, target, head, uncommitted, ledger, review, counts });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const nearby = relative(process.cwd(), ledger.file);
    io.stderr(
      `svc: ${review.lineup.map((r) => r.key).join(', ') || 'no reviewer'} reviewed ${plural(counts.files, 'file')} in ${seconds} s: ` +
        `${counts.opened} new, ${counts.fixed} fixed since the last review; ledger ${nearby.startsWith('..') ? ledger.file : nearby}\n`,
    );
    return counts.p0 > 0 ? EXIT.openP0 : EXIT.ok;
  } catch (error) {
    if (error instanceof ReviewInputError) throw usageError(error.message);
    if (
      error instanceof ReviewFailedError ||
      error instanceof RangeReadError ||
      error instanceof LedgerFileError
    )
      throw new CliError(error.message, EXIT.failed);
    throw error;
  }
}
