/**
 * The local code host: every git repository under SVC_REPOS_DIR, as installation 1.
 * `owner/repo` is `DIR/owner/repo` (a work tree or a bare repository; `repo.git` works too).
 *
 * Pull request N is the ref `refs/pull/N/head`; its base is `refs/pull/N/base` when present, else
 * the default branch the repository declares (./default-branch.ts: never the branch checked out in
 * a work tree). The diff a pull request shows is taken from the merge base of base and head, as on
 * GitHub.
 *
 * Writing back: there is no remote to post to, so the local host keeps what svc writes in its
 * own records inside the repository's git dir, as JSON lines, and says so (every `url` is null):
 * - `postCheck` appends to `<git-dir>/svc/checks.jsonl` (an update appends a newer line with the
 *   same id; the latest line per id is the check's state);
 * - `postComment` appends to `<git-dir>/svc/comments.jsonl` (an edit, with `id`, appends a newer
 *   line with the same id); `postReview` appends one line for the review (`review: true`) and one
 *   per inline comment (with its `review_id`) to the same file; a person's comment
 *   (`addPersonComment`, from `svc comment`) goes there too, with `author` set — svc's never have one;
 * - `openDraftPullRequest` really opens a local pull request: it takes the next free N, points
 *   `refs/pull/N/head` and `refs/pull/N/base` at the two branches (symbolic refs, so they follow
 *   later commits as a pull request does), and appends title, body and `draft: true` to
 *   `<git-dir>/svc/pulls.jsonl`, which `getPullRequest` reads back;
 * - `commitToNewBranch` really commits: blobs, a tree built in a temporary index from the base
 *   commit's, a commit by `svc <svc@localhost>`, and the branch, created only if absent;
 * - there is no branch protection: `requiredStatusChecks` cannot tell (null) and
 *   `requireStatusCheck` is `unsupported`.
 * `localRecords` reads the records back (for the CLI, the UI and tests).
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { FULL_COMMIT_ID, refNameProblem, repoFullNameProblem } from '../../core/git-grammar';
import type { Diff } from '../../core/review';
import { checkNewBranchCommit, fileModes, type TreeEntry } from '../new-branch';
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
  type DraftPullRequestInput,
  type NewBranchCommitInput,
  type Posted,
  type PostedReview,
  type PullRequest,
  type RepositoryTree,
  type ResolvedRange,
  type ReviewInput,
} from '../types';
import { DECLARE_DEFAULT_BRANCH, type DefaultBranch, resolveDefaultBranch } from './default-branch';
import { GitFailure, git, gitBuffer, gitOrNull } from './git';
import { gitDiff, readBlobs } from './git-read';

// Its home was this file; importers of it from here keep working.
export { checkRepoPath };

export const LOCAL_INSTALLATION_ID = 1;
const OID = FULL_COMMIT_ID;
/** Who svc's local commits are by, set through the environment so no git config is needed. */
const SVC_IDENTITY: NodeJS.ProcessEnv = {
  GIT_AUTHOR_NAME: 'svc',
  GIT_AUTHOR_EMAIL: 'svc@localhost',
  GIT_COMMITTER_NAME: 'svc',
  GIT_COMMITTER_EMAIL: 'svc@localhost',
};

export type LocalRecordKind = 'checks' | 'comments' | 'pulls';

/** A line of `comments.jsonl`, as postComment, postReview and addPersonComment write it. */
interface LocalCommentRecord {
  id: string;
  pull_request: number;
  body: string;
  path?: string | null;
  in_reply_to?: string | null;
  review?: boolean;
}

export interface LocalPullRecord {
  number: number;
  title: string;
  body: string;
  baseRef: string;
  headRef: string;
  draft: boolean;
  at: string;
}

/**
 * A branch, ref or commit id by the ref grammar (core/git-grammar.ts): nothing git could read as an
 * option, no revision syntax, one line.
 */
function checkRef(ref: string, what: string): void {
  const why = refNameProblem(ref);
  if (why)
    throw new CodeHostError(
      `${what} ${JSON.stringify(ref)} is not a valid ref or commit id: ${why}`,
      'invalid_input',
    );
}

export class LocalCodeHost implements CodeHost {
  readonly kind = 'local' as const;
  /** A local review is lines in a file: no limit. */
  readonly maxCommentsPerReview = Number.POSITIVE_INFINITY;
  readonly installationId = LOCAL_INSTALLATION_ID;

  /**
   * `configuredDefaultBranch`: the default branch a repository's project names in its settings
   * (`svc.repository.default_branch`), null when it names none; the host itself has no database.
   */
  constructor(
    readonly reposDir: string,
    private readonly options: {
      configuredDefaultBranch?: (fullName: string) => Promise<string | null>;
    } = {},
  ) {}

