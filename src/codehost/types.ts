/**
 * What svc needs from a code host (the local git host, GitHub), in svc's own terms: repositories,
 * pull requests, ranges, diffs (src/core/review.ts), file contents, and the three things svc
 * writes back (a check, a comment, a draft pull request). Nothing here is GitHub-specific.
 */
import type { Diff } from '../core/review';

export interface RepositoryTree {
  /** The ref that was read (e.g. HEAD, main). */
  ref: string;
  commit: string;
  files: { path: string; size: number | null }[];
  /** True when the tree was larger than the host returns at once. */
  truncated: boolean;
}

export interface PullRequest {
  number: number;
  title: string;
  /** The branch (or ref) the pull request merges into. */
  baseRef: string;
  /** The branch (or ref) the pull request proposes. */
  headRef: string;
  /** The tip of the base. */
  baseSha: string;
  headSha: string;
  /**
   * The merge base of base and head: the base of the diff a reviewer sees (what GitHub shows for
   * a pull request). Null when the two share no history.
   */
  mergeBaseSha: string | null;
  draft: boolean;
  /** Who opened it (a login on GitHub; the head commit's author name locally). */
  author: string | null;
}

/** Two ends of a range resolved to commits. */
export interface ResolvedRange {
  base: string;
  head: string;
  baseSha: string;
  headSha: string;
  /** Merge base of the two ends; null when they share no history. */
  mergeBaseSha: string | null;
}

/** How much of a diff is read in full; a file over a limit is kept with `skipped` (`file_too_large`). */
export interface DiffLimits {
  /** The most bytes of patch text read for one file. */
  maxFileBytes: number;
  /** The most changed (added + deleted) lines read for one file. */
  maxFileChangedLines: number;
  /** Report copies (`copied`, with `oldPath`) besides renames. */
  detectCopies: boolean;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxFileBytes: 1024 * 1024,
  maxFileChangedLines: 20_000,
  detectCopies: true,
};

export type CheckStatus = 'queued' | 'in_progress' | 'completed';
export type CheckConclusion =
  | 'success'
  | 'failure'
  | 'neutral'
  | 'skipped'
  | 'cancelled'
  | 'action_required'
  | 'timed_out';

/** A check on a commit (`Service / Review`). With `id`, updates the check posted before. */
export interface CheckInput {
  id?: string | null;
  name: string;
  headSha: string;
  status: CheckStatus;
  /** Required when status is `completed`. */
  conclusion?: CheckConclusion | null;
  title: string;
  summary: string;
  /** Longer body (the structured fix prompt). */
  text?: string | null;
}

/**
 * A comment on a pull request: a summary when `path` is absent, else inline at `line` (..`endLine`).
 * With `id`, edits the summary comment posted before (a summary updated on each run).
 */
export interface CommentInput {
  /** Edit this earlier summary comment instead of adding one (summary comments only). */
  id?: string | null;
  pullRequest: number;
  body: string;
  path?: string | null;
  line?: number | null;
  endLine?: number | null;
  /** The commit the line numbers refer to. */
  commitSha?: string | null;
  /** Reply to the comment with this id (a finding thread). */
  inReplyTo?: string | null;
}

export interface DraftPullRequestInput {
  title: string;
  body: string;
  /** The branch to merge into. */
  baseRef: string;
  /** The branch holding the change; it must already exist on the host. */
  headRef: string;
}

/** A commit svc writes onto a new branch (a quick action's change, a plan's draft pull request). */
export interface NewBranchCommitInput {
  /** The branch to create (`svc/...`); `invalid_input` when it already exists. */
  branch: string;
  /** The commit the branch starts from (its parent). */
  baseSha: string;
  message: string;
  /** Files to add or replace, as UTF-8 text. None: an empty commit (a pull request still opens). */
  files: { path: string; content: string }[];
}

/** What a host gives back for something svc wrote: its id there, and a link when it has one. */
export interface Posted {
  id: string;
  url: string | null;
}

/** One inline comment of a review, on new-file lines `startLine`..`line` (or `line` alone). */
export interface ReviewCommentInput {
  path: string;
  line: number;
  startLine?: number | null;
  body: string;
}

/** A review: a body and inline comments posted together, on the lines of `commitSha`. */
export interface ReviewInput {
  pullRequest: number;
  /** The commit the line numbers refer to (the head the review read). */
  commitSha: string;
  body: string;
  comments: ReviewCommentInput[];
}

/**
 * A posted review. A host may split a large review into several (`reviews`, in order; `id` and
 * `url` are the first's); `comments` holds each inline comment's id, in the order given, so a
 * later reply can name its thread.
 */
export interface PostedReview extends Posted {
  reviews: Posted[];
  comments: Posted[];
}

