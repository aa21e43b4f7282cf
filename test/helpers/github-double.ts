/**
 * A local stand-in for api.github.com: a real HTTP server on 127.0.0.1 that checks every request
 * against GitHub's own REST description (test/fixtures/github-openapi.json, made by
 * scripts/extract-github-openapi.mjs) with openapi-backend, and answers from a small stateful fake.
 *
 * What a request must pass, or it is answered as GitHub would and kept in `rejections`:
 * - an operation in the description for its method and path (else 404);
 * - path parameters of the declared types (else 404, as GitHub does), query and body against the
 *   schemas (else 422; a body that is not JSON: 400);
 * - `Authorization`: `Bearer <JWT>` signed RS256 by the App's key, `iss` = the App id, at most
 *   10 minutes long and not expired, on /app endpoints; `token <t>` or `Bearer <t>` with an
 *   unexpired installation token of an installation that can see the repository elsewhere (else 401);
 * - GitHub's own semantic checks the fakes know: review comment lines must be in the diff, a
 *   completed check needs a conclusion, a check's head_sha must be a commit of the repository,
 *   a pull request's branches must exist…
 *
 * State: repositories are real git repositories (`seedFromGit`): commits, trees, contents and
 * compares are read from them with git, so a diff here is git's diff, and the Git data API writes
 * into them (trees with inline content, commits, refs). Pull requests, check runs, issue comments,
 * reviews and review comments, installation tokens and branch protection (`setBranchProtection`)
 * live in memory, readable by tests. Each installation has an `administration` permission
 * (`setAdministrationPermission`, default write) that the branch protection endpoints honour with
 * GitHub's 403. `failNext` (and its three shorthands) makes the next N matching requests fail with a
 * 5xx, a primary or a secondary rate limit. Every request is kept in `requests`.
 */
import { execFile } from 'node:child_process';
import { createPublicKey, type KeyObject, randomBytes, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { OpenAPIBackend, type Request as OpenApiRequest } from 'openapi-backend';

const run = promisify(execFile);
const FIXTURE = resolve(import.meta.dirname, '../fixtures/github-openapi.json');
const DOCS = 'https://docs.github.com/rest';
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** The App's slug (apps/get-authenticated); commits it makes are by `<slug>[bot]`. */
const APP_SLUG = 'svc-test';

export interface RecordedRequest {
  method: string;
  /** The path as sent (percent-encoded). */
  path: string;
  /** The operation it matched, e.g. `pulls/get`; null when none. */
  operationId: string | null;
  query: Record<string, string | string[]>;
  body: unknown;
  auth: 'jwt' | 'token' | 'none' | 'other';
  accept: string | null;
  status: number;
  at: number;
}

export interface Rejection {
  method: string;
  path: string;
  status: number;
  reason: string;
}

export interface ScriptedFailure {
  status: number;
  message: string;
  headers?: () => Record<string, string>;
  /** Which requests it applies to. Default: every request outside /app (the App's own endpoints). */
  match?: (request: { method: string; path: string; operationId: string }) => boolean;
}

export interface CheckRunRecord {
  id: number;
  repo: string;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string } | null;
  /** Every state it had, oldest first (created, then each update). */
  history: { status: string; conclusion: string | null; title: string | null; summary: string | null }[];
}

export interface IssueCommentRecord {
  id: number;
  repo: string;
  issue_number: number;
  body: string;
  /** Earlier bodies, oldest first. */
  edits: string[];
  /** Who wrote it; svc's own (`svc[bot]`) when absent. */
  user?: string;
}

export interface ReviewCommentRecord {
  id: number;
  repo: string;
  pull_number: number;
  review_id: number;
  path: string;
  line: number | null;
  start_line: number | null;
  side: string;
  body: string;
  commit_id: string;
  in_reply_to_id: number | null;
}

export interface ReviewRecord {
  id: number;
  repo: string;
  pull_number: number;
  commit_id: string;
  body: string;
  event: string | null;
  state: string;
  comment_ids: number[];
}

export interface PullRecord {
  number: number;
  repo: string;
  title: string;
  body: string | null;
  base: string;
  head: string;
  draft: boolean;
  user: string;
}

/** A status check branch protection requires, and the app it must come from (null: any app). */
export interface RequiredCheck {
  context: string;
  app_id: number | null;
}

export interface BranchProtectionRecord {
  /** null: the branch is protected, but its rule requires no status checks. */
  requiredStatusChecks: { strict: boolean; checks: RequiredCheck[] } | null;
  /** The rest of the rule (enforce_admins, required_pull_request_reviews, …) as set or last PUT. */
  settings: Json;
}

/** An installation's `administration` permission: what branch protection it may read and change. */
export type AdministrationPermission = 'none' | 'read' | 'write';

interface RepoRecord {
  owner: string;
  name: string;
  id: number;
  dir: string;
  defaultBranch: string;
  installationId: number | null;
  nextNumber: number;
}

export interface GitHubDoubleOptions {
  appId: number;
  /** The App's public key (PEM or KeyObject): JWTs are checked with it. */
  publicKey: string | KeyObject;
  /** Installations the App has. Default [100]. */
  installations?: number[];
  /** Lifetime of an installation token (ms). Default one hour, as GitHub. */
  tokenTtlMs?: number;
  /** Files compare lists at most. Default 300, as GitHub. */
  compareFileCap?: number;
  /** Files a pull request's file list holds at most. Default 3000, as GitHub. */
  pullFilesCap?: number;
  /** A file whose patch is longer comes without `patch`. Default 1 MiB. */
  patchLimitBytes?: number;
}

type Json = Record<string, unknown>;
type Handler = (ctx: HandlerContext) => Promise<Reply>;
interface HandlerContext {
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  body: Json;
  accept: string;
  installationId: number | null;
}
interface Reply {
  status: number;
  body?: unknown;
  raw?: { data: Buffer | string; contentType: string };
  headers?: Record<string, string>;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: unknown[],
  ) {
    super(message);
  }
}

/** A well-formed request for something that does not exist: GitHub's 404, not svc's mistake. */
class Absent extends Error {}

/**
 * GitHub's refusal of a well-formed request, answered in its words but not kept in `rejections`
 * (it is GitHub's state speaking, not svc's mistake): "Branch not protected", a missing permission.
 */
class Answer extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** GitHub's "not a JSON null without a type" (`nullable` next to allOf/anyOf) as ajv understands it. */
function ajvCompatible(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ajvCompatible);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) out[key] = ajvCompatible(child);
  if (out.nullable === true && out.type === undefined) {
    const { nullable: _, ...rest } = out;
    return { anyOf: [rest, { type: 'null' }] };
  }
  return out;
}

