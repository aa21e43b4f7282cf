/**
 * The GitHub code host: one GitHub App installation, through GitHub's REST API.
 *
 * Reading: pull requests (pulls API, merge base from compare's `merge_base_commit`), ranges
 * (commits API in its `application/vnd.github.sha` form: one short answer per end), diffs (compare
 * `{base}...{head}`; each file's `patch` parsed like the local host's git diff, see patch.ts), files
 * (contents API), trees (git trees, recursive) and the default branch (repos API).
 *
 * Writing: checks (check runs), summary comments (issue comments; edited in place with `id`),
 * inline comments as reviews (one review per batch of at most REVIEW_COMMENT_BATCH), replies in a
 * finding thread (review comment replies), draft pull requests, commits on new branches (Git data
 * API: trees, commits, refs) and required status checks (branch protection).
 *
 * Every GitHub failure leaves as a CodeHostError (errors.ts); rate limits and 5xx are retried a
 * bounded number of times first (client.ts).
 */
import { refNameProblem, repoFullNameProblem } from '../../core/git-grammar';
import type { Diff, DiffFile } from '../../core/review';
import type { Gap } from '../../core/runs';
import { checkBranchName, checkNewBranchCommit, fileModes, type TreeEntry } from '../new-branch';
import { checkRepoPath } from '../paths';
import {
  type CheckInput,
  type CodeHost,
  CodeHostError,
  type CommentInput,
  type CommitMessage,
  type ConversationComment,
  DEFAULT_DIFF_LIMITS,
  type DiffLimits,
  type DiffOptions,
  type DraftPullRequestInput,
  type NewBranchCommitInput,
  type Posted,
  type PostedReview,
  type PullRequest,
  type RepositoryTree,
  type ResolvedRange,
  type ReviewInput,
} from '../types';
import type { GitHubAppClient, GitHubOctokit } from './client';
import { refusalOf, toCodeHostError } from './errors';
import { diffFileFromGitHub, type GitHubDiffEntry } from './patch';

/**
 * Inline comments per review. GitHub documents no maximum, but large reviews fail in practice
 * (502s near 100 comments: prontolabs/pronto#302; "Review comments is invalid" on big batches:
 * octokit/plugin-rest-endpoint-methods.js#595; secondary limits on content creation:
 * anc95/ChatGPT-CodeReview#206, which settled on 40). 50 keeps a review well under those.
 */
export const REVIEW_COMMENT_BATCH = 50;
/** Files compare returns at most (GitHub's documented cap). */
export const COMPARE_FILE_CAP = 300;
/** Files the pull request files endpoint lists at most (GitHub's documented cap). */
export const PULL_FILES_CAP = 3000;
/** Items per page of GitHub's list endpoints (their maximum). */
const PAGE_SIZE = 100;
/** GitHub refuses check output fields longer than this. */
const CHECK_TEXT_MAX = 65_535;
const OID = /^[0-9a-f]{40}$/;
const READ_CONCURRENCY = 8;

export interface GitHubHostOptions {
  /** Files one compare lists before GitHub cuts it off. Default 300 (tests lower it with the double's). */
  compareFileCap?: number;
}

/**
 * A branch, ref or commit id by the ref grammar (core/git-grammar.ts). Octokit percent-encodes it
 * into the URL, and the grammar refuses `.`/`..` components, so it never walks to another endpoint.
 */
function checkRef(ref: string, what: string): void {
  const why = refNameProblem(ref);
  if (why)
    throw new CodeHostError(
      `${what} ${JSON.stringify(ref)} is not a valid ref or commit id: ${why}`,
      'invalid_input',
    );
}