/** Hints a host may use to read a diff more fully. */
export interface DiffOptions {
  /**
   * The pull request whose diff this is (base = its merge base, head = its head). A host whose
   * range diff has a file cap (GitHub's compare stops at 300 files) reads the pull request's
   * file list instead when the cap is reached.
   */
  pullRequest?: number | null;
}

/** A commit with its whole message (autofix commits are told by theirs). */
export interface CommitMessage {
  sha: string;
  message: string;
}

/** A conversation comment on a pull request (not an inline one). */
export interface ConversationComment {
  id: string;
  body: string;
}

export interface CodeHost {
  readonly kind: 'local' | 'github';
  readonly installationId: number;
  /**
   * The most inline comments one review should carry (GitHub: REVIEW_COMMENT_BATCH). A caller
   * posting more posts several reviews and records each as it lands, so a failure part-way
   * leaves the earlier ones known and never re-posted.
   */
  readonly maxCommentsPerReview: number;
  /** Resolves `owner/repo`; false when the host does not have it, `unreadable` when it cannot read it. */
  repositoryExists(fullName: string): Promise<boolean>;
  /** The repository's tree at its default branch head. */
  readTree(fullName: string): Promise<RepositoryTree>;
  /** The default branch's name. `not_found` when the repository has none. */
  defaultBranch(fullName: string): Promise<string>;
  /** Pull request `number`; `not_found` when there is none. */
  getPullRequest(fullName: string, number: number): Promise<PullRequest>;
  /** Resolves both ends (a branch, ref or commit id) to commits; `not_found` names the end that did not. */
  resolveRange(fullName: string, base: string, head: string): Promise<ResolvedRange>;
  /**
   * The diff from `baseSha` to `headSha` exactly (two-point; pass a merge base for what a pull
   * request shows). Limits default to DEFAULT_DIFF_LIMITS.
   */
  getDiff(
    fullName: string,
    baseSha: string,
    headSha: string,
    limits?: Partial<DiffLimits>,
    options?: DiffOptions,
  ): Promise<Diff>;
  /** A file's bytes at `ref`; null when there is no file at that path. `invalid_input` for a bad path. */
  readFile(fullName: string, ref: string, path: string): Promise<Buffer | null>;
  /** Many files at one ref at once; the map holds every requested path (null when absent). */
  readFiles(fullName: string, ref: string, paths: readonly string[]): Promise<Map<string, Buffer | null>>;
  /** Creates (or, with `id`, updates) a check on a commit. */
  postCheck(fullName: string, check: CheckInput): Promise<Posted>;
  /** The commits of `headSha` that `baseSha` lacks (a pull request's commits), oldest first. */
  listCommits(fullName: string, baseSha: string, headSha: string): Promise<CommitMessage[]>;
  /**
   * The conversation comments on pull request `number` (not inline ones, not replies), oldest
   * first: where an agent posts its autofix round comment.
   */
  listConversation(fullName: string, number: number): Promise<ConversationComment[]>;
  /** Comments on a pull request (summary, edit of a summary, inline, or a reply in a thread). */
  postComment(fullName: string, comment: CommentInput): Promise<Posted>;
  /** Posts inline comments as one review (a host may split a very large one; see PostedReview). */
  postReview(fullName: string, review: ReviewInput): Promise<PostedReview>;
  /** Opens a draft pull request from an existing branch; the id is its number. */
  openDraftPullRequest(fullName: string, input: DraftPullRequestInput): Promise<Posted & { number: number }>;
  /** Creates `branch` at one new commit on `baseSha` holding `files`; returns the new commit's id. */
  commitToNewBranch(fullName: string, input: NewBranchCommitInput): Promise<{ commit: string }>;
  /**
   * The status check names branch protection requires on `branch`: empty when it requires none,
   * null when the host cannot tell (no protection model, or svc lacks the permission to read it).
   */
  requiredStatusChecks(fullName: string, branch: string): Promise<string[] | null>;
  /**
   * Adds `check` to the status checks required on `branch` (keeping the others). `unsupported`
   * when the host has no branch protection; `failed` with the host's reason when it refuses.
   */
  requireStatusCheck(fullName: string, branch: string, check: string): Promise<void>;
}

/**
 * `unreadable`: the repository is there but svc may not read it (permissions, ownership, not a
 * repository); the message says which and what to do.
 */
export type CodeHostErrorReason =
  | 'not_found'
  | 'unreadable'
  | 'invalid_input'
  | 'unsupported'
  | 'unavailable'
  /** A tool the host needs (git) is not installed where svc runs. */
  | 'tool_missing'
  /** A tool the host runs (git) took longer than its limit and was stopped. */
  | 'timeout'
  | 'failed';

/** The code host answered with something svc cannot use; the message says what. */
export class CodeHostError extends Error {
  constructor(
    message: string,
    readonly reason: CodeHostErrorReason,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CodeHostError';
  }
}