const git = async (dir: string, args: string[]): Promise<string> =>
  (await run('git', args, { cwd: dir, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' })).stdout;
const gitBytes = async (dir: string, args: string[]): Promise<Buffer> =>
  (await run('git', args, { cwd: dir, maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' })).stdout;
const gitOrNull = (dir: string, args: string[]) => git(dir, args).catch(() => null);
/** Runs git with `input` on stdin and `env` added to the environment; stdout as text. */
const gitInput = (dir: string, args: string[], input: string, env: NodeJS.ProcessEnv = {}): Promise<string> =>
  new Promise((ok, fail) => {
    const child = execFile(
      'git',
      args,
      { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout) => (error ? fail(error) : ok(stdout)),
    );
    // A git that reads no stdin may exit before the write lands (EPIPE); its exit code tells.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
  });

export class GitHubDouble {
  readonly requests: RecordedRequest[] = [];
  readonly rejections: Rejection[] = [];
  readonly checkRuns: CheckRunRecord[] = [];
  readonly issueComments: IssueCommentRecord[] = [];
  readonly reviews: ReviewRecord[] = [];
  readonly reviewComments: ReviewCommentRecord[] = [];
  readonly pulls: PullRecord[] = [];
  /** Installation tokens issued, oldest first. */
  readonly tokens: { token: string; installationId: number; expiresAt: number }[] = [];
  readonly installations: Set<number>;
  url = '';
  private readonly repos = new Map<string, RepoRecord>();
  /** Branch protection by `owner/repo` (lower case) and branch. */
  private readonly protections = new Map<string, BranchProtectionRecord>();
  private readonly administration = new Map<number, AdministrationPermission>();
  private readonly failures: { remaining: number; failure: ScriptedFailure }[] = [];
  private readonly publicKey: KeyObject;
  private readonly api: OpenAPIBackend;
  private server: Server | null = null;
  private nextId = 1000;
  private readonly handlers: Record<string, Handler>;

  private constructor(readonly options: GitHubDoubleOptions) {
    this.publicKey =
      typeof options.publicKey === 'string' ? createPublicKey(options.publicKey) : options.publicKey;
    this.installations = new Set(options.installations ?? [100]);
    this.api = new OpenAPIBackend({
      definition: ajvCompatible(JSON.parse(readFileSync(FIXTURE, 'utf8'))) as never,
      validate: true,
      quick: false,
      // Formats (uri, date-time) are GitHub's response-side documentation; requests svc sends carry none.
      ajvOpts: { validateFormats: false } as never,
    });
    this.handlers = this.makeHandlers();
  }

  static async start(options: GitHubDoubleOptions): Promise<GitHubDouble> {
    const double = new GitHubDouble(options);
    await double.api.init();
    const server = createServer((req, res) => {
      double.handle(req, res).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `double failed: ${(error as Error).stack}` }));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    double.server = server;
    double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return double;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  }

  /** Forgets requests and rejections (state stays), e.g. between tests. */
  resetLog(): void {
    this.requests.length = 0;
    this.rejections.length = 0;
    this.failures.length = 0;
  }

  // --- scripting ---------------------------------------------------------------------------

  /** Serves the git repository at `dir` as `owner/repo` (to `installationId` only, when given). */
  async seedFromGit(
    owner: string,
    repo: string,
    dir: string,
    options: { installationId?: number; defaultBranch?: string } = {},
  ): Promise<void> {
    const head = (await gitOrNull(dir, ['symbolic-ref', '--short', '-q', 'HEAD']))?.trim();
    this.repos.set(`${owner}/${repo}`.toLowerCase(), {
      owner,
      name: repo,
      id: this.nextId++,
      dir,
      defaultBranch: options.defaultBranch ?? head ?? 'main',
      installationId: options.installationId ?? null,
      nextNumber: 1,
    });
  }

  /** Opens pull request (`number`, else the next) from branch `head` into `base`; it follows the branches. */
  addPullRequest(
    fullName: string,
    pr: {
      number?: number;
      title: string;
      base: string;
      head: string;
      draft?: boolean;
      user?: string;
      body?: string;
    },
  ): PullRecord {
    const repo = this.repoOf(fullName);
    const number = pr.number ?? repo.nextNumber;
    repo.nextNumber = Math.max(repo.nextNumber, number + 1);
    const record: PullRecord = {
      number,
      repo: `${repo.owner}/${repo.name}`,
      title: pr.title,
      body: pr.body ?? null,
      base: pr.base,
      head: pr.head,
      draft: pr.draft ?? false,
      user: pr.user ?? 'octocat',
    };
    this.pulls.push(record);
    return record;
  }

  /** A comment a person (or an agent) writes on pull request `number`'s conversation. */
  addIssueComment(fullName: string, number: number, body: string, user = 'octocat'): IssueCommentRecord {
    const pr = this.pullOf(this.repoOf(fullName), number);
    const comment: IssueCommentRecord = {
      id: this.nextId++,
      repo: pr.repo,
      issue_number: pr.number,
      body,
      edits: [],
      user,
    };
    this.issueComments.push(comment);
    return comment;
  }

  /**
   * Protects `branch` of `fullName` as GitHub's branch protection would (null: unprotects it).
   * `contexts` are required from any app, `checks` from the app each names; `contexts: null`
   * protects the branch without requiring status checks ("Required status checks not enabled").
   */
  setBranchProtection(
    fullName: string,
    branch: string,
    protection: {
      contexts: string[] | null;
      checks?: RequiredCheck[];
      strict?: boolean;
      settings?: Json;
    } | null,
  ): void {
    const repo = this.repoOf(fullName);
    if (protection === null) {
      this.protections.delete(this.protectionKey(repo, branch));
      return;
    }
    const checks = [
      ...(protection.checks ?? []),
      ...(protection.contexts ?? []).map((context) => ({ context, app_id: null })),
    ];
    this.protections.set(this.protectionKey(repo, branch), {
      requiredStatusChecks:
        protection.contexts === null && !protection.checks
          ? null
          : { strict: protection.strict ?? false, checks },
      settings: protection.settings ?? {},
    });
  }

  /** The branch protection of `branch` now, or null when it is not protected. */
  branchProtection(fullName: string, branch: string): BranchProtectionRecord | null {
    return this.protections.get(this.protectionKey(this.repoOf(fullName), branch)) ?? null;
  }

  /**
   * The installation's `administration` permission (default write): `none` makes every branch
   * protection request answer 403, `read` every change of it.
   */
  setAdministrationPermission(installationId: number, level: AdministrationPermission): void {
    this.administration.set(installationId, level);
  }

  /** The next `count` matching requests fail as `failure` says. */
  failNext(count: number, failure: ScriptedFailure): void {
    this.failures.push({ remaining: count, failure });
  }

  /** Primary rate limit: 403, `x-ratelimit-remaining: 0`, reset `resetInSeconds` from the request. */
  rateLimitNext(
    count: number,
    options: { resetInSeconds?: number; match?: ScriptedFailure['match'] } = {},
  ): void {
    this.failNext(count, {
      status: 403,
      message: 'API rate limit exceeded for installation.',
      headers: () => ({
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '5000',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000 + (options.resetInSeconds ?? 1))),
        'x-ratelimit-resource': 'core',
      }),
      ...(options.match ? { match: options.match } : {}),
    });
  }

  /** Secondary rate limit: 403 (or 429) with `retry-after`, in GitHub's words. */
  secondaryLimitNext(
    count: number,
    options: { retryAfterSeconds?: number; status?: 403 | 429; match?: ScriptedFailure['match'] } = {},
  ): void {
    this.failNext(count, {
      status: options.status ?? 403,
      message:
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
        'If you reach out to GitHub Support for help, please include the request ID.',
      headers: () => ({ 'retry-after': String(options.retryAfterSeconds ?? 1) }),
      ...(options.match ? { match: options.match } : {}),
    });
  }

  /** 5xx (502 unless told). */
  serverErrorNext(count: number, options: { status?: number; match?: ScriptedFailure['match'] } = {}): void {
    this.failNext(count, {
      status: options.status ?? 502,
      message: 'Server Error',
      ...(options.match ? { match: options.match } : {}),
    });
  }

  /** Requests that matched `operationId`. */
  requestsTo(operationId: string): RecordedRequest[] {
    return this.requests.filter((r) => r.operationId === operationId);
  }

  // --- the server ----------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://double');
    const method = (req.method ?? 'GET').toUpperCase();
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of url.searchParams) {
      const prior = query[key];
      query[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
    }
    const authorization = req.headers.authorization ?? '';
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      operationId: null,
      query,
      body: undefined,
      auth: !authorization
        ? 'none'
        : /^bearer ey/i.test(authorization)
          ? 'jwt'
          : /^(token|bearer) /i.test(authorization)
            ? 'token'
            : 'other',
      accept: req.headers.accept ?? null,
      status: 0,
      at: Date.now(),
    };
    this.requests.push(record);
    const reply = (r: Reply) => {
      record.status = r.status;
      const headers: Record<string, string> = {
        'x-github-request-id': randomBytes(8).toString('hex').toUpperCase(),
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600),
        ...r.headers,
      };
      if (r.raw) {
        res.writeHead(r.status, { ...headers, 'content-type': r.raw.contentType });
        res.end(r.raw.data);
      } else if (r.body === undefined) {
        res.writeHead(r.status, headers);
        res.end();
      } else {
        res.writeHead(r.status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(r.body));
      }
    };
    const refuse = (status: number, message: string, reason: string, errors?: unknown[]) => {
      this.rejections.push({ method, path: url.pathname, status, reason });
      reply({
        status,
        body: { message, documentation_url: DOCS, status: String(status), ...(errors ? { errors } : {}) },
      });
    };

    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        refuse(400, 'Problems parsing JSON', `body is not JSON: ${raw.slice(0, 200)}`);
        return;
      }
    }
    record.body = body;
    const request: OpenApiRequest = {
      method,
      path: url.pathname,
      query,
      headers: req.headers as Record<string, string>,
      ...(body !== undefined ? { body } : {}),
    };
    const operation = this.api.matchOperation(request);
    if (!operation) {
      refuse(404, 'Not Found', `no operation ${method} ${url.pathname} in GitHub's description`);
      return;
    }
    record.operationId = operation.operationId ?? null;
    const validation = this.api.validateRequest(request, operation);
    if (!validation.valid) {
      const errors = validation.errors ?? [];
      const detail = errors.map((e) => `${e.instancePath} ${e.message}`).join('; ');
      if (errors.some((e) => e.instancePath.startsWith('/path'))) refuse(404, 'Not Found', `path: ${detail}`);
      else
        refuse(
          422,
          'Invalid request.',
          `${operation.operationId}: ${detail}`,
          errors.map((e) => e.message),
        );
      return;
    }
    const params = this.api.router.parseRequest(request, operation).params as Record<string, string>;

    // Authentication.
    const isApp = operation.path?.startsWith('/app') ?? false;
    let installationId: number | null = null;
    if (isApp) {
      const problem = this.checkJwt(authorization);
      if (problem) {
        refuse(401, 'A JSON web token could not be decoded', problem);
        return;
      }
    } else {
      const match = /^(?:token|bearer) (\S+)$/i.exec(authorization);
      const token = match ? this.tokens.find((t) => t.token === match[1]) : undefined;
      if (!token || token.expiresAt <= Date.now()) {
        refuse(
          401,
          'Bad credentials',
          token ? 'installation token expired' : `no valid token in "${authorization.slice(0, 20)}"`,
        );
        return;
      }
      installationId = token.installationId;
    }

    // Scripted failures (not rejections: GitHub failing, not svc sending something wrong).
    const scripted = this.failures.find(
      (f) =>
        f.remaining > 0 &&
        (f.failure.match
          ? f.failure.match({ method, path: url.pathname, operationId: operation.operationId ?? '' })
          : !url.pathname.startsWith('/app')),
    );
    if (scripted) {
      scripted.remaining--;
      const f = scripted.failure;
      reply({
        status: f.status,
        body: { message: f.message, documentation_url: DOCS, status: String(f.status) },
        headers: f.headers?.() ?? {},
      });
      return;
    }

    const handler = this.handlers[operation.operationId ?? ''];
    if (!handler) {
      refuse(404, 'Not Found', `the double has no fake for ${operation.operationId}`);
      return;
    }
    try {
      const accept = String(req.headers.accept ?? '');
      reply(await handler({ params, query, body: (body ?? {}) as Json, accept, installationId }));
    } catch (error) {
      if (error instanceof Absent)
        reply({ status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } });
      else if (error instanceof Answer)
        reply({
          status: error.status,
          body: { message: error.message, documentation_url: DOCS, status: String(error.status) },
        });
      else if (error instanceof Refusal)
        refuse(error.status, error.message, `${operation.operationId}: ${error.message}`, error.errors);
      else throw error;
    }
  }

  /** Null when `authorization` carries a JWT GitHub would accept for this App, else why not. */
  private checkJwt(authorization: string): string | null {
    const match = /^bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization);
    if (!match) return `not a bearer JWT: "${authorization.slice(0, 20)}"`;
    const [, header, payload, signature] = match as unknown as [string, string, string, string];
    try {
      const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Json;
      if (head.alg !== 'RS256') return `JWT alg ${String(head.alg)}, GitHub wants RS256`;
      const ok = verify(
        'RSA-SHA256',
        Buffer.from(`${header}.${payload}`),
        this.publicKey,
        Buffer.from(signature, 'base64url'),
      );
      if (!ok) return 'JWT signature does not verify with the App key';
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json;
      const now = Math.floor(Date.now() / 1000);
      if (String(claims.iss) !== String(this.options.appId))
        return `JWT iss ${String(claims.iss)} is not the App id`;
      if (typeof claims.exp !== 'number' || claims.exp <= now) return 'JWT expired';
      if (typeof claims.iat !== 'number' || claims.iat > now + 60) return 'JWT iat in the future';
      if (claims.exp - claims.iat > 600) return "JWT 'exp' too far in the future (over 10 minutes)";
      return null;
    } catch (error) {
      return `JWT does not decode: ${(error as Error).message}`;
    }
  }

  // --- fakes ---------------------------------------------------------------------------------

  private repoOf(fullName: string, installationId: number | null = null): RepoRecord {
    const repo = this.repos.get(fullName.toLowerCase());
    // A repository the installation cannot see is a 404 on GitHub, never a 403.
    if (
      !repo ||
      (installationId !== null && repo.installationId !== null && repo.installationId !== installationId)
    )
      throw new Refusal(404, 'Not Found');
    return repo;
  }

  private async commitOf(repo: RepoRecord, ref: string): Promise<string | null> {
    if (ref.startsWith('-') || ref === '') return null;
    const candidates = ref.startsWith('heads/') || ref.startsWith('tags/') ? [`refs/${ref}`] : [ref];
    for (const candidate of candidates) {
      const sha = (
        await gitOrNull(repo.dir, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`])
      )?.trim();
      if (sha) return sha;
    }
    return null;
  }

  private pullOf(repo: RepoRecord, number: number): PullRecord {
    const pr = this.pulls.find((p) => p.repo === `${repo.owner}/${repo.name}` && p.number === number);
    if (!pr) throw new Refusal(404, 'Not Found');
    return pr;
  }

  private user(login: string) {
    return {
      login,
      id: 1,
      node_id: 'U_1',
      avatar_url: `https://avatars.example/${login}`,
      url: `https://api.github.com/users/${login}`,
      html_url: `https://github.com/${login}`,
      type: login.endsWith('[bot]') ? 'Bot' : 'User',
      site_admin: false,
    };
  }

  private repoJson(repo: RepoRecord) {
    const full = `${repo.owner}/${repo.name}`;
    return {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name: repo.name,
      full_name: full,
      owner: this.user(repo.owner),
      private: false,
      html_url: `https://github.com/${full}`,
      url: `${this.url}/repos/${full}`,
      default_branch: repo.defaultBranch,
      visibility: 'public',
    };
  }

  private async commitJson(repo: RepoRecord, sha: string) {
    const [
      h = sha,
      tree = '',
      parents = '',
      an = '',
      ae = '',
      ad = '',
      cn = '',
      ce = '',
      cd = '',
      message = '',
    ] = (
      await git(repo.dir, [
        'show',
        '-s',
        '--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B',
        sha,
      ])
    ).split('\0');
    const full = `${repo.owner}/${repo.name}`;
    return {
      sha: h,
      node_id: `C_${h}`,
      url: `${this.url}/repos/${full}/commits/${h}`,
      html_url: `https://github.com/${full}/commit/${h}`,
      commit: {
        message: message.trimEnd(),
        author: { name: an, email: ae, date: ad },
        committer: { name: cn, email: ce, date: cd },
        tree: { sha: tree, url: `${this.url}/repos/${full}/git/trees/${tree}` },
      },
      parents: parents
        .split(' ')
        .filter(Boolean)
        .map((p) => ({ sha: p, url: `${this.url}/repos/${full}/commits/${p}` })),
    };
  }

  private readonly diffCache = new Map<string, Promise<Json[]>>();

  /** What GitHub's diff entries say for `base..head` (git's rename detection, no copies); commits never change, so kept. */
  private diffEntries(repo: RepoRecord, base: string, head: string): Promise<Json[]> {
    const key = `${repo.dir}\0${base}\0${head}`;
    let entries = this.diffCache.get(key);
    if (!entries) {
      entries = this.computeDiffEntries(repo, base, head);
      this.diffCache.set(key, entries);
    }
    return entries;
  }

  private async computeDiffEntries(repo: RepoRecord, base: string, head: string): Promise<Json[]> {
    const names = (
      await git(repo.dir, ['-c', 'core.quotepath=off', 'diff', '-z', '--name-status', '-M', base, head])
    ).split('\0');
    const numstat = (
      await git(repo.dir, ['-c', 'core.quotepath=off', 'diff', '-z', '--numstat', '-M', base, head])
    ).split('\0');
    const counts: { added: number; deleted: number }[] = [];
    for (let i = 0; i < numstat.length; i++) {
      const token = numstat[i] as string;
      if (token === '') continue;
      const [added = '-', deleted = '-', path] = token.split('\t');
      counts.push({
        added: added === '-' ? 0 : Number(added),
        deleted: deleted === '-' ? 0 : Number(deleted),
      });
      if (path === '') i += 2;
    }
    const status: Record<string, string> = {
      A: 'added',
      D: 'removed',
      M: 'modified',
      R: 'renamed',
      C: 'copied',
      T: 'changed',
    };
    const entries: Json[] = [];
    let n = 0;
    for (let i = 0; i < names.length; ) {
      const code = names[i++] ?? '';
      if (code === '') continue;
      const letter = code.charAt(0);
      const first = names[i++] ?? '';
      const second = letter === 'R' || letter === 'C' ? (names[i++] ?? '') : first;
      const { added, deleted } = counts[n++] ?? { added: 0, deleted: 0 };
      const out = await git(repo.dir, [
        '-c',
        'core.quotepath=off',
        'diff',
        '--no-color',
        '--no-ext-diff',
        '-U3',
        '-M',
        base,
        head,
        '--',
        ...(first === second ? [first] : [first, second]),
      ]);
      const lines = out.split('\n');
      const at = lines.findIndex((l) => l.startsWith('@@'));
      let patch: string | undefined = at >= 0 ? lines.slice(at).join('\n').replace(/\n$/, '') : undefined;
      if (patch !== undefined && Buffer.byteLength(patch) > (this.options.patchLimitBytes ?? 1024 * 1024))
        patch = undefined;
      const blob =
        (
          await gitOrNull(repo.dir, ['rev-parse', letter === 'D' ? `${base}:${first}` : `${head}:${second}`])
        )?.trim() ?? null;
      const full = `${repo.owner}/${repo.name}`;
      entries.push({
        sha: blob,
        filename: second,
        status: status[letter] ?? 'modified',
        additions: added,
        deletions: deleted,
        changes: added + deleted,
        blob_url: `https://github.com/${full}/blob/${head}/${second}`,
        raw_url: `https://github.com/${full}/raw/${head}/${second}`,
        contents_url: `${this.url}/repos/${full}/contents/${second}?ref=${head}`,
        ...(patch !== undefined ? { patch } : {}),
        ...(letter === 'R' || letter === 'C' ? { previous_filename: first } : {}),
      });
    }
    return entries;
  }

  private async mergeBase(repo: RepoRecord, a: string, b: string): Promise<string | null> {
    return (await gitOrNull(repo.dir, ['merge-base', a, b]))?.trim() || null;
  }

  private async pullJson(repo: RepoRecord, pr: PullRecord) {
    const full = `${repo.owner}/${repo.name}`;
    const side = async (ref: string) => {
      const sha = (await this.commitOf(repo, `refs/heads/${ref}`)) ?? (await this.commitOf(repo, ref));
      if (!sha) throw new Refusal(404, `branch ${ref} of pull request ${pr.number} is gone`);
      return {
        label: `${repo.owner}:${ref}`,
        ref,
        sha,
        user: this.user(repo.owner),
        repo: this.repoJson(repo),
      };
    };
    return {
      url: `${this.url}/repos/${full}/pulls/${pr.number}`,
      id: 90_000 + pr.number,
      node_id: `PR_${pr.number}`,
      html_url: `https://github.com/${full}/pull/${pr.number}`,
      number: pr.number,
      state: 'open',
      locked: false,
      title: pr.title,
      body: pr.body,
      user: this.user(pr.user),
      draft: pr.draft,
      base: await side(pr.base),
      head: await side(pr.head),
      merged: false,
      author_association: 'OWNER',
    };
  }

  private paginate<T>(
    items: T[],
    query: HandlerContext['query'],
    path: string,
  ): { page: T[]; headers: Record<string, string> } {
    const perPage = Math.min(Number(query.per_page ?? 30), 100);
    const page = Number(query.page ?? 1);
    const slice = items.slice((page - 1) * perPage, page * perPage);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string) =>
      `<${this.url}${path}?per_page=${perPage}&page=${p}>; rel="${rel}"`;
    const links = [
      page < last ? link(page + 1, 'next') : null,
      page < last ? link(last, 'last') : null,
    ].filter(Boolean);
    return { page: slice, headers: links.length > 0 ? { link: links.join(', ') } : {} };
  }

  private reviewCommentJson(repo: RepoRecord, c: ReviewCommentRecord) {
    const full = `${repo.owner}/${repo.name}`;
    return {
      url: `${this.url}/repos/${full}/pulls/comments/${c.id}`,
      id: c.id,
      node_id: `PRRC_${c.id}`,
      pull_request_review_id: c.review_id,
      diff_hunk: '',
      path: c.path,
      position: c.line,
      original_position: c.line ?? 1,
      commit_id: c.commit_id,
      original_commit_id: c.commit_id,
      user: this.user('svc[bot]'),
      body: c.body,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      html_url: `https://github.com/${full}/pull/${c.pull_number}#discussion_r${c.id}`,
      pull_request_url: `${this.url}/repos/${full}/pulls/${c.pull_number}`,
      author_association: 'NONE',
      _links: { self: { href: '' }, html: { href: '' }, pull_request: { href: '' } },
      line: c.line,
      start_line: c.start_line,
      side: c.side,
      ...(c.in_reply_to_id !== null ? { in_reply_to_id: c.in_reply_to_id } : {}),
    };
  }

  private checkRunJson(repo: RepoRecord, c: CheckRunRecord) {
    const full = `${repo.owner}/${repo.name}`;
    return {
      id: c.id,
      node_id: `CR_${c.id}`,
      head_sha: c.head_sha,
      external_id: null,
      url: `${this.url}/repos/${full}/check-runs/${c.id}`,
      html_url: `https://github.com/${full}/runs/${c.id}`,
      details_url: null,
      status: c.status,
      conclusion: c.conclusion,
      started_at: new Date().toISOString(),
      completed_at: c.status === 'completed' ? new Date().toISOString() : null,
      output: {
        title: c.output?.title ?? null,
        summary: c.output?.summary ?? null,
        text: c.output?.text ?? null,
        annotations_count: 0,
        annotations_url: '',
      },
      name: c.name,
      check_suite: null,
      app: null,
      pull_requests: [],
    };
  }

  private issueCommentJson(repo: RepoRecord, c: IssueCommentRecord) {
    const full = `${repo.owner}/${repo.name}`;
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${this.url}/repos/${full}/issues/comments/${c.id}`,
      html_url: `https://github.com/${full}/pull/${c.issue_number}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(c.user ?? 'svc[bot]'),
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      issue_url: `${this.url}/repos/${full}/issues/${c.issue_number}`,
      author_association: 'NONE',
    };
  }

  /** The RIGHT-side lines of `path` that a review comment may point at, hunk by hunk. */
  private async commentableLines(
    repo: RepoRecord,
    base: string,
    head: string,
    path: string,
  ): Promise<[number, number][] | null> {
    const entries = await this.diffEntries(repo, base, head);
    const entry = entries.find((e) => e.filename === path);
    if (!entry) return null;
    const patch = entry.patch as string | undefined;
    if (!patch) return [];
    const ranges: [number, number][] = [];
    for (const m of patch.matchAll(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm)) {
      const start = Number(m[1]);
      const count = m[2] === undefined ? 1 : Number(m[2]);
      if (count > 0) ranges.push([start, start + count - 1]);
    }
    return ranges;
  }

  private protectionKey(repo: RepoRecord, branch: string): string {
    return `${repo.owner.toLowerCase()}/${repo.name.toLowerCase()}\0${branch}`;
  }

  private administrationOf(installationId: number | null): AdministrationPermission {
    return installationId === null ? 'write' : (this.administration.get(installationId) ?? 'write');
  }

  /** GitHub's 403 for an installation whose `administration` permission is below `need`. */
  private requireAdministration(ctx: HandlerContext, need: 'read' | 'write'): void {
    const level = this.administrationOf(ctx.installationId);
    if (level === 'none' || (need === 'write' && level === 'read'))
      throw new Answer(403, 'Resource not accessible by integration');
  }

  /** The branch of a protection request: GitHub's 404 "Branch not found" when it does not exist. */
  private async protectedBranchParam(repo: RepoRecord, branch: string): Promise<string> {
    if (!(await this.commitOf(repo, `refs/heads/${branch}`))) throw new Answer(404, 'Branch not found');
    return branch;
  }

  /**
   * The app a required check without an `app_id` gets pinned to: GitHub picks "the GitHub App that
   * has recently provided this check", here svc's App when a check run of that name exists.
   */
  private pinnedApp(repo: RepoRecord, context: string): number | null {
    const full = `${repo.owner}/${repo.name}`;
    return this.checkRuns.some((c) => c.repo === full && c.name === context) ? this.options.appId : null;
  }

  /** Required checks from a request's `checks` (app_id -1: any app; omitted: pinned) or `contexts`. */
  private requiredChecksFrom(repo: RepoRecord, body: Json): RequiredCheck[] {
    if (Array.isArray(body.checks))
      return (body.checks as Json[]).map((c) => ({
        context: String(c.context),
        app_id:
          c.app_id === undefined
            ? this.pinnedApp(repo, String(c.context))
            : c.app_id === -1
              ? null
              : Number(c.app_id),
      }));
    return ((body.contexts ?? []) as string[]).map((context) => ({
      context,
      app_id: this.pinnedApp(repo, context),
    }));
  }

  private statusCheckPolicyJson(
    repo: RepoRecord,
    branch: string,
    policy: { strict: boolean; checks: RequiredCheck[] },
  ) {
    const url = `${this.url}/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}/protection/required_status_checks`;
    return {
      url,
      strict: policy.strict,
      contexts: policy.checks.map((c) => c.context),
      contexts_url: `${url}/contexts`,
      checks: policy.checks.map((c) => ({ context: c.context, app_id: c.app_id })),
    };
  }

  /** `git cat-file -t` of `sha` when it is a full object id in the repository, else null. */
  private async objectType(repo: RepoRecord, sha: unknown): Promise<string | null> {
    if (typeof sha !== 'string' || !/^[0-9a-f]{40}$/.test(sha)) return null;
    return (await gitOrNull(repo.dir, ['cat-file', '-t', sha]))?.trim() || null;
  }

  /** A tree as the git trees API shows it (one level, or every level with `recursive`). */
  private async treeJson(repo: RepoRecord, tree: string, recursive: boolean) {
    const listing =
      tree === EMPTY_TREE
        ? ''
        : await git(repo.dir, ['ls-tree', '-l', '-z', ...(recursive ? ['-r', '-t'] : []), tree]);
    const full = `${repo.owner}/${repo.name}`;
    return {
      sha: tree,
      url: `${this.url}/repos/${full}/git/trees/${tree}`,
      truncated: false,
      tree: listing
        .split('\0')
        .filter(Boolean)
        .map((e) => {
          const [meta = '', path = ''] = e.split('\t');
          const [mode = '', type = '', sha = '', size = '-'] = meta.split(/\s+/);
          return {
            path,
            mode,
            type,
            sha,
            ...(type === 'blob' ? { size: Number(size) } : {}),
            url: `${this.url}/repos/${full}/git/${type}s/${sha}`,
          };
        }),
    };
  }

  /** A commit as the Git data API shows it (git/commits), not the commits API. */
  private async gitCommitJson(repo: RepoRecord, sha: string) {
    const c = await this.commitJson(repo, sha);
    const full = `${repo.owner}/${repo.name}`;
    return {
      sha: c.sha,
      node_id: c.node_id,
      url: `${this.url}/repos/${full}/git/commits/${c.sha}`,
      html_url: c.html_url,
      author: c.commit.author,
      committer: c.commit.committer,
      tree: c.commit.tree,
      message: c.commit.message,
      parents: c.parents.map((p) => ({ ...p, html_url: `https://github.com/${full}/commit/${p.sha}` })),
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  }

  /**
   * The tree `base` (or none) with `entries` applied as GitHub's create-tree does: a blob from
   * `content` or an existing `sha`, a submodule's commit, or a removal (`sha: null`), built in a
   * temporary index of the repository.
   */
  private async writeTree(repo: RepoRecord, base: string | null, entries: Json[]): Promise<string> {
    const scratch = await mkdtemp(join(tmpdir(), 'github-double-tree-'));
    try {
      const index = { GIT_INDEX_FILE: join(scratch, 'index') };
      await gitInput(repo.dir, ['read-tree', ...(base ? [base] : ['--empty'])], '', index);
      const lines: string[] = [];
      for (const entry of entries) lines.push(await this.indexLine(repo, entry));
      await gitInput(repo.dir, ['update-index', '-z', '--index-info'], lines.join(''), index);
      return (await gitInput(repo.dir, ['write-tree'], '', index)).trim();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** One create-tree entry as an `update-index --index-info` line, or GitHub's 422. */
  private async indexLine(repo: RepoRecord, entry: Json): Promise<string> {
    const path = entry.path;
    const modes: Record<string, string[]> = { blob: ['100644', '100755', '120000'], commit: ['160000'] };
    if (typeof path !== 'string' || path === '' || path.startsWith('/') || path.endsWith('/'))
      throw new Refusal(422, 'tree.path contains a malformed path component');
    if (entry.type === 'tree') throw new Refusal(422, 'the double does not fake tree entries in create-tree');
    if (!modes[String(entry.type)]?.includes(String(entry.mode)))
      throw new Refusal(422, `tree.mode ${String(entry.mode)} does not fit tree.type ${String(entry.type)}`);
    if ('content' in entry && 'sha' in entry)
      throw new Refusal(422, 'Must supply either tree.sha or tree.content, not both');
    if (entry.sha === null) return `0 ${'0'.repeat(40)}\t${path}\0`;
    let sha: string;
    if (typeof entry.content === 'string') {
      sha = (await gitInput(repo.dir, ['hash-object', '-w', '--stdin'], entry.content)).trim();
    } else if (entry.type === 'commit') {
      sha = String(entry.sha);
    } else {
      if ((await this.objectType(repo, entry.sha)) !== 'blob')
        throw new Refusal(422, 'tree.sha is not a valid blob');
      sha = String(entry.sha);
    }
    return `${entry.mode} ${sha}\t${path}\0`;
  }

  private makeHandlers(): Record<string, Handler> {
    const repoParam = (ctx: HandlerContext) =>
      this.repoOf(`${ctx.params.owner}/${ctx.params.repo}`, ctx.installationId);
    return {
      'apps/get-authenticated': async () => ({
        status: 200,
        body: {
          id: this.options.appId,
          slug: 'svc-test',
          node_id: 'A_1',
          owner: this.user('svc'),
          name: 'svc test',
          description: null,
          external_url: 'https://svc.example',
          html_url: 'https://github.com/apps/svc-test',
          created_at: '2024-01-01T00:00:00Z',
          updated_at: '2024-01-01T00:00:00Z',
          permissions: {
            checks: 'write',
            contents: 'write',
            pull_requests: 'write',
            issues: 'write',
            metadata: 'read',
          },
          events: ['pull_request', 'issue_comment'],
        },
      }),

      'apps/create-installation-access-token': async (ctx) => {
        const id = Number(ctx.params.installation_id);
        if (!this.installations.has(id)) throw new Refusal(404, 'Not Found');
        const token = `ghs_${randomBytes(18).toString('base64url')}`;
        // GitHub gives expires_at to the second.
        const expiresAt = Math.floor((Date.now() + (this.options.tokenTtlMs ?? 3_600_000)) / 1000) * 1000;
        this.tokens.push({ token, installationId: id, expiresAt });
        const administration = this.administrationOf(id);
        return {
          status: 201,
          body: {
            token,
            expires_at: new Date(expiresAt).toISOString().replace('.000Z', 'Z'),
            permissions: {
              checks: 'write',
              contents: 'write',
              pull_requests: 'write',
              issues: 'write',
              metadata: 'read',
              ...(administration !== 'none' ? { administration } : {}),
            },
            repository_selection: 'all',
          },
        };
      },

      'repos/get': async (ctx) => ({ status: 200, body: this.repoJson(repoParam(ctx)) }),

      'repos/get-commit': async (ctx) => {
        const repo = repoParam(ctx);
        const sha = await this.commitOf(repo, ctx.params.ref ?? '');
        if (!sha) throw new Refusal(422, `No commit found for SHA: ${ctx.params.ref}`);
        if (ctx.accept.includes('application/vnd.github.sha'))
          return {
            status: 200,
            raw: { data: sha, contentType: 'application/vnd.github.sha; charset=utf-8' },
          };
        return { status: 200, body: { ...(await this.commitJson(repo, sha)), files: [] } };
      },

      'repos/compare-commits-with-basehead': async (ctx) => {
        const repo = repoParam(ctx);
        const basehead = ctx.params.basehead ?? '';
        const m = /^(.+?)(\.\.\.?)(.+)$/.exec(basehead);
        if (!m) throw new Refusal(404, 'Not Found');
        const [, baseRef = '', dots, headRef = ''] = m;
        const [base, head] = [await this.commitOf(repo, baseRef), await this.commitOf(repo, headRef)];
        if (!base || !head) throw new Refusal(404, 'Not Found');
        const mergeBase = await this.mergeBase(repo, base, head);
        if (!mergeBase) throw new Refusal(404, `No common ancestor between ${baseRef} and ${headRef}.`);
        const from = dots === '...' ? mergeBase : base;
        const entries = (await this.diffEntries(repo, from, head)).slice(
          0,
          this.options.compareFileCap ?? 300,
        );
        const ahead = Number((await git(repo.dir, ['rev-list', '--count', `${base}..${head}`])).trim());
        const behind = Number((await git(repo.dir, ['rev-list', '--count', `${head}..${base}`])).trim());
        const commits = (await git(repo.dir, ['rev-list', '--reverse', `${base}..${head}`]))
          .split('\n')
          .filter(Boolean);
        const { page, headers } = this.paginate(
          commits,
          ctx.query,
          `/repos/${repo.owner}/${repo.name}/compare/${basehead}`,
        );
        const full = `${repo.owner}/${repo.name}`;
        return {
          status: 200,
          headers,
          body: {
            url: `${this.url}/repos/${full}/compare/${basehead}`,
            html_url: `https://github.com/${full}/compare/${basehead}`,
            permalink_url: `https://github.com/${full}/compare/${basehead}`,
            diff_url: `https://github.com/${full}/compare/${basehead}.diff`,
            patch_url: `https://github.com/${full}/compare/${basehead}.patch`,
            base_commit: await this.commitJson(repo, base),
            merge_base_commit: await this.commitJson(repo, mergeBase),
            status: ahead && behind ? 'diverged' : ahead ? 'ahead' : behind ? 'behind' : 'identical',
            ahead_by: ahead,
            behind_by: behind,
            total_commits: ahead,
            commits: await Promise.all(page.map((sha) => this.commitJson(repo, sha))),
            files: entries,
          },
        };
      },

      'repos/get-content': async (ctx) => {
        const repo = repoParam(ctx);
        const ref = typeof ctx.query.ref === 'string' ? ctx.query.ref : repo.defaultBranch;
        const commit = await this.commitOf(repo, ref);
        if (!commit) throw new Refusal(404, `No commit found for the ref ${ref}`);
        const path = (ctx.params.path ?? '').replace(/^\/+|\/+$/g, '');
        const listing = (await gitOrNull(repo.dir, ['ls-tree', '-l', '-z', commit, '--', path])) ?? '';
        const entry = listing.split('\0').find((e) => e.endsWith(`\t${path}`));
        if (!entry) throw new Absent(`${path} is not in ${ref}`);
        const [meta = ''] = entry.split('\t');
        const [mode = '', type = '', sha = '', size = '0'] = meta.split(/\s+/);
        const full = `${repo.owner}/${repo.name}`;
        const base = {
          name: path.split('/').pop(),
          path,
          sha,
          url: `${this.url}/repos/${full}/contents/${path}?ref=${ref}`,
          git_url: null,
          html_url: null,
          download_url: null,
          _links: { self: '', git: null, html: null },
        };
        if (type === 'tree') {
          const children = (await git(repo.dir, ['ls-tree', '-l', '-z', `${commit}:${path}`]))
            .split('\0')
            .filter(Boolean);
          return {
            status: 200,
            body: children.map((c) => {
              const [m = '', rest = ''] = c.split('\t');
              const [, t = '', s = '', sz = '0'] = m.split(/\s+/);
              return {
                ...base,
                type: t === 'tree' ? 'dir' : 'file',
                name: rest,
                path: `${path}/${rest}`,
                sha: s,
                size: sz === '-' ? 0 : Number(sz),
              };
            }),
          };
        }
        if (type === 'commit')
          return { status: 200, body: { ...base, type: 'submodule', size: 0, submodule_git_url: '' } };
        const bytes = await gitBytes(repo.dir, ['cat-file', 'blob', sha]);
        if (ctx.accept.includes('application/vnd.github.raw'))
          return { status: 200, raw: { data: bytes, contentType: 'application/vnd.github.raw' } };
        if (mode === '120000')
          return {
            status: 200,
            body: { ...base, type: 'symlink', size: Number(size), target: bytes.toString('utf8') },
          };
        const inline = bytes.length <= 1024 * 1024;
        return {
          status: 200,
          body: {
            ...base,
            type: 'file',
            size: Number(size),
            encoding: inline ? 'base64' : 'none',
            // GitHub wraps base64 at 60 columns.
            content: inline ? (bytes.toString('base64').match(/.{1,60}/g) ?? []).join('\n') : '',
          },
        };
      },

      'git/get-tree': async (ctx) => {
        const repo = repoParam(ctx);
        const tree = (
          await gitOrNull(repo.dir, ['rev-parse', '--verify', '--quiet', `${ctx.params.tree_sha}^{tree}`])
        )?.trim();
        if (!tree) throw new Refusal(404, 'Not Found');
        return { status: 200, body: await this.treeJson(repo, tree, ctx.query.recursive !== undefined) };
      },

      'git/create-tree': async (ctx) => {
        const repo = repoParam(ctx);
        const base = ctx.body.base_tree;
        if (base !== undefined && (await this.objectType(repo, base)) !== 'tree')
          throw new Refusal(422, 'base_tree is not a valid tree oid');
        const tree = await this.writeTree(
          repo,
          (base as string | undefined) ?? null,
          ctx.body.tree as Json[],
        );
        return { status: 201, body: await this.treeJson(repo, tree, false) };
      },

      'git/get-commit': async (ctx) => {
        const repo = repoParam(ctx);
        const sha = ctx.params.commit_sha;
        if ((await this.objectType(repo, sha)) !== 'commit') throw new Answer(404, 'Not Found');
        return { status: 200, body: await this.gitCommitJson(repo, sha as string) };
      },

      'git/create-commit': async (ctx) => {
        const repo = repoParam(ctx);
        const tree = ctx.body.tree;
        if ((await this.objectType(repo, tree)) !== 'tree') throw new Refusal(422, 'Tree SHA does not exist');
        const parents = (ctx.body.parents ?? []) as string[];
        for (const parent of parents)
          if ((await this.objectType(repo, parent)) !== 'commit')
            throw new Refusal(422, 'Parent SHA does not exist or is not a commit object');
        // GitHub: the author defaults to the authenticated App's bot, the committer to the author.
        type Identity = { name: string; email: string; date?: string };
        const bot: Identity = {
          name: `${APP_SLUG}[bot]`,
          email: `${this.options.appId}+${APP_SLUG}[bot]@users.noreply.github.com`,
        };
        const author = (ctx.body.author as Identity | undefined) ?? bot;
        const committer = (ctx.body.committer as Identity | undefined) ?? author;
        const identity: NodeJS.ProcessEnv = {
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_COMMITTER_NAME: committer.name,
          GIT_COMMITTER_EMAIL: committer.email,
          ...(author.date ? { GIT_AUTHOR_DATE: author.date } : {}),
          ...(committer.date ? { GIT_COMMITTER_DATE: committer.date } : {}),
        };
        const args = [
          'commit-tree',
          '--no-gpg-sign',
          ...parents.flatMap((p) => ['-p', p]),
          '-F',
          '-',
          String(tree),
        ];
        const sha = (await gitInput(repo.dir, args, String(ctx.body.message), identity)).trim();
        return { status: 201, body: await this.gitCommitJson(repo, sha) };
      },

      'git/create-ref': async (ctx) => {
        const repo = repoParam(ctx);
        const ref = String(ctx.body.ref);
        const sha = String(ctx.body.sha);
        if (!/^refs\/[^/]+\/.+/.test(ref)) throw new Refusal(422, 'Reference name is not well-formed');
        if (!(await this.commitOf(repo, sha))) throw new Refusal(422, 'Object does not exist');
        // `show-ref --quiet` prints nothing: it is the exit status (null or not) that answers.
        if ((await gitOrNull(repo.dir, ['show-ref', '--verify', '--quiet', ref])) !== null)
          throw new Refusal(422, 'Reference already exists');
        await git(repo.dir, ['update-ref', ref, sha, '']);
        return {
          status: 201,
          body: {
            ref,
            node_id: 'REF_1',
            url: `${this.url}/repos/${repo.owner}/${repo.name}/git/${ref}`,
            object: { type: 'commit', sha, url: '' },
          },
        };
      },

      'repos/get-status-checks-protection': async (ctx) => {
        const repo = repoParam(ctx);
        this.requireAdministration(ctx, 'read');
        const branch = await this.protectedBranchParam(repo, ctx.params.branch ?? '');
        const rule = this.protections.get(this.protectionKey(repo, branch));
        if (!rule) throw new Answer(404, 'Branch not protected');
        if (!rule.requiredStatusChecks) throw new Answer(404, 'Required status checks not enabled');
        return { status: 200, body: this.statusCheckPolicyJson(repo, branch, rule.requiredStatusChecks) };
      },

      'repos/update-status-check-protection': async (ctx) => {
        const repo = repoParam(ctx);
        this.requireAdministration(ctx, 'write');
        const branch = await this.protectedBranchParam(repo, ctx.params.branch ?? '');
        const rule = this.protections.get(this.protectionKey(repo, branch));
        if (!rule) throw new Answer(404, 'Branch not protected');
        // GitHub changes the checks of a rule only when the rule already requires some.
        const current = rule.requiredStatusChecks;
        if (!current) throw new Answer(404, 'Required status checks not enabled');
        // The double's assumption: the deprecated list and its replacement are not sent together.
        if (ctx.body.checks !== undefined && ctx.body.contexts !== undefined)
          throw new Refusal(422, 'Validation Failed', ['send either checks or contexts, not both']);
        if (typeof ctx.body.strict === 'boolean') current.strict = ctx.body.strict;
        if (ctx.body.checks !== undefined || ctx.body.contexts !== undefined)
          current.checks = this.requiredChecksFrom(repo, ctx.body);
        return { status: 200, body: this.statusCheckPolicyJson(repo, branch, current) };
      },

      'repos/update-branch-protection': async (ctx) => {
        const repo = repoParam(ctx);
        this.requireAdministration(ctx, 'write');
        const branch = await this.protectedBranchParam(repo, ctx.params.branch ?? '');
        // A PUT is the whole rule: every setting it does not name is reset.
        const { required_status_checks: required, ...settings } = ctx.body;
        const policy = required as Json | null;
        const rule: BranchProtectionRecord = {
          requiredStatusChecks: policy
            ? { strict: policy.strict === true, checks: this.requiredChecksFrom(repo, policy) }
            : null,
          settings,
        };
        this.protections.set(this.protectionKey(repo, branch), rule);
        const url = `${this.url}/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}/protection`;
        return {
          status: 200,
          body: {
            url,
            ...(rule.requiredStatusChecks
              ? {
                  required_status_checks: this.statusCheckPolicyJson(repo, branch, rule.requiredStatusChecks),
                }
              : {}),
          },
        };
      },

      'pulls/get': async (ctx) => {
        const repo = repoParam(ctx);
        return {
          status: 200,
          body: await this.pullJson(repo, this.pullOf(repo, Number(ctx.params.pull_number))),
        };
      },

      'pulls/list-files': async (ctx) => {
        const repo = repoParam(ctx);
        const pr = await this.pullJson(repo, this.pullOf(repo, Number(ctx.params.pull_number)));
        const mergeBase = (await this.mergeBase(repo, pr.base.sha, pr.head.sha)) ?? pr.base.sha;
        const entries = (await this.diffEntries(repo, mergeBase, pr.head.sha)).slice(
          0,
          this.options.pullFilesCap ?? 3000,
        );
        const { page, headers } = this.paginate(
          entries,
          ctx.query,
          `/repos/${repo.owner}/${repo.name}/pulls/${pr.number}/files`,
        );
        return { status: 200, headers, body: page };
      },

      'pulls/create': async (ctx) => {
        const repo = repoParam(ctx);
        const head = String(ctx.body.head).replace(/^[^:]+:/, '');
        const base = String(ctx.body.base);
        const errors = [];
        if (!(await this.commitOf(repo, `refs/heads/${head}`)))
          errors.push({ resource: 'PullRequest', field: 'head', code: 'invalid' });
        if (!(await this.commitOf(repo, `refs/heads/${base}`)))
          errors.push({ resource: 'PullRequest', field: 'base', code: 'invalid' });
        if (errors.length > 0) throw new Refusal(422, 'Validation Failed', errors);
        const ahead = Number(
          (await git(repo.dir, ['rev-list', '--count', `refs/heads/${base}..refs/heads/${head}`])).trim(),
        );
        if (ahead === 0)
          throw new Refusal(422, 'Validation Failed', [
            { resource: 'PullRequest', code: 'custom', message: `No commits between ${base} and ${head}` },
          ]);
        const pr = this.addPullRequest(`${repo.owner}/${repo.name}`, {
          title: String(ctx.body.title ?? ''),
          base,
          head,
          draft: ctx.body.draft === true,
          user: 'svc[bot]',
          ...(typeof ctx.body.body === 'string' ? { body: ctx.body.body } : {}),
        });
        return { status: 201, body: await this.pullJson(repo, pr) };
      },

      'pulls/create-review': async (ctx) => {
        const repo = repoParam(ctx);
        const pr = this.pullOf(repo, Number(ctx.params.pull_number));
        const prJson = await this.pullJson(repo, pr);
        const commit =
          typeof ctx.body.commit_id === 'string'
            ? await this.commitOf(repo, ctx.body.commit_id)
            : prJson.head.sha;
        if (!commit)
          throw new Refusal(422, 'Unprocessable Entity', ['commit_id is not part of the pull request']);
        const event = typeof ctx.body.event === 'string' ? ctx.body.event : null;
        const body = typeof ctx.body.body === 'string' ? ctx.body.body : '';
        if ((event === 'COMMENT' || event === 'REQUEST_CHANGES') && body === '')
          throw new Refusal(422, 'Unprocessable Entity', [`Body is required when event is ${event}`]);
        const comments = (ctx.body.comments ?? []) as Json[];
        const mergeBase = (await this.mergeBase(repo, prJson.base.sha, commit)) ?? prJson.base.sha;
        const errors: string[] = [];
        for (const c of comments) {
          if (c.position !== undefined) continue;
          const line = c.line as number | undefined;
          if (line === undefined) {
            errors.push('Pull request review thread line must be part of the diff');
            continue;
          }
          if (c.side !== undefined && c.side !== 'RIGHT' && c.side !== 'LEFT')
            errors.push(`side ${String(c.side)} is not LEFT or RIGHT`);
          const ranges = await this.commentableLines(repo, mergeBase, commit, String(c.path));
          if (ranges === null) {
            errors.push('Path could not be resolved');
            continue;
          }
          const start = (c.start_line as number | undefined) ?? line;
          if (start > line) errors.push('start_line must precede line');
          const hunk = ranges.find(([a, b]) => line >= a && line <= b);
          if (!hunk) errors.push('Pull request review thread line must be part of the diff');
          else if (start < hunk[0])
            errors.push('Pull request review thread start line must be part of the same hunk as the line.');
        }
        if (errors.length > 0) throw new Refusal(422, 'Unprocessable Entity', errors);
        const review: ReviewRecord = {
          id: this.nextId++,
          repo: pr.repo,
          pull_number: pr.number,
          commit_id: commit,
          body,
          event,
          state:
            event === 'COMMENT'
              ? 'COMMENTED'
              : event === 'APPROVE'
                ? 'APPROVED'
                : event === 'REQUEST_CHANGES'
                  ? 'CHANGES_REQUESTED'
                  : 'PENDING',
          comment_ids: [],
        };
        for (const c of comments) {
          const record: ReviewCommentRecord = {
            id: this.nextId++,
            repo: pr.repo,
            pull_number: pr.number,
            review_id: review.id,
            path: String(c.path),
            line: (c.line as number | undefined) ?? null,
            start_line: (c.start_line as number | undefined) ?? null,
            side: String(c.side ?? 'RIGHT'),
            body: String(c.body),
            commit_id: commit,
            in_reply_to_id: null,
          };
          this.reviewComments.push(record);
          review.comment_ids.push(record.id);
        }
        this.reviews.push(review);
        const full = `${repo.owner}/${repo.name}`;
        return {
          status: 200,
          body: {
            id: review.id,
            node_id: `PRR_${review.id}`,
            user: this.user('svc[bot]'),
            body: review.body,
            state: review.state,
            html_url: `https://github.com/${full}/pull/${pr.number}#pullrequestreview-${review.id}`,
            pull_request_url: `${this.url}/repos/${full}/pulls/${pr.number}`,
            _links: { html: { href: '' }, pull_request: { href: '' } },
            submitted_at: new Date().toISOString(),
            commit_id: review.commit_id,
            author_association: 'NONE',
          },
        };
      },

      'pulls/list-comments-for-review': async (ctx) => {
        const repo = repoParam(ctx);
        const review = this.reviews.find(
          (r) =>
            r.repo === `${repo.owner}/${repo.name}` &&
            r.pull_number === Number(ctx.params.pull_number) &&
            r.id === Number(ctx.params.review_id),
        );
        if (!review) throw new Refusal(404, 'Not Found');
        // Newest first: GitHub promises no order, and the host must not rely on one.
        const comments = this.reviewComments.filter((c) => c.review_id === review.id).reverse();
        const { page, headers } = this.paginate(
          comments,
          ctx.query,
          `/repos/${repo.owner}/${repo.name}/pulls/${review.pull_number}/reviews/${review.id}/comments`,
        );
        return { status: 200, headers, body: page.map((c) => this.reviewCommentJson(repo, c)) };
      },

      'pulls/create-reply-for-review-comment': async (ctx) => {
        const repo = repoParam(ctx);
        const number = Number(ctx.params.pull_number);
        const parent = this.reviewComments.find(
          (c) =>
            c.repo === `${repo.owner}/${repo.name}` &&
            c.pull_number === number &&
            c.id === Number(ctx.params.comment_id),
        );
        if (!parent) throw new Refusal(404, 'Not Found');
        const reply: ReviewCommentRecord = {
          ...parent,
          id: this.nextId++,
          body: String(ctx.body.body),
          in_reply_to_id: parent.in_reply_to_id ?? parent.id,
        };
        this.reviewComments.push(reply);
        return { status: 201, body: this.reviewCommentJson(repo, reply) };
      },

      'checks/create': async (ctx) => {
        const repo = repoParam(ctx);
        const headSha = String(ctx.body.head_sha);
        if (!(await this.commitOf(repo, headSha)) || !/^[0-9a-f]{40}$/.test(headSha))
          throw new Refusal(422, `No commit found for SHA: ${headSha}`);
        const conclusion = (ctx.body.conclusion as string | undefined) ?? null;
        const status = conclusion ? 'completed' : String(ctx.body.status ?? 'queued');
        if (status === 'completed' && !conclusion)
          throw new Refusal(422, 'Invalid request.', ['conclusion is required when status is completed']);
        const output = (ctx.body.output as CheckRunRecord['output']) ?? null;
        const check: CheckRunRecord = {
          id: this.nextId++,
          repo: `${repo.owner}/${repo.name}`,
          name: String(ctx.body.name),
          head_sha: headSha,
          status,
          conclusion,
          output,
          history: [],
        };
        check.history.push({
          status,
          conclusion,
          title: output?.title ?? null,
          summary: output?.summary ?? null,
        });
        this.checkRuns.push(check);
        return { status: 201, body: this.checkRunJson(repo, check) };
      },

      'checks/update': async (ctx) => {
        const repo = repoParam(ctx);
        const check = this.checkRuns.find(
          (c) => c.repo === `${repo.owner}/${repo.name}` && c.id === Number(ctx.params.check_run_id),
        );
        if (!check) throw new Refusal(404, 'Not Found');
        const conclusion = (ctx.body.conclusion as string | undefined) ?? null;
        const status = conclusion ? 'completed' : String(ctx.body.status ?? check.status);
        if (status === 'completed' && !conclusion && !check.conclusion)
          throw new Refusal(422, 'Invalid request.', ['conclusion is required when status is completed']);
        if (ctx.body.name !== undefined) check.name = String(ctx.body.name);
        check.status = status;
        check.conclusion = conclusion ?? (status === 'completed' ? check.conclusion : null);
        if (ctx.body.output !== undefined) check.output = ctx.body.output as CheckRunRecord['output'];
        check.history.push({
          status,
          conclusion: check.conclusion,
          title: check.output?.title ?? null,
          summary: check.output?.summary ?? null,
        });
        return { status: 200, body: this.checkRunJson(repo, check) };
      },

      'issues/create-comment': async (ctx) => {
        const repo = repoParam(ctx);
        const pr = this.pullOf(repo, Number(ctx.params.issue_number));
        const comment: IssueCommentRecord = {
          id: this.nextId++,
          repo: pr.repo,
          issue_number: pr.number,
          body: String(ctx.body.body),
          edits: [],
        };
        this.issueComments.push(comment);
        return { status: 201, body: this.issueCommentJson(repo, comment) };
      },

      'issues/list-comments': async (ctx) => {
        const repo = repoParam(ctx);
        const pr = this.pullOf(repo, Number(ctx.params.issue_number));
        const comments = this.issueComments.filter((c) => c.repo === pr.repo && c.issue_number === pr.number);
        const { page, headers } = this.paginate(
          comments,
          ctx.query,
          `/repos/${repo.owner}/${repo.name}/issues/${pr.number}/comments`,
        );
        return { status: 200, headers, body: page.map((c) => this.issueCommentJson(repo, c)) };
      },

      'issues/update-comment': async (ctx) => {
        const repo = repoParam(ctx);
        const comment = this.issueComments.find(
          (c) => c.repo === `${repo.owner}/${repo.name}` && c.id === Number(ctx.params.comment_id),
        );
        if (!comment) throw new Refusal(404, 'Not Found');
        comment.edits.push(comment.body);
        comment.body = String(ctx.body.body);
        return { status: 200, body: this.issueCommentJson(repo, comment) };
      },
    };
  }
}