  /** The repository's directory, or null when there is none (or it cannot be read). */
  async locate(fullName: string): Promise<string | null> {
    const found = await this.lookup(fullName);
    return found && 'dir' in found ? found.dir : null;
  }

  /**
   * Where the repository is; why it cannot be read when a directory of that name is there but git
   * cannot open it (permissions, another owner, not a repository); or null when there is none.
   * Rejects names that could escape the dir.
   */
  async lookup(fullName: string): Promise<{ dir: string } | { unreadable: string } | null> {
    if (repoFullNameProblem(fullName) !== null) return null;
    const base = resolve(this.reposDir);
    let unreadable: string | null = null;
    for (const candidate of [join(base, fullName), join(base, `${fullName}.git`)]) {
      // The grammar already keeps the name inside; a second wall costs nothing.
      if (!candidate.startsWith(`${base}${sep}`)) return null;
      const entry = await stat(candidate).then(
        (s) => (s.isDirectory() ? 'directory' : 'other'),
        (error: NodeJS.ErrnoException) => error.code ?? 'error',
      );
      if (entry === 'EACCES' || entry === 'EPERM') {
        unreadable ??= permissionProblem(fullName, candidate);
        continue;
      }
      if (entry !== 'directory') continue;
      // One git process for all three answers: each spawn costs ~20 ms once the process is large
      // (fork copies the page tables; an embedded database alone is ~800 MiB), and a review
      // locates its repository four times.
      const answer = await git(candidate, [
        'rev-parse',
        '--is-inside-work-tree',
        '--is-bare-repository',
        '--absolute-git-dir',
      ]).then(
        (out) => ({ out }),
        (error: { stderr?: string; code?: string }) => {
          // git missing or hung says nothing about the repository: it goes up by its own name.
          if (error instanceof CodeHostError) throw error;
          return { error };
        },
      );
      if ('error' in answer) {
        unreadable ??= unreadableReason(fullName, candidate, answer.error);
        continue;
      }
      const [work, bare, top] = answer.out.split('\n');
      const inside = work?.trim() === 'true' || bare?.trim() === 'true';
      // Only a repository whose own top is this directory counts, not a subfolder of some outer one.
      if (inside && top?.trim() && resolve(top.trim()).startsWith(resolve(candidate)))
        return { dir: candidate };
      unreadable ??= notARepository(fullName, candidate);
    }
    return unreadable === null ? null : { unreadable };
  }

  async repositoryExists(fullName: string): Promise<boolean> {
    const found = await this.lookup(fullName);
    if (found && 'unreadable' in found) throw new CodeHostError(found.unreadable, 'unreadable');
    return found !== null;
  }

  /** The repository's directory; `not_found` when there is none, `unreadable` when git cannot open it. */
  private async repo(fullName: string): Promise<string> {
    const found = await this.lookup(fullName);
    if (found && 'dir' in found) return found.dir;
    if (found) throw new CodeHostError(found.unreadable, 'unreadable');
    throw new CodeHostError(this.whereLooked(fullName), 'not_found');
  }

  /** Where a repository svc did not find was looked for: the folders under SVC_REPOS_DIR. */
  whereLooked(fullName: string): string {
    return `repository ${fullName} is not under ${resolve(this.reposDir)} (SVC_REPOS_DIR): no directory ${fullName} or ${fullName}.git there`;
  }