const truncate = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 40)}\n\n… (truncated: over GitHub's limit)`;

/** Runs `fn` over `items` with at most `limit` at a time, keeping order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export class GitHubCodeHost implements CodeHost {
  readonly kind = 'github' as const;
  readonly maxCommentsPerReview = REVIEW_COMMENT_BATCH;
  private readonly octokit: GitHubOctokit;
  private readonly compareFileCap: number;

  constructor(
    readonly installationId: number,
    client: GitHubAppClient,
    options: GitHubHostOptions = {},
  ) {
    this.octokit = client.installation(installationId).octokit;
    this.compareFileCap = options.compareFileCap ?? COMPARE_FILE_CAP;
  }

  /**
   * Owner and name by the repository grammar (core/git-grammar.ts): no `.`/`..` part, so the URL
   * path the request builds (`/repos/{owner}/{repo}/…`) cannot be normalized to another endpoint.
   */
  private split(fullName: string): { owner: string; repo: string } {
    const why = repoFullNameProblem(fullName);
    if (why)
      throw new CodeHostError(
        `repository ${JSON.stringify(fullName)} is not an owner/repo name: ${why}`,
        'invalid_input',
      );
    const [owner = '', repo = ''] = fullName.split('/');
    return { owner, repo };
  }

  /** Runs a GitHub call, turning its failure into a CodeHostError about `what`. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw toCodeHostError(error, what);
    }
  }

  async repositoryExists(fullName: string): Promise<boolean> {
    if (repoFullNameProblem(fullName) !== null) return false;
    try {
      await this.repository(fullName);
      return true;
    } catch (error) {
      if (error instanceof CodeHostError && error.reason === 'not_found') return false;
      throw error;
    }
  }

  private async repository(fullName: string) {
    const { owner, repo } = this.split(fullName);
    return this.call(
      `repository ${fullName}`,
      async () => (await this.octokit.request('GET /repos/{owner}/{repo}', { owner, repo })).data,
    );
  }

  async defaultBranch(fullName: string): Promise<string> {
    const data = await this.repository(fullName);
    if (!data.default_branch)
      throw new CodeHostError(`repository ${fullName} has no default branch`, 'not_found');
    return data.default_branch;
  }

  /** The commit `ref` names, or null when it names none. */
  private async commitOf(fullName: string, ref: string): Promise<string | null> {
    const { owner, repo } = this.split(fullName);
    try {
      const response = await this.octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', {
        owner,
        repo,
        ref,
        headers: { accept: 'application/vnd.github.sha' },
      });
      const sha = String(response.data as unknown).trim();
      return OID.test(sha) ? sha : null;
    } catch (error) {
      const status = (error as { status?: number }).status;
      // GitHub answers 422 "No commit found for SHA" for a ref that names nothing.
      if (status === 404 || status === 422) return null;
      throw toCodeHostError(error, `commit ${ref} of ${fullName}`);
    }
  }

  /** compare `base...head` (page 1: the files, at most one commit). */
  private async compare(fullName: string, base: string, head: string) {
    const { owner, repo } = this.split(fullName);
    return (
      await this.octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
        owner,
        repo,
        basehead: `${base}...${head}`,
        per_page: 1,
      })
    ).data;
  }

  /** The merge base of two commits, null when they share no history (GitHub: 404 on compare). */
  private async mergeBase(fullName: string, baseSha: string, headSha: string): Promise<string | null> {
    try {
      return (await this.compare(fullName, baseSha, headSha)).merge_base_commit?.sha ?? null;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw toCodeHostError(error, `merge base of ${baseSha} and ${headSha} in ${fullName}`);
    }
  }

  async getPullRequest(fullName: string, number: number): Promise<PullRequest> {
    if (!Number.isSafeInteger(number) || number < 1)
      throw new CodeHostError(`pull request number ${number} is not a positive integer`, 'invalid_input');
    const { owner, repo } = this.split(fullName);
    const pr = await this.call(
      `pull request ${number} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
            owner,
            repo,
            pull_number: number,
          })
        ).data,
    );
    return {
      number: pr.number,
      title: pr.title,
      baseRef: pr.base.ref,
      headRef: pr.head.ref,
      baseSha: pr.base.sha,
      headSha: pr.head.sha,
      mergeBaseSha: await this.mergeBase(fullName, pr.base.sha, pr.head.sha),
      draft: pr.draft ?? false,
      author: pr.user?.login ?? null,
    };
  }

  private async resolveEnds(fullName: string, base: string, head: string) {
    checkRef(base, 'base');
    checkRef(head, 'head');
    const [baseSha, headSha] = await Promise.all([
      this.commitOf(fullName, base),
      this.commitOf(fullName, head),
    ]);
    if (!baseSha || !headSha) {
      const named = [
        !baseSha && `base ${JSON.stringify(base)}`,
        !headSha && `head ${JSON.stringify(head)}`,
      ].filter(Boolean);
      throw new CodeHostError(
        `range ${base}..${head} does not resolve in ${fullName}: ${named.join(' and ')} ` +
          `${named.length > 1 ? 'are' : 'is'} not a branch, ref or commit`,
        'not_found',
      );
    }
    return { baseSha, headSha };
  }

  async resolveRange(fullName: string, base: string, head: string): Promise<ResolvedRange> {
    this.split(fullName);
    const { baseSha, headSha } = await this.resolveEnds(fullName, base, head);
    return { base, head, baseSha, headSha, mergeBaseSha: await this.mergeBase(fullName, baseSha, headSha) };
  }

  async getDiff(
    fullName: string,
    baseSha: string,
    headSha: string,
    limits?: Partial<DiffLimits>,
    options?: DiffOptions,
  ): Promise<Diff> {
    this.split(fullName);
    const effective: DiffLimits = { ...DEFAULT_DIFF_LIMITS, ...limits };
    const ends =
      OID.test(baseSha) && OID.test(headSha)
        ? { baseSha, headSha }
        : await this.resolveEnds(fullName, baseSha, headSha);
    const what = `diff ${ends.baseSha}...${ends.headSha} of ${fullName}`;
    const compared = await this.call(what, () => this.compare(fullName, ends.baseSha, ends.headSha));
    const gaps: Gap[] = [];
    let entries = (compared.files ?? []) as GitHubDiffEntry[];
    const mergeBase = compared.merge_base_commit?.sha;
    if (mergeBase && mergeBase !== ends.baseSha) {
      gaps.push({
        code: 'diff_from_merge_base',
        message:
          `GitHub compares from the merge base: the diff is ${mergeBase}..${ends.headSha}, ` +
          `not ${ends.baseSha}..${ends.headSha} (base is not an ancestor of head)`,
      });
    }
    if (entries.length >= this.compareFileCap) {
      const fuller = options?.pullRequest
        ? await this.pullRequestFiles(fullName, options.pullRequest, ends.headSha, mergeBase ?? ends.baseSha)
        : null;
      if (fuller && fuller.length > entries.length) entries = fuller;
      if (!fuller || fuller.length >= PULL_FILES_CAP) {
        gaps.push({
          code: 'diff_truncated',
          message: fuller
            ? `GitHub lists at most ${PULL_FILES_CAP} files of a pull request; files after the first ${entries.length} were not reviewed`
            : `GitHub's compare lists at most ${this.compareFileCap} files; files after the first ${entries.length} were not reviewed` +
              (options?.pullRequest
                ? ` (pull request ${options.pullRequest} no longer has this head, so its file list could not stand in)`
                : ' (pass the pull request to read its full file list)'),
        });
      }
    }
    const files: DiffFile[] = [];
    const tooLarge: string[] = [];
    for (const entry of entries) {
      const { file, tooLarge: large } = diffFileFromGitHub(entry, effective);
      files.push(file);
      if (large) tooLarge.push(file.path);
    }
    if (tooLarge.length > 0) {
      const list =
        tooLarge.length <= 10
          ? tooLarge.join(', ')
          : `${tooLarge.slice(0, 10).join(', ')} and ${tooLarge.length - 10} more`;
      gaps.unshift({
        code: 'file_too_large',
        message:
          `${tooLarge.length} file(s) exceed the per-file limit (${effective.maxFileChangedLines} changed lines ` +
          `or ${effective.maxFileBytes} bytes of patch, or GitHub's own) and were not diffed: ${list}`,
      });
    }
    return { base: ends.baseSha, head: ends.headSha, files, gaps };
  }

  /**
   * The pull request's files (paginated, up to GitHub's 3000), or null when the pull request's
   * head or merge base is not this diff's any more (its list would describe another diff).
   */
  private async pullRequestFiles(
    fullName: string,
    number: number,
    headSha: string,
    mergeBase: string,
  ): Promise<GitHubDiffEntry[] | null> {
    const pr = await this.getPullRequest(fullName, number);
    if (pr.headSha !== headSha || pr.mergeBaseSha !== mergeBase) return null;
    const { owner, repo } = this.split(fullName);
    return this.pages(
      PULL_FILES_CAP / PAGE_SIZE,
      `files of pull request ${number} of ${fullName}`,
      async (page) =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}/files', {
            owner,
            repo,
            pull_number: number,
            per_page: PAGE_SIZE,
            page,
          })
        ).data as GitHubDiffEntry[],
    );
  }

  /** The compare's commits, 100 a page; GitHub lists at most 250 of them. */
  async listCommits(fullName: string, baseSha: string, headSha: string): Promise<CommitMessage[]> {
    const { owner, repo } = this.split(fullName);
    const commits = await this.pages(
      3,
      `commits of ${fullName} from ${baseSha.slice(0, 12)} to ${headSha.slice(0, 12)}`,
      async (page) =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
            owner,
            repo,
            basehead: `${baseSha}...${headSha}`,
            per_page: PAGE_SIZE,
            page,
          })
        ).data.commits,
    );
    return commits.map((c) => ({ sha: c.sha, message: c.commit.message }));
  }

  /** The pull request's issue comments, 100 a page, at most 1,000. */
  async listConversation(fullName: string, number: number): Promise<ConversationComment[]> {
    const { owner, repo } = this.split(fullName);
    const comments = await this.pages(
      10,
      `comments of pull request ${number} of ${fullName}`,
      async (page) =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
            owner,
            repo,
            issue_number: number,
            per_page: PAGE_SIZE,
            page,
          })
        ).data,
    );
    return comments.map((c) => ({ id: String(c.id), body: c.body ?? '' }));
  }

  /**
   * Up to `maxPages` pages of PAGE_SIZE items, in order, each read through `call` (retries,
   * errors named by `what`); stops at the first page that is not full.
   */
  private async pages<T>(maxPages: number, what: string, read: (page: number) => Promise<T[]>): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; page <= maxPages; page++) {
      const batch = await this.call(what, () => read(page));
      items.push(...batch);
      if (batch.length < PAGE_SIZE) break;
    }
    return items;
  }

  async readFile(fullName: string, ref: string, path: string): Promise<Buffer | null> {
    return (await this.readFiles(fullName, ref, [path])).get(path) ?? null;
  }

  /** One contents request per path, a few at a time; a file over 1 MB is read in its raw form. */
  async readFiles(
    fullName: string,
    ref: string,
    paths: readonly string[],
  ): Promise<Map<string, Buffer | null>> {
    const { owner, repo } = this.split(fullName);
    checkRef(ref, 'ref');
    for (const path of paths) checkRepoPath(path);
    const unique = [...new Set(paths)];
    const read = async (path: string): Promise<Buffer | null> => {
      try {
        const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/contents/{path}', {
          owner,
          repo,
          path,
          ref,
        });
        if (Array.isArray(data)) return null; // a directory
        if (data.type === 'symlink' && 'target' in data) return Buffer.from(String(data.target));
        if (data.type !== 'file' || !('content' in data)) return null; // a submodule
        if (data.encoding === 'base64') return Buffer.from(data.content, 'base64');
        // Files over 1 MB come without content ("encoding": "none"); the raw form has the bytes.
        const raw = await this.octokit.request('GET /repos/{owner}/{repo}/contents/{path}', {
          owner,
          repo,
          path,
          ref,
          headers: { accept: 'application/vnd.github.raw+json' },
        });
        const body = raw.data as unknown;
        return body instanceof ArrayBuffer ? Buffer.from(body) : Buffer.from(String(body), 'utf8');
      } catch (error) {
        if ((error as { status?: number }).status === 404) return null;
        throw toCodeHostError(error, `file ${path} at ${ref} of ${fullName}`);
      }
    };
    const contents = await mapLimit(unique, READ_CONCURRENCY, read);
    const result = new Map<string, Buffer | null>();
    unique.forEach((path, i) => {
      result.set(path, contents[i] ?? null);
    });
    if (contents.every((c) => c === null) && unique.length > 0 && !(await this.commitOf(fullName, ref)))
      throw new CodeHostError(
        `ref ${JSON.stringify(ref)} does not resolve to a commit in ${fullName}`,
        'not_found',
      );
    return result;
  }

  async readTree(fullName: string): Promise<RepositoryTree> {
    const { owner, repo } = this.split(fullName);
    const branch = await this.defaultBranch(fullName);
    const commit = await this.commitOf(fullName, branch);
    if (!commit) throw new CodeHostError(`repository ${fullName} has no commits yet`, 'failed');
    const tree = await this.call(
      `tree of ${fullName} at ${branch}`,
      async () =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', {
            owner,
            repo,
            tree_sha: commit,
            recursive: '1',
          })
        ).data,
    );
    return {
      ref: branch,
      commit,
      files: tree.tree
        .filter((entry) => entry.type === 'blob' && typeof entry.path === 'string')
        .map((entry) => ({ path: entry.path as string, size: entry.size ?? null })),
      truncated: tree.truncated,
    };
  }

  async postCheck(fullName: string, check: CheckInput): Promise<Posted> {
    const { owner, repo } = this.split(fullName);
    if (!OID.test(check.headSha))
      throw new CodeHostError(
        `check head ${JSON.stringify(check.headSha)} is not a full commit id`,
        'invalid_input',
      );
    if (check.status === 'completed' && !check.conclusion)
      throw new CodeHostError('a completed check needs a conclusion', 'invalid_input');
    const output = {
      title: truncate(check.title, 1000),
      summary: truncate(check.summary, CHECK_TEXT_MAX),
      ...(check.text ? { text: truncate(check.text, CHECK_TEXT_MAX) } : {}),
    };
    // A conclusion is only sent with `completed`: GitHub would complete the check on seeing one.
    const state = {
      name: check.name,
      status: check.status,
      ...(check.status === 'completed' && check.conclusion ? { conclusion: check.conclusion } : {}),
      output,
    };
    if (check.id) {
      if (!/^\d+$/.test(check.id))
        throw new CodeHostError(
          `check id ${JSON.stringify(check.id)} is not a GitHub check run id`,
          'invalid_input',
        );
      const data = await this.call(
        `check ${check.id} of ${fullName}`,
        async () =>
          (
            await this.octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
              owner,
              repo,
              check_run_id: Number(check.id),
              ...state,
            })
          ).data,
      );
      return { id: String(data.id), url: data.html_url ?? null };
    }
    const data = await this.call(
      `check ${check.name} on ${check.headSha} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('POST /repos/{owner}/{repo}/check-runs', {
            owner,
            repo,
            head_sha: check.headSha,
            ...state,
          })
        ).data,
    );
    return { id: String(data.id), url: data.html_url ?? null };
  }

  async postComment(fullName: string, comment: CommentInput): Promise<Posted> {
    const { owner, repo } = this.split(fullName);
    const number = comment.pullRequest;
    if (!Number.isSafeInteger(number) || number < 1)
      throw new CodeHostError(`pull request number ${number} is not a positive integer`, 'invalid_input');
    const numericId = (id: string, what: string) => {
      if (!/^\d+$/.test(id))
        throw new CodeHostError(`${what} ${JSON.stringify(id)} is not a GitHub comment id`, 'invalid_input');
      return Number(id);
    };
    if (comment.id) {
      if (comment.path != null || comment.inReplyTo)
        throw new CodeHostError('only a summary comment can be edited', 'invalid_input');
      const commentId = numericId(comment.id, 'comment id');
      const data = await this.call(
        `comment ${comment.id} of ${fullName}`,
        async () =>
          (
            await this.octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
              owner,
              repo,
              comment_id: commentId,
              body: comment.body,
            })
          ).data,
      );
      return { id: String(data.id), url: data.html_url ?? null };
    }
    if (comment.inReplyTo) {
      const inReplyTo = numericId(comment.inReplyTo, 'inReplyTo');
      const data = await this.call(
        `reply to comment ${comment.inReplyTo} on pull request ${number} of ${fullName}`,
        async () =>
          (
            await this.octokit.request(
              'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies',
              { owner, repo, pull_number: number, comment_id: inReplyTo, body: comment.body },
            )
          ).data,
      );
      return { id: String(data.id), url: data.html_url ?? null };
    }
    if (comment.path != null) {
      checkRepoPath(comment.path);
      if (comment.line == null) throw new CodeHostError('an inline comment needs a line', 'invalid_input');
      if (!comment.commitSha)
        throw new CodeHostError('an inline comment needs the commit its lines refer to', 'invalid_input');
      const end = comment.endLine ?? comment.line;
      const posted = await this.postReview(fullName, {
        pullRequest: number,
        commitSha: comment.commitSha,
        body: '',
        comments: [
          {
            path: comment.path,
            line: end,
            startLine: end > comment.line ? comment.line : null,
            body: comment.body,
          },
        ],
      });
      return posted.comments[0] ?? { id: posted.id, url: posted.url };
    }
    const data = await this.call(
      `comment on pull request ${number} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
            owner,
            repo,
            issue_number: number,
            body: comment.body,
          })
        ).data,
    );
    return { id: String(data.id), url: data.html_url ?? null };
  }

  /**
   * Posts the comments as reviews of at most REVIEW_COMMENT_BATCH comments each (event COMMENT:
   * svc never approves or blocks through a review; the check does that), then reads each review's
   * comments back for their ids.
   */
  async postReview(fullName: string, review: ReviewInput): Promise<PostedReview> {
    const { owner, repo } = this.split(fullName);
    const number = review.pullRequest;
    if (!Number.isSafeInteger(number) || number < 1)
      throw new CodeHostError(`pull request number ${number} is not a positive integer`, 'invalid_input');
    if (!OID.test(review.commitSha))
      throw new CodeHostError(
        `review commit ${JSON.stringify(review.commitSha)} is not a full commit id`,
        'invalid_input',
      );
    for (const c of review.comments) {
      checkRepoPath(c.path);
      if (
        !Number.isSafeInteger(c.line) ||
        c.line < 1 ||
        (c.startLine != null && (c.startLine < 1 || c.startLine > c.line))
      )
        throw new CodeHostError(`comment on ${c.path} has no valid line range`, 'invalid_input');
    }
    const batches: ReviewInput['comments'][] = [];
    for (let i = 0; i < review.comments.length; i += REVIEW_COMMENT_BATCH)
      batches.push(review.comments.slice(i, i + REVIEW_COMMENT_BATCH));
    if (batches.length === 0) batches.push([]);
    const reviews: Posted[] = [];
    const comments: Posted[] = [];
    for (const [index, batch] of batches.entries()) {
      const body =
        batches.length === 1
          ? review.body
          : index === 0
            ? `${review.body}\n\n(part 1 of ${batches.length})`.trim()
            : `(part ${index + 1} of ${batches.length})`;
      const what = `review of pull request ${number} of ${fullName}`;
      const created = await this.call(
        what,
        async () =>
          (
            await this.octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
              owner,
              repo,
              pull_number: number,
              commit_id: review.commitSha,
              event: 'COMMENT',
              body: body || 'svc review',
              comments: batch.map((c) => ({
                path: c.path,
                line: c.line,
                side: 'RIGHT',
                ...(c.startLine != null && c.startLine < c.line
                  ? { start_line: c.startLine, start_side: 'RIGHT' }
                  : {}),
                body: c.body,
              })),
            })
          ).data,
      );
      reviews.push({ id: String(created.id), url: created.html_url ?? null });
      if (batch.length === 0) continue;
      // The review exists on GitHub now: if its comments cannot be read back, each is reported
      // under the review's id (as an unmatched one is below) rather than failing, so the caller
      // records them as posted and a re-run never posts them twice. Their threads then cannot be
      // told apart by comment id; a duplicate on the pull request would be worse.
      const listed = await this.reviewComments(owner, repo, number, Number(created.id)).catch(
        (error: unknown) => {
          if (error instanceof CodeHostError) return [];
          throw error;
        },
      );
      // GitHub lists a review's comments in no promised order: match each input to an unused one.
      const used = new Set<number | bigint>();
      for (const c of batch) {
        const match = listed.find(
          (l) =>
            !used.has(l.id) &&
            l.path === c.path &&
            l.body === c.body &&
            (l.line == null || l.line === c.line),
        );
        if (match) used.add(match.id);
        comments.push(
          match ? { id: String(match.id), url: match.html_url } : { id: String(created.id), url: null },
        );
      }
    }
    const first = reviews[0] as Posted;
    return { id: first.id, url: first.url, reviews, comments };
  }

  /** Every comment of one review (GitHub pages them by 100). */
  private async reviewComments(
    owner: string,
    repo: string,
    pullNumber: number,
    reviewId: number,
  ): Promise<{ id: number | bigint; path: string; line?: number | null; body: string; html_url: string }[]> {
    const listed = [];
    for (let page = 1; ; page++) {
      const data = await this.call(
        `comments of review ${reviewId} on pull request ${pullNumber} of ${owner}/${repo}`,
        async () =>
          (
            await this.octokit.request(
              'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments',
              { owner, repo, pull_number: pullNumber, review_id: reviewId, per_page: 100, page },
            )
          ).data,
      );
      listed.push(...data);
      if (data.length < 100) return listed;
    }
  }

  async openDraftPullRequest(
    fullName: string,
    input: DraftPullRequestInput,
  ): Promise<Posted & { number: number }> {
    const { owner, repo } = this.split(fullName);
    checkRef(input.baseRef, 'base');
    checkRef(input.headRef, 'head');
    const data = await this.call(
      `draft pull request ${input.headRef} → ${input.baseRef} in ${fullName}`,
      async () =>
        (
          await this.octokit.request('POST /repos/{owner}/{repo}/pulls', {
            owner,
            repo,
            title: input.title,
            body: input.body,
            head: input.headRef,
            base: input.baseRef,
            draft: true,
          })
        ).data,
    );
    return { id: String(data.number), number: data.number, url: data.html_url ?? null };
  }

  /**
   * One commit on a new branch through the Git data API: the base commit's tree, a tree on it with
   * the files inline (`content`: GitHub writes the blobs, so one write however many files; writes
   * are spaced, see client.ts), the commit, then the ref. GitHub refuses a ref that exists (422
   * "Reference already exists": `invalid_input`); the objects written before it are unreferenced
   * and GitHub collects them.
   */
  async commitToNewBranch(fullName: string, input: NewBranchCommitInput): Promise<{ commit: string }> {
    const { owner, repo } = this.split(fullName);
    checkNewBranchCommit(input, OID);
    const baseTree = await this.call(
      `base commit ${input.baseSha} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', {
            owner,
            repo,
            commit_sha: input.baseSha,
          })
        ).data.tree.sha,
    );
    const tree = await this.treeWith(fullName, baseTree, input.files);
    const commit = await this.call(
      `commit for branch ${input.branch} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('POST /repos/{owner}/{repo}/git/commits', {
            owner,
            repo,
            message: input.message,
            tree,
            parents: [input.baseSha],
          })
        ).data.sha,
    );
    await this.call(`branch ${input.branch} of ${fullName}`, () =>
      this.octokit.request('POST /repos/{owner}/{repo}/git/refs', {
        owner,
        repo,
        ref: `refs/heads/${input.branch}`,
        sha: commit,
      }),
    );
    return { commit };
  }

  /** The tree `baseTree` with `files` written in (each keeping an executable mode it had); `baseTree` when none. */
  private async treeWith(
    fullName: string,
    baseTree: string,
    files: NewBranchCommitInput['files'],
  ): Promise<string> {
    if (files.length === 0) return baseTree;
    const { owner, repo } = this.split(fullName);
    const modes = await fileModes(
      baseTree,
      files.map((f) => f.path),
      (sha) => this.listTree(fullName, sha),
    );
    return this.call(
      `tree for ${files.length} file(s) on ${baseTree} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('POST /repos/{owner}/{repo}/git/trees', {
            owner,
            repo,
            base_tree: baseTree,
            tree: files.map((f) => ({
              path: f.path,
              mode: modes.get(f.path) ?? '100644',
              type: 'blob' as const,
              content: f.content,
            })),
          })
        ).data.sha,
    );
  }

  /** One tree's entries (git trees API, not recursive). */
  private async listTree(fullName: string, sha: string): Promise<TreeEntry[]> {
    const { owner, repo } = this.split(fullName);
    const data = await this.call(
      `tree ${sha} of ${fullName}`,
      async () =>
        (
          await this.octokit.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', {
            owner,
            repo,
            tree_sha: sha,
          })
        ).data,
    );
    return data.tree.map((entry) => ({
      name: entry.path ?? '',
      mode: entry.mode ?? '',
      type: entry.type as TreeEntry['type'],
      sha: entry.sha ?? '',
    }));
  }

  /**
   * The checks branch protection requires on `branch`: [] when the branch is not protected or its
   * protection requires no status checks; null when GitHub will not say (403: the App lacks the
   * `administration: read` permission, or the plan has no branch protection for this repository).
   */
  async requiredStatusChecks(fullName: string, branch: string): Promise<string[] | null> {
    checkBranchName(branch);
    const policy = await this.statusCheckPolicy(fullName, branch);
    if (policy.kind === 'forbidden') return null;
    if (policy.kind !== 'required') return [];
    return policy.checks.map((c) => c.context);
  }

  /**
   * Adds `check` to what branch protection requires on `branch`, keeping the others and the app
   * each is pinned to; nothing is written when it is required already. An unprotected branch gets
   * a protection rule that requires only this check. A rule that requires no status checks is
   * refused (`failed`): GitHub only adds checks to a rule that has them turned on, and svc does
   * not rewrite a whole rule it did not make. 403 is `failed`, naming `administration: write`.
   */
  async requireStatusCheck(fullName: string, branch: string, check: string): Promise<void> {
    const { owner, repo } = this.split(fullName);
    checkBranchName(branch);
    if (typeof check !== 'string' || check.trim() === '')
      throw new CodeHostError('the check to require needs a name', 'invalid_input');
    const what = `requiring check ${JSON.stringify(check)} on ${branch} of ${fullName}`;
    const policy = await this.statusCheckPolicy(fullName, branch);
    if (policy.kind === 'forbidden') throw protectionRefused(what, policy.message);
    if (policy.kind === 'none_required')
      throw new CodeHostError(
        `${what}: the protection rule of ${branch} requires no status checks, and GitHub adds a check ` +
          'only to a rule that requires some; svc does not rewrite a whole rule it did not make (that ' +
          `resets every setting it does not name). Turn on "Require status checks to pass" for ${branch} and retry`,
        'failed',
      );
    if (policy.kind === 'required') {
      if (policy.checks.some((c) => c.context === check)) return;
      // app_id null (any app may report it) must be sent as -1: an omitted one pins the check to
      // the app that reported it last, which would change a check svc was not asked to touch.
      const checks = [
        ...policy.checks.map((c) => ({ context: c.context, app_id: c.app_id ?? -1 })),
        { context: check },
      ];
      await this.writeProtection(what, () =>
        this.octokit.request(
          'PATCH /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks',
          {
            owner,
            repo,
            branch,
            checks,
          },
        ),
      );
      return;
    }
    // Not protected: there is no rule to keep, so the whole-rule write sets only the check.
    await this.writeProtection(what, () =>
      this.octokit.request('PUT /repos/{owner}/{repo}/branches/{branch}/protection', {
        owner,
        repo,
        branch,
        required_status_checks: { strict: false, contexts: [check] },
        enforce_admins: null,
        required_pull_request_reviews: null,
        restrictions: null,
      }),
    );
  }

  /**
   * What branch protection on `branch` says about status checks. GitHub answers 404 when none are
   * required ("Branch not protected", "Required status checks not enabled") and when the branch
   * is missing ("Branch not found", `not_found`): its message tells them apart.
   */
  private async statusCheckPolicy(fullName: string, branch: string): Promise<StatusCheckPolicy> {
    const { owner, repo } = this.split(fullName);
    try {
      const { data } = await this.octokit.request(
        'GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks',
        { owner, repo, branch },
      );
      const checks = data.checks.map((c) => ({ context: c.context, app_id: c.app_id }));
      // `contexts` is the older list of the same names; one only there is required from any app.
      for (const context of data.contexts)
        if (!checks.some((c) => c.context === context)) checks.push({ context, app_id: null });
      return { kind: 'required', checks };
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal?.status === 403) return { kind: 'forbidden', message: refusal.message };
      if (refusal?.status === 404 && /branch not protected/i.test(refusal.message))
        return { kind: 'unprotected' };
      if (refusal?.status === 404 && /status checks not enabled/i.test(refusal.message))
        return { kind: 'none_required' };
      throw toCodeHostError(error, `branch protection of ${branch} in ${fullName}`);
    }
  }

  /** A branch protection write; 403 becomes `failed` naming the permission it needs. */
  private async writeProtection(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal?.status === 403) throw protectionRefused(what, refusal.message, error);
      throw toCodeHostError(error, what);
    }
  }
}

/** Branch protection as far as status checks go (statusCheckPolicy). */
type StatusCheckPolicy =
  | { kind: 'required'; checks: { context: string; app_id: number | null }[] }
  | { kind: 'unprotected' }
  | { kind: 'none_required' }
  | { kind: 'forbidden'; message: string };

/**
 * GitHub's 403 on branch protection as `failed`. It usually means the App lacks the
 * `administration` permission; when GitHub names another reason (a plan without branch
 * protection for private repositories), its own words are the whole message.
 */
function protectionRefused(what: string, said: string, cause?: unknown): CodeHostError {
  const hint = /upgrade|plan/i.test(said)
    ? ''
    : '; changing branch protection needs the GitHub App\'s "administration: write" repository permission';
  return new CodeHostError(`${what}: GitHub refused (403: ${said})${hint}`, 'failed', { cause });
}
