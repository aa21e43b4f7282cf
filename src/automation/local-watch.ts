/**
 * Automation without GitHub: a watcher over the repositories the local code host serves
 * (installation 1) that notices what GitHub would send a webhook for, and runs the same triggers:
 *
 * - a new `refs/pull/N/head` with commits its base lacks → `opened`; the head moving → `synchronize`;
 *   a draft (`pulls.jsonl`) turning ready → `ready_for_review`; the base (`refs/pull/N/base`, else
 *   the default branch the repository declares) moving to contain the head → `closed` with
 *   merged=true, once. Only the base moving merges: a head reset or rebased into its base, or a
 *   branch checked out in the served work tree, merges nothing. A pull request counted merged
 *   whose head moves on to commits its base lacks → `reopened` (its merge was not one);
 * - the default branch moving → a push with the files added or modified between the two tips;
 * - a person's comment in `<git-dir>/svc/comments.jsonl` (`svc comment`, `author` set) → the
 *   `@service` commands, or on a finding's thread `wontfix:` / `fix this`.
 *
 * `diffRefs` is the pure part: two snapshots of refs in, events out. `LocalWatcher` observes each
 * project's repository every `intervalMs`, dispatches the events and keeps what it has seen in
 * `<git-dir>/svc/watch.json`, so a restart triggers nothing twice. Without that file (the first
 * start) open pull requests whose head has no check yet are new, and the default branch's and
 * the comments' history is not replayed.
 */
import { mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { Logger } from 'pino';
import { DECLARE_DEFAULT_BRANCH, type DefaultBranch, describeSource } from '../codehost/local/default-branch';
import { git, gitOrNull } from '../codehost/local/git';
import { LOCAL_INSTALLATION_ID, LocalCodeHost, type LocalPullRecord } from '../codehost/local/local-host';
import { checkRuns, projects, pullRequests } from '../storage/schema';
import { type CommentEvent, onFindingThreadReply, onPullRequestComment } from './conversation';
import { onPush } from './plans';
import { RepeatingPass } from './repeating-pass';
import { type AutomationDeps, onPullRequestEvent } from './triggers';
import { withdrawMerge } from './withdraw-merge';

export const DEFAULT_WATCH_INTERVAL_MS = 2_000;
const STATE_FILE = 'watch.json';

// ---------------------------------------------------------------------------------------------
// The pure part: snapshots and events.

/** A pull request as observed now. */
export interface PullObservation {
  head: string;
  /** The base tip the head was compared with (`refs/pull/N/base`, else the default branch). */
  base: string | null;
  /** The head is reachable from the base: nothing of it is left to merge. */
  contained: boolean;
  draft: boolean;
  /** The head already has a check (only asked for pull requests not yet open in the state). */
  reviewed: boolean;
}

export interface RefsObservation {
  defaultBranch: string | null;
  defaultTip: string | null;
  /** By pull request number. */
  pulls: Record<string, PullObservation>;
}

/**
 * `waiting`: seen, but its head had nothing its base lacks (a branch opened before its first
 * commit), so not opened yet; `open`: opened; `merged`: counted, and nothing more happens to it.
 */
export type PullPhase = 'waiting' | 'open' | 'merged';

export interface PullSeen {
  head: string;
  base: string | null;
  phase: PullPhase;
  draft: boolean;
  /**
   * The head was reachable from the base. Absent in states written before it was kept: then it
   * is what the phase implies (only an open pull request has commits its base lacks).
   */
  contained?: boolean;
}

export interface RefsSeen {
  defaultBranch: string | null;
  defaultTip: string | null;
  pulls: Record<string, PullSeen>;
}

export type RefEvent =
  | {
      kind: 'pull_request';
      action: 'opened' | 'synchronize' | 'ready_for_review' | 'closed' | 'reopened';
      number: number;
      headSha: string;
      merged: boolean;
    }
  /** `before` null: the branch's first commits (the repository was empty). */
  | { kind: 'push'; branch: string; before: string | null; after: string };

/** What changed between what was seen and what is observed, and what is seen afterwards. */
export function diffRefs(
  seen: RefsSeen | null,
  now: RefsObservation,
): { events: RefEvent[]; next: RefsSeen } {
  const events: RefEvent[] = [];
  const next: RefsSeen = { defaultBranch: now.defaultBranch, defaultTip: now.defaultTip, pulls: {} };
  const pr = (action: Extract<RefEvent, { kind: 'pull_request' }>['action'], n: string, o: PullObservation) =>
    events.push({
      kind: 'pull_request',
      action,
      number: Number(n),
      headSha: o.head,
      merged: action === 'closed',
    });

  for (const [n, o] of Object.entries(now.pulls).sort(([a], [b]) => Number(a) - Number(b))) {
    const was = seen?.pulls[n];
    const keep = (phase: PullPhase) => {
      next.pulls[n] = { head: o.head, base: o.base, phase, draft: o.draft, contained: o.contained };
    };
    if (!was || was.phase === 'waiting') {
      if (o.contained) keep('waiting');
      else {
        keep('open');
        // A head that already has a check was triggered by someone (an earlier watcher, the API).
        if (!o.reviewed) pr('opened', n, o);
      }
    } else if (was.phase === 'merged') {
      // Counted merged, yet its head moved on to commits its base lacks: that merge was not one.
      if (o.head !== was.head && !o.contained) {
        keep('open');
        pr('reopened', n, o);
      } else keep('merged');
    } else if (o.contained && !wasContained(was) && o.base !== was.base) {
      // The base moved to take the head in: merged.
      keep('merged');
      pr('closed', n, o);
    } else {
      // A head reset or rebased into an unmoved base has nothing to review, and merged nothing.
      keep('open');
      if (o.contained) continue;
      if (o.head !== was.head) pr('synchronize', n, o);
      else if (was.draft && !o.draft) pr('ready_for_review', n, o);
    }
  }

  // The default branch: a move is a push; the first sight, or a renamed branch, replays nothing.
  if (
    seen &&
    now.defaultBranch &&
    now.defaultTip &&
    seen.defaultBranch === now.defaultBranch &&
    seen.defaultTip !== now.defaultTip
  ) {
    events.push({ kind: 'push', branch: now.defaultBranch, before: seen.defaultTip, after: now.defaultTip });
  } else if (seen && now.defaultBranch && now.defaultTip && seen.defaultBranch === null) {
    events.push({ kind: 'push', branch: now.defaultBranch, before: null, after: now.defaultTip });
  }
  return { events, next };
}

/** Whether the head was reachable from the base when last seen. */
export function wasContained(was: PullSeen): boolean {
  return was.contained ?? was.phase !== 'open';
}

/** After `event` failed: `next` forgets what the event was about, so the next tick tries it again. */
export function keepUnseen(next: RefsSeen, seen: RefsSeen | null, event: RefEvent): void {
  if (event.kind === 'push') {
    next.defaultBranch = seen?.defaultBranch ?? null;
    next.defaultTip = seen?.defaultTip ?? null;
    return;
  }
  const key = String(event.number);
  const was = seen?.pulls[key];
  if (was) next.pulls[key] = was;
  else delete next.pulls[key];
}

/** A comment record a person wrote (`author` set); svc's own records have no author. */
export interface PersonComment {
  id: string;
  pull_request: number;
  body: string;
  in_reply_to: string | null;
  author: string;
}

/**
 * The person comments among the complete lines of `chunk` (JSON lines), and how many bytes those
 * lines take: a last line without its newline is still being written and is read next time.
 */
export function personComments(chunk: Buffer): { comments: PersonComment[]; consumed: number } {
  const end = chunk.lastIndexOf(0x0a);
  if (end < 0) return { comments: [], consumed: 0 };
  const comments: PersonComment[] = [];
  for (const line of chunk.subarray(0, end).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      continue; // a torn line from a crash is not a record
    }
    if (
      typeof record.author === 'string' &&
      record.author !== '' &&
      typeof record.id === 'string' &&
      typeof record.body === 'string' &&
      Number.isSafeInteger(record.pull_request)
    ) {
      comments.push({
        id: record.id,
        pull_request: record.pull_request as number,
        body: record.body,
        in_reply_to: typeof record.in_reply_to === 'string' ? record.in_reply_to : null,
        author: record.author,
      });
    }
  }
  return { comments, consumed: end + 1 };
}

// ---------------------------------------------------------------------------------------------
// Configuration.

/** SVC_WATCH=1 (or `svc serve --watch`): serve runs the watcher too. */
export function watchEnabled(env: NodeJS.ProcessEnv): boolean {
  return env.SVC_WATCH === '1' || env.SVC_WATCH === 'true';
}

