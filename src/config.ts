/**
 * Process configuration. Every option has an environment variable and a default that works
 * without configuration; CLI flags override the environment.
 */
import type { EngineLimits } from './engine/types';

export interface Config {
  /** HOST, default 127.0.0.1. */
  host: string;
  /** PORT, default 8080. */
  port: number;
  /** DATABASE_URL: PostgreSQL; unset means the embedded PGlite. */
  databaseUrl: string | undefined;
  /** SVC_DATA_DIR, default ./.svc: where the embedded database lives. */
  dataDir: string;
  /** SVC_REPOS_DIR, default ./repos: git repositories served by the local code host. */
  reposDir: string;
  /** SVC_BODY_LIMIT bytes, default 1 MiB. */
  bodyLimit: number;
  /**
   * SVC_WEBHOOK_BODY_LIMIT bytes, default 5 MiB: the largest GitHub delivery read. GitHub caps
   * payloads at 25 MB, but the events svc acts on are far smaller; an unauthenticated sender may
   * make the server buffer up to this much per request, so it stays well under GitHub's cap.
   */
  webhookBodyLimit: number;
  /**
   * SVC_WEBHOOK_INFLIGHT_BYTES, default 32 MiB: the webhook bodies all senders together may have
   * in flight (declared or read, not yet answered). A request that does not fit is answered 503
   * `webhooks_busy` with Retry-After, from its headers when it declares its length. 0: no budget.
   * At least SVC_WEBHOOK_BODY_LIMIT, or the largest delivery could never be read.
   */
  webhookInflightBytes: number;
  /**
   * The pace a webhook body must keep, so a trickle cannot hold the in-flight budget:
   * SVC_WEBHOOK_BODY_GRACE_MS (default 2000) after its headers, a body must have arrived at
   * SVC_WEBHOOK_MIN_BYTES_PER_S (default 1024) on average since the grace ended, or it is
   * answered 408 and its connection closed (0 turns the check off). SVC_WEBHOOK_SOURCE_SHARE
   * (default 0.25): the fraction of the budget the bodies of one client address may hold at once
   * (never less than one body of SVC_WEBHOOK_BODY_LIMIT; 1 turns it off).
   */
  webhookPace: { graceMs: number; minBytesPerS: number; sourceShare: number };
  /**
   * SVC_KEY_LOOKUP_CONCURRENCY, default 64: API keys not in the process's cache looked up in the
   * database at once; past it such requests are answered 503 `authentication_busy`. 0: no cap.
   */
  keyLookupConcurrency: number;
  /**
   * Slow and idle clients: SVC_REQUEST_TIMEOUT_MS (default 30 s) for a whole request, headers
   * and body; SVC_HEADERS_TIMEOUT_MS (default 10 s) for its headers; SVC_IDLE_TIMEOUT_MS (default
   * 60 s) for a connection with no traffic. 0 turns one off.
   */
  timeouts: { requestMs: number; headersMs: number; idleMs: number };
  /**
   * SVC_KEY_CACHE_MS: how long a process may go on accepting a key after another process
   * revoked it (keys are cached per process; a revocation through this process is at once).
   * Unset: 1000 on PostgreSQL, and until revoked on the embedded database, where one process
   * sees every revocation. 0: every request reads the key.
   */
  keyCacheMs: number | undefined;
  /** SVC_BOOTSTRAP_KEY: becomes the first workspace key when the database has none. */
  bootstrapKey: string | undefined;
  /** LOG_LEVEL, default info. */
  logLevel: string;
  /** SVC_NO_WORKER=1 or `--no-worker`: serve the API without executing runs in-process. */
  runWorker: boolean;
  /** SVC_WORKER_CONCURRENCY, default 4: runs one worker executes at once. */
  workerConcurrency: number;
  /** SVC_FILE_ANALYSIS_BUDGET_MS, see `fileAnalysisBudgetMs`. */
  fileAnalysisBudgetMs: number | undefined;
  engine: EngineLimits;
  /**
   * The environment this configuration was read from. Reviewer engines read their provider
   * settings (OPENAI_API_KEY, SVC_LLM_COMPAT_URL, …) from it, so a test or an embedding
   * program can configure them without touching process.env.
   */
  env: NodeJS.ProcessEnv;
}

const int = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${value}"`);
  return n;
};

function webhookInflightBytes(env: NodeJS.ProcessEnv): number {
  const budget = int(env.SVC_WEBHOOK_INFLIGHT_BYTES, 32 * 1024 * 1024, 'SVC_WEBHOOK_INFLIGHT_BYTES');
  const bodyLimit = int(env.SVC_WEBHOOK_BODY_LIMIT, 5 * 1024 * 1024, 'SVC_WEBHOOK_BODY_LIMIT');
  if (budget > 0 && budget < bodyLimit) {
    throw new Error(
      `SVC_WEBHOOK_INFLIGHT_BYTES (${budget}) is below SVC_WEBHOOK_BODY_LIMIT (${bodyLimit}): the largest delivery could never be read; raise it or lower the body limit`,
    );
  }
  return budget;
}

