/**
 * The HTTP side of the GitHub host: one Octokit class (@octokit/core with plugin-throttling and
 * plugin-retry), the App (@octokit/app) that signs JWTs, and installation tokens cached until
 * shortly before they expire.
 *
 * Politeness, in order of how a request can fail:
 * - primary rate limit (403/429 with `x-ratelimit-remaining: 0`) and secondary limits (403/429
 *   saying "secondary rate limit", with `retry-after`): plugin-throttling computes the wait the
 *   server asks for; svc retries at most `rateLimitRetries` times and only when that wait is at
 *   most `maxRateLimitWaitMs`. A longer wait fails at once: retrying before the reset cannot succeed.
 * - 5xx and network failures: plugin-retry, `serverErrorRetries` times, waiting k² × `serverErrorBackoffMs`.
 * - 4xx: never retried (429 is left to the throttling rules above).
 * - writes are spaced (`writeSpacingMs`, and `notificationSpacingMs` for writes that notify people:
 *   comments, reviews, pull requests), as GitHub asks of integrations; per installation.
 */
import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import type { GitHubAppConfig } from './config';

export const GitHubOctokit = Octokit.plugin(throttling, retry);
export type GitHubOctokit = InstanceType<typeof GitHubOctokit>;

export interface GitHubClientOptions {
  /** The longest rate-limit wait svc sits out before retrying (ms). Default 60 000. */
  maxRateLimitWaitMs: number;
  /** Retries of a rate-limited request. Default 2. */
  rateLimitRetries: number;
  /** Retries of a 5xx or network failure. Default 2. */
  serverErrorRetries: number;
  /** Retry k of a 5xx waits k² × this (ms). Default 1000. */
  serverErrorBackoffMs: number;
  /** Least time between two writes of one installation (ms). Default 1000 (GitHub's advice). */
  writeSpacingMs: number;
  /** Least time between two notifying writes of one installation (ms). Default 3000 (octokit's). */
  notificationSpacingMs: number;
  /** An installation token is renewed this long before its `expires_at` (ms). Default 5 minutes. */
  tokenRefreshMarginMs: number;
  /** Overrides the global fetch (tests). */
  fetch?: typeof fetch | undefined;
  /** Clock for token expiry. Default Date.now. */
  now?: (() => number) | undefined;
}

export const DEFAULT_GITHUB_CLIENT_OPTIONS: GitHubClientOptions = {
  maxRateLimitWaitMs: 60_000,
  rateLimitRetries: 2,
  serverErrorRetries: 2,
  serverErrorBackoffMs: 1_000,
  writeSpacingMs: 1_000,
  notificationSpacingMs: 3_000,
  tokenRefreshMarginMs: 5 * 60_000,
};

const USER_AGENT = 'svc-code-review';

/**
 * A minimal stand-in for a Bottleneck group as plugin-throttling uses it (`key(id).schedule`):
 * jobs per key start one at a time, at least `minTime` ms apart.
 */
function spacingGroup(minTime: number) {
  const lanes = new Map<string, { last: number; tail: Promise<unknown> }>();
  const schedule = (id: string) => ({
    schedule<T>(_options: unknown, fn: (...args: unknown[]) => Promise<T>, ...args: unknown[]): Promise<T> {
      const lane = lanes.get(id) ?? { last: 0, tail: Promise.resolve() };
      lanes.set(id, lane);
      const run = lane.tail.then(async () => {
        const wait = lane.last + minTime - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        lane.last = Date.now();
        return fn(...args);
      });
      lane.tail = run.catch(() => {});
      return run;
    },
  });
  return { key: schedule };
}

/** The Octokit class for one installation (or the App itself), configured with `options`. */
export function octokitClass(apiUrl: string, id: string, options: GitHubClientOptions) {
  const retryable = (retryAfter: number, retryCount: number) =>
    retryCount < options.rateLimitRetries && retryAfter * 1000 <= options.maxRateLimitWaitMs;
  return GitHubOctokit.defaults({
    baseUrl: apiUrl,
    userAgent: USER_AGENT,
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    request: options.fetch ? { fetch: options.fetch } : {},
    throttle: {
      id,
      onRateLimit: (retryAfter: number, _o: unknown, _k: unknown, retryCount: number) =>
        retryable(retryAfter, retryCount),
      onSecondaryRateLimit: (retryAfter: number, _o: unknown, _k: unknown, retryCount: number) =>
        retryable(retryAfter, retryCount),
      // plugin-throttling takes Bottleneck groups; these two honour the same calls.
      write: spacingGroup(options.writeSpacingMs) as never,
      notifications: spacingGroup(options.notificationSpacingMs) as never,
    },
    retry: {
      retries: options.serverErrorRetries,
      retryAfterBaseValue: options.serverErrorBackoffMs,
      doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451],
    },
  });
}