/** SVC_WATCH_INTERVAL_MS (or `--interval`), default 2 s. */
export function watchIntervalMs(env: NodeJS.ProcessEnv): number {
  const raw = env.SVC_WATCH_INTERVAL_MS;
  if (raw === undefined || raw === '') return DEFAULT_WATCH_INTERVAL_MS;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`SVC_WATCH_INTERVAL_MS must be a positive number of milliseconds, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// The watcher.

interface WatchState {
  version: 1;
  refs: RefsSeen;
  /** Bytes of `comments.jsonl` already read. */
  comments: { offset: number };
}

export type WatchEvent = RefEvent | { kind: 'comment'; id: string; number: number; reply: boolean };

export interface TickReport {
  /** The repositories looked at (every project of installation 1). */
  repos: string[];
  triggered: { repo: string; event: WatchEvent; outcome: string; reason: string }[];
  errors: { repo: string; message: string }[];
}

type ProjectRow = typeof projects.$inferSelect;

export class LocalWatcher {
  readonly intervalMs: number;
  private readonly logger: Logger;
  private readonly loop: RepeatingPass;
  /** The tick under way (ticks never overlap, whether the loop or a caller started them). */
  private current: Promise<unknown> = Promise.resolve();
  /** The last failure logged per repository: the same one again every tick is logged at debug. */
  private readonly failing = new Map<string, string>();
  /** What was last said of each repository's default branch (said again only when it changes). */
  private readonly defaultBranchSaid = new Map<string, string>();

  constructor(
    private readonly deps: AutomationDeps,
    options: { logger: Logger; intervalMs?: number },
  ) {
    this.logger = options.logger.child({ component: 'local-watch' });
    this.intervalMs = options.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
    this.loop = new RepeatingPass({
      pass: () => this.tick().then(() => this.intervalMs),
      onError: (error) => {
        this.logger.error({ err: error }, 'watch tick failed');
        return this.intervalMs;
      },
    });
  }

  /** Ticks every `intervalMs` until `stop()`. */
  start(): void {
    this.loop.start();
  }

  /** Stops the loop; resolves once a tick under way has finished. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.current.catch(() => {});
  }

  /** One pass over every project of the local host; an error in one repository skips only it. */
  tick(): Promise<TickReport> {
    const run = this.current.catch(() => {}).then(() => this.pass());
    this.current = run;
    return run;
  }

  private async pass(): Promise<TickReport> {
    const report: TickReport = { repos: [], triggered: [], errors: [] };
    const host = this.deps.codeHosts.forInstallation(LOCAL_INSTALLATION_ID);
    if (!(host instanceof LocalCodeHost)) return report;
    const watched = await this.deps.db.orm
      .select()
      .from(projects)
      .where(eq(projects.installationId, LOCAL_INSTALLATION_ID))
      .orderBy(projects.repoFullName);
    for (const project of watched) {
      report.repos.push(project.repoFullName);
      const repo = project.repoFullName;
      try {
        await this.watchRepo(host, project, report);
        this.failing.delete(repo);
      } catch (error) {
        const message = (error as Error).message;
        report.errors.push({ repo, message });
        const level = this.failing.get(repo) === message ? 'debug' : 'error';
        this.failing.set(repo, message);
        this.logger[level]({ repo, err: error }, `watching ${repo} failed: ${message}`);
      }
    }
    return report;
  }

  private async watchRepo(host: LocalCodeHost, project: ProjectRow, report: TickReport): Promise<void> {
    const repo = project.repoFullName;
    const found = await host.lookup(repo);
    if (!found) throw new Error(`repository ${repo} is not under ${host.reposDir} (SVC_REPOS_DIR)`);
    if ('unreadable' in found) throw new Error(found.unreadable);
    const { dir } = found;
    const recordsDir = join((await git(dir, ['rev-parse', '--absolute-git-dir'])).trim(), 'svc');
    const stateFile = join(recordsDir, STATE_FILE);
    const state = await this.readState(stateFile, repo);
    const record = (event: WatchEvent, result: { outcome: string; reason: string }) => {
      report.triggered.push({ repo, event, outcome: result.outcome, reason: result.reason });
      this.logger.info({ repo, event, outcome: result.outcome, reason: result.reason }, 'watch triggered');
    };

    // Refs: pull requests and the default branch.
    const observed = await this.observe(host, dir, recordsDir, project, state?.refs ?? null);
    const { events, next } = diffRefs(state?.refs ?? null, observed);
    for (const event of events) {
      try {
        record(event, await this.dispatch(host, dir, project, event));
      } catch (error) {
        keepUnseen(next, state?.refs ?? null, event);
        report.errors.push({ repo, message: (error as Error).message });
        this.logger.error(
          { repo, event, err: error },
          `watching ${repo}: ${event.kind} failed; retried next tick`,
        );
      }
    }
    // Comments people wrote since the last tick; the first start replays none.
    const commentsFile = join(recordsDir, 'comments.jsonl');
    const size = await stat(commentsFile).then(
      (s) => s.size,
      () => 0,
    );
    let offset = state?.comments.offset ?? size;
    if (size < offset) {
      this.logger.warn({ repo }, `${commentsFile} shrank; reading only comments written from now on`);
      offset = size;
    }
    const { comments, consumed } = personComments(await readRange(commentsFile, offset, size));
    for (const comment of comments) {
      const event: CommentEvent = {
        installationId: LOCAL_INSTALLATION_ID,
        repo,
        number: comment.pull_request,
        body: comment.body,
        commentId: comment.id,
        senderType: 'User',
        senderLogin: comment.author,
        inReplyTo: comment.in_reply_to,
        // The local host has no permission model: whoever can write the repository's git dir owns it.
        authorAssociation: 'OWNER',
      };
      const watchEvent: WatchEvent = {
        kind: 'comment',
        id: comment.id,
        number: comment.pull_request,
        reply: comment.in_reply_to !== null,
      };
      try {
        // As on GitHub: a reply on a thread is a finding-thread reply, anything else a pull request comment.
        record(
          watchEvent,
          event.inReplyTo
            ? await onFindingThreadReply(this.deps, event)
            : await onPullRequestComment(this.deps, event),
        );
      } catch (error) {
        // A command is not retried: running it twice is worse than once failed, and said so.
        report.errors.push({ repo, message: (error as Error).message });
        this.logger.error({ repo, comment: comment.id, err: error }, `watching ${repo}: comment failed`);
      }
    }

    const after: WatchState = { version: 1, refs: next, comments: { offset: offset + consumed } };
    if (JSON.stringify(after) !== JSON.stringify(state)) {
      await mkdir(recordsDir, { recursive: true });
      await writeState(stateFile, after);
    }
  }

  /**
   * Logs where a repository's default branch comes from when that first shows or changes: a
   * guess (main or master, nothing declaring it) or no default branch at all is a warning.
   */
  private sayDefaultBranch(repo: string, declared: DefaultBranch | null): void {
    const said = declared
      ? `default branch of ${repo}: ${describeSource(declared)}`
      : `${repo} has no default branch: pull requests without refs/pull/N/base are not compared and no merge into it is counted; ${DECLARE_DEFAULT_BRANCH}`;
    if (this.defaultBranchSaid.get(repo) === said) return;
    this.defaultBranchSaid.set(repo, said);
    const level = declared && declared.source !== 'main_or_master' ? 'info' : 'warn';
    this.logger[level](
      { repo, default_branch: declared?.name ?? null, source: declared?.source ?? null },
      said,
    );
  }

  private async readState(file: string, repo: string): Promise<WatchState | null> {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) return null;
    try {
      const state = JSON.parse(text) as WatchState;
      if (state?.version === 1 && state.refs && state.comments) return state;
    } catch {}
    this.logger.warn({ repo, file }, 'unreadable watch state; starting over as on a first start');
    return null;
  }

  /**
   * The repository's refs now, from git processes run at once (this runs every few seconds, and
   * each spawn from a large process costs); reachability is asked of git only for pairs that changed.
   */
  private async observe(
    host: LocalCodeHost,
    dir: string,
    recordsDir: string,
    project: ProjectRow,
    seen: RefsSeen | null,
  ): Promise<RefsObservation> {
    const repo = project.repoFullName;
    const [declared, listing] = await Promise.all([
      // As the local host reads it: declared, never the branch checked out in the work tree.
      host.declaredDefaultBranch(dir, repo),
      git(dir, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/pull/']),
    ]);
    this.sayDefaultBranch(repo, declared);
    const heads = new Map<string, string>();
    const bases = new Map<string, string>();
    for (const line of listing.split('\n')) {
      const m = /^([0-9a-f]{40,64}) refs\/pull\/(\d+)\/(head|base)$/.exec(line);
      if (m?.[1] && m[2] && Number(m[2]) > 0)
        (m[3] === 'head' ? heads : bases).set(String(Number(m[2])), m[1]);
    }
    const defaultBranch = declared?.name ?? null;
    const defaultTip = declared?.tip ?? null;
    const drafts = new Map<string, boolean>();
    const pullsFile = await readFile(join(recordsDir, 'pulls.jsonl'), 'utf8').catch(() => '');
    for (const line of pullsFile.split('\n')) {
      try {
        const record = JSON.parse(line) as LocalPullRecord;
        drafts.set(String(record.number), record.draft === true);
      } catch {} // a blank or torn line
    }

    const pulls: Record<string, PullObservation> = {};
    const unreviewed: string[] = [];
    for (const [n, head] of heads) {
      const base = bases.get(n) ?? defaultTip;
      const was = seen?.pulls[n];
      const contained =
        was && was.head === head && was.base === base
          ? wasContained(was)
          : base !== null &&
            (await gitOrNull(dir, ['merge-base', '--is-ancestor', '--end-of-options', head, base])) !== null;
      pulls[n] = { head, base, contained, draft: drafts.get(n) ?? false, reviewed: false };
      if (!contained && (!was || was.phase === 'waiting')) unreviewed.push(n);
    }
    if (unreviewed.length > 0) {
      const checked = await this.deps.db.orm
        .select({ number: pullRequests.number, headSha: checkRuns.headSha })
        .from(checkRuns)
        .innerJoin(pullRequests, eq(pullRequests.id, checkRuns.pullRequestId))
        .where(
          and(
            eq(checkRuns.projectId, project.id),
            inArray(
              checkRuns.headSha,
              unreviewed.map((n) => pulls[n]?.head ?? ''),
            ),
          ),
        );
      for (const row of checked) {
        const pull = pulls[String(row.number)];
        if (pull && pull.head === row.headSha) pull.reviewed = true;
      }
    }
    return { defaultBranch, defaultTip, pulls };
  }

  private async dispatch(
    host: LocalCodeHost,
    dir: string,
    project: ProjectRow,
    event: RefEvent,
  ): Promise<{ outcome: string; reason: string }> {
    const { repoFullName: repo, id: projectId } = project;
    if (event.kind === 'push') {
      return onPush(this.deps, {
        installationId: LOCAL_INSTALLATION_ID,
        repo,
        ref: `refs/heads/${event.branch}`,
        after: event.after,
        defaultBranch: event.branch,
        paths: await changedPaths(dir, event.before, event.after),
      });
    }
    const info = await host.getPullRequest(repo, event.number);
    // Before the review it triggers: the merge counted in error no longer counts anywhere.
    if (event.action === 'reopened') await withdrawMerge(this.deps.db, projectId, event.number);
    return onPullRequestEvent(this.deps, {
      action: event.action,
      installationId: LOCAL_INSTALLATION_ID,
      repo,
      number: event.number,
      title: info.title,
      draft: info.draft,
      merged: event.merged,
      headRef: info.headRef,
      headSha: event.headSha,
      baseRef: info.baseRef,
      author: info.author,
    });
  }
}

/**
 * Files added or modified between two tips, as a GitHub push lists them (renames are a removal
 * and an addition). Without a `before` it still has (the repository was empty, or the old tip
 * is gone), every file of `after`.
 */
async function changedPaths(dir: string, before: string | null, after: string): Promise<string[]> {
  const known =
    before !== null &&
    (await gitOrNull(dir, ['cat-file', '-e', '--end-of-options', `${before}^{commit}`])) !== null
      ? before
      : null;
  const out = known
    ? await gitOrNull(dir, [
        'diff',
        '--name-only',
        '--no-renames',
        '--diff-filter=AM',
        '-z',
        '--end-of-options',
        known,
        after,
        '--',
      ])
    : await gitOrNull(dir, ['ls-tree', '-r', '--name-only', '-z', '--end-of-options', after]);
  if (out === null) throw new Error(`git could not list the files changed up to ${after.slice(0, 12)}`);
  return out.split('\0').filter(Boolean);
}

async function readRange(file: string, from: number, to: number): Promise<Buffer> {
  if (to <= from) return Buffer.alloc(0);
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Written whole and renamed into place: a crash leaves the old state or the new, never half. */
async function writeState(file: string, state: WatchState): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, file);
}