  /** The default branch's tree; HEAD's only when the repository declares no default branch. */
  async readTree(fullName: string): Promise<RepositoryTree> {
    const dir = await this.repo(fullName);
    const declared = await this.declaredDefaultBranch(dir, fullName);
    let commit: string;
    try {
      commit = declared?.tip ?? (await git(dir, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    } catch (error) {
      throw new CodeHostError(`repository ${fullName} has no commits yet`, 'failed', { cause: error });
    }
    const listing = await git(dir, ['ls-tree', '-r', '-z', '--long', '--end-of-options', commit]);
    const files: RepositoryTree['files'] = [];
    for (const entry of listing.split('\0')) {
      // "<mode> <type> <object> <size>\t<path>"
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      const [, type, , size] = entry.slice(0, tab).split(/\s+/);
      if (type !== 'blob') continue;
      files.push({
        path: entry.slice(tab + 1),
        size: size === '-' || size === undefined ? null : Number(size),
      });
    }
    return { ref: declared?.name ?? 'HEAD', commit, files, truncated: false };
  }

  /** The commit a ref, branch or commit id names, or null. */
  private async commitOf(dir: string, ref: string): Promise<string | null> {
    const out = await gitOrNull(dir, [
      'rev-parse',
      '--verify',
      '--quiet',
      '--end-of-options',
      `${ref}^{commit}`,
    ]);
    return out?.trim() || null;
  }

  /**
   * The commits several refs name (null for one that names none), with one git process:
   * `cat-file --batch-check` answers `<ref>^{commit}` as rev-parse --verify would. Refs must not
   * contain line breaks (checkRef).
   */
  private async commitsOf(dir: string, refs: string[]): Promise<(string | null)[]> {
    const out = await gitBuffer(
      dir,
      ['cat-file', '--batch-check'],
      refs.map((ref) => `${ref}^{commit}\n`).join(''),
    ).catch(() => null);
    const lines = out?.toString('utf8').split('\n') ?? [];
    return refs.map((_, i) => /^([0-9a-f]{40,64}) commit \d+$/.exec(lines[i] ?? '')?.[1] ?? null);
  }

  private async mergeBase(dir: string, a: string, b: string): Promise<string | null> {
    const out = await gitOrNull(dir, ['merge-base', '--end-of-options', a, b]);
    return out?.trim() || null;
  }

  async defaultBranch(fullName: string): Promise<string> {
    const dir = await this.repo(fullName);
    return (await this.defaultBranchOf(dir, fullName)).name;
  }

  /**
   * The default branch the repository (or its project's settings) declares, with where that was
   * read from, or null when nothing names an existing branch. For the watcher, which has `dir`.
   */
  async declaredDefaultBranch(dir: string, fullName: string): Promise<DefaultBranch | null> {
    const configured = (await this.options.configuredDefaultBranch?.(fullName)) ?? null;
    return resolveDefaultBranch(dir, configured);
  }

  private async defaultBranchOf(dir: string, fullName: string): Promise<DefaultBranch> {
    const declared = await this.declaredDefaultBranch(dir, fullName);
    if (declared) return declared;
    throw new CodeHostError(
      `repository ${fullName} declares no default branch that exists (and there is no main or master): ${DECLARE_DEFAULT_BRANCH}`,
      'not_found',
    );
  }

  async getPullRequest(fullName: string, number: number): Promise<PullRequest> {
    if (!Number.isSafeInteger(number) || number < 1)
      throw new CodeHostError(`pull request number ${number} is not a positive integer`, 'invalid_input');
    const dir = await this.repo(fullName);
    const headName = `refs/pull/${number}/head`;
    const baseName = `refs/pull/${number}/base`;
    const headSha = await this.commitOf(dir, headName);
    if (!headSha) throw this.noPullRequest(fullName, dir, number);
    const record = (await this.localRecords<LocalPullRecord>(fullName, 'pulls'))
      .filter((r) => r.number === number)
      .at(-1);
    const branchOf = async (ref: string) => {
      const target = (await gitOrNull(dir, ['symbolic-ref', '-q', '--end-of-options', ref]))?.trim();
      return target?.startsWith('refs/heads/') ? target.slice('refs/heads/'.length) : null;
    };
    let baseRef: string;
    let baseSha = await this.commitOf(dir, baseName);
    if (baseSha) {
      baseRef = record?.baseRef ?? (await branchOf(baseName)) ?? baseName;
    } else {
      const declared = await this.defaultBranchOf(dir, fullName);
      baseRef = declared.name;
      baseSha = declared.tip;
    }
    const headRef = record?.headRef ?? (await branchOf(headName)) ?? headName;
    const mergeBaseSha = await this.mergeBase(dir, baseSha, headSha);
    const [author = '', subject = ''] = await this.openingCommit(dir, mergeBaseSha, headSha);
    return {
      number,
      title: record?.title ?? subject,
      baseRef,
      headRef,
      baseSha,
      headSha,
      mergeBaseSha,
      draft: record?.draft ?? false,
      author: author || null,
    };
  }

  /**
   * Throws `not_found` unless the repository has pull request `number` (its head ref names a
   * commit): one git process. The review acknowledgement refuses a pull request that is not there
   * before planning a run; checks and comments are not posted to one.
   */
  async requirePullRequest(fullName: string, number: number): Promise<void> {
    const dir = await this.repo(fullName);
    if (!(await this.commitOf(dir, `refs/pull/${number}/head`)))
      throw this.noPullRequest(fullName, dir, number);
  }

  /** Not found, saying where svc looked and how a local pull request is opened. */
  private noPullRequest(fullName: string, dir: string, number: number): CodeHostError {
    const ref = `refs/pull/${number}/head`;
    return new CodeHostError(
      `pull request ${number} not found in ${fullName}: no ${ref} in ${dir} (SVC_REPOS_DIR is ${resolve(this.reposDir)}); ` +
        `open it there with \`git symbolic-ref ${ref} refs/heads/<branch>\``,
      'not_found',
    );
  }

  /**
   * The author and subject of a pull request opened by creating its ref (no record says who opened
   * it, or its title): those of its first commit after the merge base, so the title stays the same
   * as commits are pushed, as a title written once does. A head its base already holds has none:
   * the head's own.
   */
  private async openingCommit(dir: string, mergeBaseSha: string | null, headSha: string): Promise<string[]> {
    const range = mergeBaseSha && mergeBaseSha !== headSha ? `${mergeBaseSha}..${headSha}` : headSha;
    const args =
      range === headSha
        ? ['show', '-s', '--format=%an%x00%s', '--end-of-options', headSha]
        : ['log', '--reverse', '--format=%an%x00%s', '--end-of-options', range, '--'];
    const first = (await git(dir, args)).split('\n')[0] ?? '';
    return first.split('\0');
  }

  async resolveRange(fullName: string, base: string, head: string): Promise<ResolvedRange> {
    const dir = await this.repo(fullName);
    const { baseSha, headSha } = await this.resolveEnds(dir, fullName, base, head);
    return { base, head, baseSha, headSha, mergeBaseSha: await this.mergeBase(dir, baseSha, headSha) };
  }

  private async resolveEnds(
    dir: string,
    fullName: string,
    base: string,
    head: string,
  ): Promise<{ baseSha: string; headSha: string }> {
    checkRef(base, 'base');
    checkRef(head, 'head');
    const [baseSha, headSha] = await this.commitsOf(dir, [base, head]);
    if (!baseSha || !headSha) {
      const missing = [
        !baseSha && `base ${JSON.stringify(base)}`,
        !headSha && `head ${JSON.stringify(head)}`,
      ];
      const named = missing.filter(Boolean);
      throw new CodeHostError(
        `range ${base}..${head} does not resolve in ${fullName}: ${named.join(' and ')} ` +
          `${named.length > 1 ? 'are' : 'is'} not a branch, ref or commit`,
        'not_found',
      );
    }
    return { baseSha, headSha };
  }

  async getDiff(
    fullName: string,
    baseSha: string,
    headSha: string,
    limits?: Partial<DiffLimits>,
  ): Promise<Diff> {
    const dir = await this.repo(fullName);
    const range = await this.resolveEnds(dir, fullName, baseSha, headSha);
    const effective: DiffLimits = { ...DEFAULT_DIFF_LIMITS, ...limits };
    try {
      return await gitDiff(dir, range.baseSha, range.headSha, effective);
    } catch (error) {
      if (error instanceof GitFailure)
        throw new CodeHostError(`git diff failed in ${fullName}: ${error.message}`, 'failed', {
          cause: error,
        });
      throw error;
    }
  }

  async readFile(fullName: string, ref: string, path: string): Promise<Buffer | null> {
    return (await this.readFiles(fullName, ref, [path])).get(path) ?? null;
  }

  /** One `git cat-file --batch` for all paths. */
  async readFiles(
    fullName: string,
    ref: string,
    paths: readonly string[],
  ): Promise<Map<string, Buffer | null>> {
    checkRef(ref, 'ref');
    for (const path of paths) checkRepoPath(path);
    const dir = await this.repo(fullName);
    const commit = await this.commitOf(dir, ref);
    if (!commit)
      throw new CodeHostError(
        `ref ${JSON.stringify(ref)} does not resolve to a commit in ${fullName}`,
        'not_found',
      );
    return readBlobs(dir, commit, paths);
  }

  private async svcDir(fullName: string): Promise<string> {
    const dir = await this.repo(fullName);
    const gitDir = (await git(dir, ['rev-parse', '--absolute-git-dir'])).trim();
    return join(gitDir, 'svc');
  }

  private async append(fullName: string, kind: LocalRecordKind, record: object): Promise<void> {
    const dir = await this.svcDir(fullName);
    await mkdir(dir, { recursive: true });
    await appendFile(join(dir, `${kind}.jsonl`), `${JSON.stringify(record)}\n`);
  }

  /** What svc wrote to this repository's local records, oldest first. */
  async localRecords<T = Record<string, unknown>>(fullName: string, kind: LocalRecordKind): Promise<T[]> {
    const file = join(await this.svcDir(fullName), `${kind}.jsonl`);
    const text = await readFile(file, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as T];
        } catch {
          return []; // a torn last line from a crash is not a record
        }
      });
  }

  /**
   * A comment a person writes on pull request N (`svc comment`), appended to `comments.jsonl`
   * like svc's own but with `author` set: svc's records carry none, which is how the watcher
   * (automation/local-watch.ts) tells a person's comment, to act on, from svc's.
   */
  async addPersonComment(
    fullName: string,
    input: { pullRequest: number; body: string; author: string; inReplyTo?: string | null },
  ): Promise<Posted> {
    if (!input.body.trim()) throw new CodeHostError('a comment needs a body', 'invalid_input');
    if (!input.author.trim()) throw new CodeHostError('a comment needs an author', 'invalid_input');
    await this.requirePullRequest(fullName, input.pullRequest);
    if (
      input.inReplyTo &&
      !(await this.localRecords<{ id: string }>(fullName, 'comments')).some((r) => r.id === input.inReplyTo)
    )
      throw new CodeHostError(`comment ${input.inReplyTo} not found in ${fullName}`, 'not_found');
    const id = `local-comment-${randomUUID()}`;
    await this.append(fullName, 'comments', {
      id,
      pull_request: input.pullRequest,
      body: input.body,
      path: null,
      line: null,
      end_line: null,
      commit_sha: null,
      in_reply_to: input.inReplyTo ?? null,
      author: input.author,
      at: new Date().toISOString(),
    });
    return { id, url: null };
  }

  /** `git log base..head`, oldest first, each commit's whole message. */
  async listCommits(fullName: string, baseSha: string, headSha: string): Promise<CommitMessage[]> {
    const dir = await this.repo(fullName);
    const { baseSha: base, headSha: head } = await this.resolveEnds(dir, fullName, baseSha, headSha);
    const log = await failedAs(`git log of ${fullName}`, () =>
      git(dir, ['log', '--reverse', '--format=%H%x00%B%x1e', '--end-of-options', `${base}..${head}`, '--']),
    );
    return log
      .split('\x1e')
      .map((entry) => entry.replace(/^\n/, ''))
      .filter((entry) => entry.includes('\0'))
      .map((entry) => {
        const [sha = '', message = ''] = entry.split('\0');
        return { sha, message: message.trimEnd() };
      });
  }

  /**
   * The conversation comments of pull request N in `comments.jsonl` (`svc comment` without a
   * thread, and svc's summary), the latest text of each, oldest first.
   */
  async listConversation(fullName: string, number: number): Promise<ConversationComment[]> {
    await this.requirePullRequest(fullName, number);
    const latest = new Map<string, string>();
    for (const record of await this.localRecords<LocalCommentRecord>(fullName, 'comments')) {
      if (record.pull_request !== number || record.path != null || record.in_reply_to || record.review)
        continue;
      latest.set(record.id, record.body);
    }
    return [...latest].map(([id, body]) => ({ id, body }));
  }

  /** Records the check in `<git-dir>/svc/checks.jsonl` (see the file comment); url is null. */
  async postCheck(fullName: string, check: CheckInput): Promise<Posted> {
    if (!OID.test(check.headSha))
      throw new CodeHostError(
        `check head ${JSON.stringify(check.headSha)} is not a full commit id`,
        'invalid_input',
      );
    if (check.status === 'completed' && !check.conclusion)
      throw new CodeHostError('a completed check needs a conclusion', 'invalid_input');
    const dir = await this.repo(fullName);
    if (!(await this.commitOf(dir, check.headSha)))
      throw new CodeHostError(`commit ${check.headSha} not found in ${fullName}`, 'not_found');
    let id = check.id ?? null;
    if (id) {
      const known = (await this.localRecords<{ id: string }>(fullName, 'checks')).some((r) => r.id === id);
      if (!known) throw new CodeHostError(`check ${id} not found in ${fullName}`, 'not_found');
    } else {
      id = `local-check-${randomUUID()}`;
    }
    await this.append(fullName, 'checks', {
      id,
      name: check.name,
      head_sha: check.headSha,
      status: check.status,
      conclusion: check.conclusion ?? null,
      title: check.title,
      summary: check.summary,
      text: check.text ?? null,
      at: new Date().toISOString(),
    });
    return { id, url: null };
  }

  /** Records the comment in `<git-dir>/svc/comments.jsonl` (see the file comment); url is null. */
  async postComment(fullName: string, comment: CommentInput): Promise<Posted> {
    await this.requirePullRequest(fullName, comment.pullRequest);
    if (comment.path != null) {
      checkRepoPath(comment.path);
      if (comment.line == null) throw new CodeHostError('an inline comment needs a line', 'invalid_input');
    }
    const known = async (id: string) =>
      (await this.localRecords<{ id: string }>(fullName, 'comments')).some((r) => r.id === id);
    if (comment.id) {
      if (comment.path != null || comment.inReplyTo)
        throw new CodeHostError('only a summary comment can be edited', 'invalid_input');
      if (!(await known(comment.id)))
        throw new CodeHostError(`comment ${comment.id} not found in ${fullName}`, 'not_found');
    }
    if (comment.inReplyTo && !(await known(comment.inReplyTo)))
      throw new CodeHostError(`comment ${comment.inReplyTo} not found in ${fullName}`, 'not_found');
    const id = comment.id || `local-comment-${randomUUID()}`;
    await this.append(fullName, 'comments', {
      id,
      pull_request: comment.pullRequest,
      body: comment.body,
      path: comment.path ?? null,
      line: comment.line ?? null,
      end_line: comment.endLine ?? null,
      commit_sha: comment.commitSha ?? null,
      in_reply_to: comment.inReplyTo ?? null,
      at: new Date().toISOString(),
    });
    return { id, url: null };
  }

  /** Records the review and its comments in `<git-dir>/svc/comments.jsonl` (see the file comment). */
  async postReview(fullName: string, review: ReviewInput): Promise<PostedReview> {
    await this.requirePullRequest(fullName, review.pullRequest);
    if (!OID.test(review.commitSha))
      throw new CodeHostError(
        `review commit ${JSON.stringify(review.commitSha)} is not a full commit id`,
        'invalid_input',
      );
    for (const c of review.comments) {
      checkRepoPath(c.path);
      if (!Number.isSafeInteger(c.line) || c.line < 1 || (c.startLine != null && c.startLine > c.line))
        throw new CodeHostError(`comment on ${c.path} has no valid line range`, 'invalid_input');
    }
    const reviewId = `local-review-${randomUUID()}`;
    const at = new Date().toISOString();
    await this.append(fullName, 'comments', {
      id: reviewId,
      review: true,
      pull_request: review.pullRequest,
      body: review.body,
      commit_sha: review.commitSha,
      at,
    });
    const comments: Posted[] = [];
    for (const c of review.comments) {
      const id = `local-comment-${randomUUID()}`;
      await this.append(fullName, 'comments', {
        id,
        review_id: reviewId,
        pull_request: review.pullRequest,
        body: c.body,
        path: c.path,
        line: c.startLine ?? c.line,
        end_line: c.line,
        commit_sha: review.commitSha,
        in_reply_to: null,
        at,
      });
      comments.push({ id, url: null });
    }
    return { id: reviewId, url: null, reviews: [{ id: reviewId, url: null }], comments };
  }

  /** Opens local pull request N from `headRef` into `baseRef` (see the file comment). */
  async openDraftPullRequest(
    fullName: string,
    input: DraftPullRequestInput,
  ): Promise<Posted & { number: number }> {
    checkRef(input.baseRef, 'base');
    checkRef(input.headRef, 'head');
    const dir = await this.repo(fullName);
    const branch = async (name: string, what: string) => {
      const ref = name.startsWith('refs/') ? name : `refs/heads/${name}`;
      const sha = await this.commitOf(dir, ref);
      if (!sha) throw new CodeHostError(`${what} branch ${name} not found in ${fullName}`, 'not_found');
      return { ref, sha };
    };
    const head = await branch(input.headRef, 'head');
    const base = await branch(input.baseRef, 'base');
    const taken = (await git(dir, ['for-each-ref', '--format=%(refname)', 'refs/pull/']))
      .split('\n')
      .map((ref) => /^refs\/pull\/(\d+)\//.exec(ref)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    let number = Math.max(0, ...taken) + 1;
    const zero = '0'.repeat(head.sha.length);
    // update-ref with a zero old value creates only when absent, so two openers never share an N.
    for (; ; number++) {
      const created = await gitOrNull(dir, [
        'update-ref',
        '--end-of-options',
        `refs/pull/${number}/head`,
        head.sha,
        zero,
      ]);
      if (created !== null) break;
      if (number > 1_000_000) throw new CodeHostError(`no free pull request number in ${fullName}`, 'failed');
    }
    const link = async (name: string, target: { ref: string; sha: string }) => {
      if (target.ref.startsWith('refs/heads/'))
        await git(dir, ['symbolic-ref', '--end-of-options', name, target.ref]);
      else await git(dir, ['update-ref', '--end-of-options', name, target.sha]);
    };
    await link(`refs/pull/${number}/head`, head);
    await link(`refs/pull/${number}/base`, base);
    const record: LocalPullRecord = {
      number,
      title: input.title,
      body: input.body,
      baseRef: input.baseRef,
      headRef: input.headRef,
      draft: true,
      at: new Date().toISOString(),
    };
    await this.append(fullName, 'pulls', record);
    return { id: String(number), number, url: null };
  }

  /**
   * Writes the files as blobs, builds the base commit's tree with them in a temporary index (the
   * repository's own index and work tree are never touched), commits that tree on `baseSha` as
   * svc, and creates `refs/heads/<branch>` only if it is absent (see the file comment).
   */
  async commitToNewBranch(fullName: string, input: NewBranchCommitInput): Promise<{ commit: string }> {
    checkNewBranchCommit(input, OID);
    const dir = await this.repo(fullName);
    // check-ref-format takes no --end-of-options (git 2.39); the value starts with `refs/`, never `-`.
    if ((await gitOrNull(dir, ['check-ref-format', `refs/heads/${input.branch}`])) === null)
      throw new CodeHostError(
        `branch ${JSON.stringify(input.branch)} is not a valid branch name`,
        'invalid_input',
      );
    const base = await this.commitOf(dir, input.baseSha);
    if (!base) throw new CodeHostError(`base commit ${input.baseSha} not found in ${fullName}`, 'not_found');
    await this.refuseBranchClash(dir, fullName, input.branch);
    return failedAs(`commit on new branch ${input.branch} of ${fullName}`, async () => {
      const tree = await this.treeWith(dir, base, input.files);
      const commit = (
        await gitBuffer(
          dir,
          ['commit-tree', '--no-gpg-sign', '-p', base, '-F', '-', '--end-of-options', tree],
          input.message,
          SVC_IDENTITY,
        )
      )
        .toString('utf8')
        .trim();
      await this.createBranch(dir, fullName, input.branch, commit);
      return { commit };
    });
  }

  /** `invalid_input` when `refs/heads/<branch>` exists or another branch is in its way. */
  private async refuseBranchClash(dir: string, fullName: string, branch: string): Promise<void> {
    const clash = await this.branchClash(dir, branch);
    if (clash)
      throw new CodeHostError(`cannot create branch ${branch} in ${fullName}: ${clash}`, 'invalid_input');
  }

  /**
   * Why `refs/heads/<branch>` cannot be created, or null: it exists, or a branch named like one of
   * its folders exists (`svc` blocks `svc/x`), or branches live under it as a folder.
   */
  private async branchClash(dir: string, branch: string): Promise<string | null> {
    const target = `refs/heads/${branch}`;
    // A pattern matches the ref itself and every ref below it, so one call sees all three cases.
    const first = `refs/heads/${branch.split('/')[0]}`;
    const refs = (await git(dir, ['for-each-ref', '--format=%(refname)', '--end-of-options', first]))
      .split('\n')
      .filter(Boolean);
    const name = (ref: string) => ref.slice('refs/heads/'.length);
    if (refs.includes(target)) return 'the branch already exists';
    const above = refs.find((ref) => target.startsWith(`${ref}/`));
    if (above) return `branch ${name(above)} exists, and a branch name cannot also be a folder of branches`;
    const below = refs.find((ref) => ref.startsWith(`${target}/`));
    if (below) return `branch ${name(below)} exists, so ${branch} is a folder of branches`;
    return null;
  }

  /** Points the new branch at `commit`; a zero old value makes git create it only if absent. */
  private async createBranch(dir: string, fullName: string, branch: string, commit: string): Promise<void> {
    const zero = '0'.repeat(commit.length);
    try {
      await gitBuffer(dir, [
        'update-ref',
        '-m',
        'svc: new branch',
        '--end-of-options',
        `refs/heads/${branch}`,
        commit,
        zero,
      ]);
    } catch (error) {
      // Someone made the branch (or one in its way) since the check above: still the caller's input.
      await this.refuseBranchClash(dir, fullName, branch);
      throw error;
    }
  }

  /** The tree of `base` with `files` written in (each keeping an executable mode it had); `base`'s own when none. */
  private async treeWith(dir: string, base: string, files: NewBranchCommitInput['files']): Promise<string> {
    const baseTree = (await git(dir, ['rev-parse', '--verify', '--end-of-options', `${base}^{tree}`])).trim();
    if (files.length === 0) return baseTree;
    const modes = await fileModes(
      baseTree,
      files.map((f) => f.path),
      (sha) => this.listTree(dir, sha),
    );
    const scratch = await mkdtemp(join(tmpdir(), 'svc-commit-'));
    try {
      const blobs = await this.writeBlobs(dir, scratch, files);
      const index = { GIT_INDEX_FILE: join(scratch, 'index') };
      await gitBuffer(dir, ['read-tree', '--end-of-options', baseTree], undefined, index);
      const entries = files.map((f, i) => `${modes.get(f.path)} ${blobs[i]}\t${f.path}\0`).join('');
      await gitBuffer(dir, ['update-index', '-z', '--index-info'], entries, index);
      return (await gitBuffer(dir, ['write-tree'], undefined, index)).toString('utf8').trim();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Writes each content as a blob, exactly as given (`--no-filters`: no end-of-line or attribute
   * conversion), through one git process; returns the blob ids in order.
   */
  private async writeBlobs(
    dir: string,
    scratch: string,
    files: NewBranchCommitInput['files'],
  ): Promise<string[]> {
    const sources = files.map((_, i) => join(scratch, `blob-${i}`));
    await Promise.all(files.map((f, i) => writeFile(sources[i] as string, f.content, 'utf8')));
    const out = await gitBuffer(
      dir,
      ['hash-object', '-w', '--no-filters', '--stdin-paths'],
      `${sources.join('\n')}\n`,
    );
    return out.toString('utf8').trim().split('\n');
  }

  /** One tree's entries (`git ls-tree`, not recursive). */
  private async listTree(dir: string, sha: string): Promise<TreeEntry[]> {
    const out = await git(dir, ['ls-tree', '-z', '--end-of-options', sha]);
    return out
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        // "<mode> SP <type> SP <object> TAB <name>"
        const tab = line.indexOf('\t');
        const [mode = '', type = '', object = ''] = line.slice(0, tab).split(' ');
        return { name: line.slice(tab + 1), mode, type: type as TreeEntry['type'], sha: object };
      });
  }

  /** The local host has no branch protection: it cannot tell what a merge requires (null). */
  async requiredStatusChecks(fullName: string, _branch: string): Promise<string[] | null> {
    await this.repo(fullName);
    return null;
  }

  /** `unsupported`: nothing locally enforces a required check (see requiredStatusChecks). */
  async requireStatusCheck(fullName: string, branch: string, check: string): Promise<void> {
    await this.repo(fullName);
    throw new CodeHostError(
      `the local code host has no branch protection: it cannot require ${JSON.stringify(check)} on ${branch} ` +
        `of ${fullName} (svc still records the check in <git-dir>/svc/checks.jsonl)`,
      'unsupported',
    );
  }
}