function share(value: string | undefined): number {
  const fraction = int(value, 0.25, 'SVC_WEBHOOK_SOURCE_SHARE');
  if (fraction === 0 || fraction > 1) {
    throw new Error(`SVC_WEBHOOK_SOURCE_SHARE must be a fraction in (0, 1], got "${value}"`);
  }
  return fraction;
}

/**
 * Limits read where they are used (the LLM engine from `env`, git from process.env), checked
 * here too so that a mistyped value fails the start instead of a run hours later.
 */
function checkToolLimits(env: NodeJS.ProcessEnv): void {
  for (const name of ['SVC_LLM_TIMEOUT_MS', 'SVC_GIT_TIMEOUT_MS']) {
    if (int(env[name], 1, name) === 0)
      throw new Error(`${name} must be a positive number, got "${env[name]}"`);
  }
}

/**
 * SVC_FILE_ANALYSIS_BUDGET_MS: milliseconds of CPU the builtin rules may spend on one file (per
 * skill), counted over that file's own slices of work; past it the file is a
 * `file_analysis_budget` gap. Unset: the builtin engine's default (30 s); 0: no budget. Read where
 * a review runs its reviewers, from the environment the configuration was read from.
 */
export function fileAnalysisBudgetMs(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.SVC_FILE_ANALYSIS_BUDGET_MS;
  return value ? int(value, 0, 'SVC_FILE_ANALYSIS_BUDGET_MS') : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  checkToolLimits(env);
  return {
    env,
    host: env.HOST || '127.0.0.1',
    port: int(env.PORT, 8080, 'PORT'),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.SVC_DATA_DIR || './.svc',
    reposDir: env.SVC_REPOS_DIR || './repos',
    bodyLimit: int(env.SVC_BODY_LIMIT, 1024 * 1024, 'SVC_BODY_LIMIT'),
    webhookBodyLimit: int(env.SVC_WEBHOOK_BODY_LIMIT, 5 * 1024 * 1024, 'SVC_WEBHOOK_BODY_LIMIT'),
    webhookInflightBytes: webhookInflightBytes(env),
    webhookPace: {
      graceMs: int(env.SVC_WEBHOOK_BODY_GRACE_MS, 2_000, 'SVC_WEBHOOK_BODY_GRACE_MS'),
      minBytesPerS: int(env.SVC_WEBHOOK_MIN_BYTES_PER_S, 1024, 'SVC_WEBHOOK_MIN_BYTES_PER_S'),
      sourceShare: share(env.SVC_WEBHOOK_SOURCE_SHARE),
    },
    keyLookupConcurrency: int(env.SVC_KEY_LOOKUP_CONCURRENCY, 64, 'SVC_KEY_LOOKUP_CONCURRENCY'),
    timeouts: {
      requestMs: int(env.SVC_REQUEST_TIMEOUT_MS, 30_000, 'SVC_REQUEST_TIMEOUT_MS'),
      headersMs: int(env.SVC_HEADERS_TIMEOUT_MS, 10_000, 'SVC_HEADERS_TIMEOUT_MS'),
      idleMs: int(env.SVC_IDLE_TIMEOUT_MS, 60_000, 'SVC_IDLE_TIMEOUT_MS'),
    },
    keyCacheMs: env.SVC_KEY_CACHE_MS ? int(env.SVC_KEY_CACHE_MS, 0, 'SVC_KEY_CACHE_MS') : undefined,
    bootstrapKey: env.SVC_BOOTSTRAP_KEY || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    runWorker: !(env.SVC_NO_WORKER === '1' || env.SVC_NO_WORKER === 'true'),
    workerConcurrency: int(env.SVC_WORKER_CONCURRENCY, 4, 'SVC_WORKER_CONCURRENCY'),
    fileAnalysisBudgetMs: fileAnalysisBudgetMs(env),
    engine: {
      leaseMs: int(env.SVC_LEASE_MS, 30_000, 'SVC_LEASE_MS'),
      heartbeatMs: int(env.SVC_HEARTBEAT_MS, 10_000, 'SVC_HEARTBEAT_MS'),
      livenessMs: int(env.SVC_LIVENESS_MS, 5 * 60_000, 'SVC_LIVENESS_MS'),
      pickupTimeoutMs: int(env.SVC_PICKUP_TIMEOUT_MS, 15 * 60_000, 'SVC_PICKUP_TIMEOUT_MS'),
      wallClockMs: int(env.SVC_WALL_CLOCK_MS, 30 * 60_000, 'SVC_WALL_CLOCK_MS'),
      maxReplacements: int(env.SVC_MAX_REPLACEMENTS, 2, 'SVC_MAX_REPLACEMENTS'),
      pollMs: int(env.SVC_POLL_MS, 1_000, 'SVC_POLL_MS'),
      shutdownGraceMs: int(env.SVC_SHUTDOWN_GRACE_MS, 10_000, 'SVC_SHUTDOWN_GRACE_MS'),
    },
  };
}