/** Getting an installation token failed; `cause` is GitHub's answer. */
export class InstallationTokenError extends Error {
  constructor(
    readonly installationId: number,
    readonly status: number | null,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'InstallationTokenError';
  }
}

/**
 * The installation token of one installation: fetched once, reused until `tokenRefreshMarginMs`
 * before its `expires_at`, and fetched by one request however many callers wait for it.
 */
export class InstallationTokens {
  private current: { token: string; expiresAt: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly app: App,
    readonly installationId: number,
    private readonly options: GitHubClientOptions,
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async get(): Promise<string> {
    if (this.current && this.current.expiresAt - this.options.tokenRefreshMarginMs > this.now())
      return this.current.token;
    this.pending ??= this.fetch().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** Forgets the token (GitHub said it is bad). */
  invalidate(): void {
    this.current = null;
  }

  private async fetch(): Promise<string> {
    try {
      const { data } = await this.app.octokit.request(
        'POST /app/installations/{installation_id}/access_tokens',
        { installation_id: this.installationId },
      );
      const expiresAt = Date.parse(data.expires_at);
      this.current = { token: data.token, expiresAt: Number.isFinite(expiresAt) ? expiresAt : this.now() };
      return data.token;
    } catch (error) {
      const status = (error as { status?: number }).status ?? null;
      const why =
        status === 404
          ? 'GitHub does not know this installation (was the App uninstalled?)'
          : status === 401
            ? 'GitHub rejected the App JWT (check GITHUB_APP_ID and the private key)'
            : status === 403
              ? 'GitHub refused the token (the installation may be suspended)'
              : (error as Error).message;
      throw new InstallationTokenError(
        this.installationId,
        status,
        `could not get an installation token for GitHub installation ${this.installationId}: ${why}`,
        { cause: error },
      );
    }
  }
}

/**
 * An Octokit auth strategy that sends the installation token (`token …`). It runs on every
 * attempt, retries included, so a retry after a long wait carries a fresh token.
 */
function installationTokenAuth({ tokens }: { tokens: InstallationTokens }) {
  const auth = async () => ({ type: 'token', tokenType: 'installation', token: await tokens.get() });
  return Object.assign(auth, {
    hook: async (
      request: ((options: unknown) => Promise<unknown>) & {
        endpoint: { merge: (route: unknown, parameters?: unknown) => { headers: Record<string, string> } };
      },
      route: unknown,
      parameters?: unknown,
    ) => {
      const endpoint = request.endpoint.merge(route, parameters);
      endpoint.headers.authorization = `token ${await tokens.get()}`;
      return request(endpoint);
    },
  });
}

/** The App and the clients of its installations. */
export class GitHubAppClient {
  readonly app: App;
  readonly options: GitHubClientOptions;
  private readonly installations = new Map<number, { octokit: GitHubOctokit; tokens: InstallationTokens }>();

  constructor(
    readonly config: GitHubAppConfig,
    options: Partial<GitHubClientOptions> = {},
  ) {
    this.options = { ...DEFAULT_GITHUB_CLIENT_OPTIONS, ...options };
    this.app = new App({
      appId: config.appId,
      privateKey: config.privateKey,
      Octokit: octokitClass(config.apiUrl, `app-${config.appId}`, this.options),
    });
  }

  /** The client of one installation (made once, then reused with its token cache). */
  installation(installationId: number): { octokit: GitHubOctokit; tokens: InstallationTokens } {
    let entry = this.installations.get(installationId);
    if (!entry) {
      const tokens = new InstallationTokens(this.app, installationId, this.options);
      const InstallationOctokit = octokitClass(
        this.config.apiUrl,
        `installation-${installationId}`,
        this.options,
      );
      const octokit = new InstallationOctokit({
        authStrategy: installationTokenAuth as never,
        auth: { tokens },
      });
      entry = { octokit, tokens };
      this.installations.set(installationId, entry);
    }
    return entry;
  }
}