/** Runs `fn`; a git failure inside becomes a CodeHostError `failed` about `what`. */
async function failedAs<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof CodeHostError) throw error;
    throw new CodeHostError(`${what} failed: ${(error as Error).message}`, 'failed', { cause: error });
  }
}

/** The user svc runs as, for a remedy that names who needs access. */
function runningAs(): string {
  const uid = process.getuid?.();
  return uid === undefined ? 'the user svc runs as' : `the user svc runs as (uid ${uid})`;
}

function permissionProblem(fullName: string, dir: string): string {
  return (
    `repository ${fullName} is at ${dir}, but svc is not allowed to read it (permission denied). ` +
    `Give ${runningAs()} read and execute permission on it and on every directory above it.`
  );
}

function notARepository(fullName: string, dir: string): string {
  return (
    `${dir} is a directory but not a git repository of its own, so repository ${fullName} cannot be read. ` +
    `Clone the repository there (git clone --mirror <url> ${dir}.git) or remove the directory.`
  );
}

/** What git's refusal to open a repository directory means, with the remedy that fits it. */
export function unreadableReason(
  fullName: string,
  dir: string,
  error: { stderr?: string; code?: string },
): string {
  const said = (error.stderr ?? '').trim();
  if (/dubious ownership/i.test(said)) {
    return (
      `repository ${fullName} at ${dir} belongs to another user, and git refuses to read it ("detected dubious ` +
      `ownership"). Run svc as the repository's owner, or trust the directory for every git run as svc's user ` +
      `(docs/local-host.md, "Repositories svc cannot read", says what that does and does not protect): ` +
      `git config --global --add ` +
      `safe.directory ${dir}`
    );
  }
  // Spawning git in a directory svc may not enter fails with EACCES before git says anything.
  if (/permission denied/i.test(said) || error.code === 'EACCES') return permissionProblem(fullName, dir);
  if (/not a git repository/i.test(said)) return notARepository(fullName, dir);
  const last = said.split('\n').at(-1) || (error.code ? `spawn failed: ${error.code}` : 'no message');
  return `repository ${fullName} at ${dir} cannot be read by git (${last}). Check it with: git -C ${dir} status`;
}
