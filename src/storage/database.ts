/**
 * Opens the one database svc keeps its state in: PGlite in a data directory (the embedded
 * default, pglite.ts) or PostgreSQL when DATABASE_URL is set (postgres.ts). Both are driven
 * through the same drizzle schema; the engine additionally needs raw SQL and LISTEN/NOTIFY,
 * exposed here uniformly.
 */
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { StatementPriority } from './priority';
import type * as schema from './schema';

export type Schema = typeof schema;
export type Orm = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  /** A short description for logs, without credentials. */
  readonly label: string;
  readonly orm: Orm;
  /**
   * A number that changes whenever anything may have written, or null when other processes can
   * write (PostgreSQL). With the embedded database this process is the only writer (the data dir
   * is locked), so a value read at generation G is still exact while the generation is G.
   */
  writeGeneration(): number | null;
  /** Raw SQL through drizzle's `sql` template; returns the rows. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * Subscribe to a NOTIFY channel; returns an unsubscribe function. On PostgreSQL the listening
   * connection comes back by itself when it is lost (with backoff) and subscribes again; notifications
   * sent meanwhile are lost, so `events.onReconnect` runs once it listens again, to catch up.
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    events?: ListenEvents,
  ): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** Which statements go first when the connection is shared (priority.ts). */
  readonly priority: StatementPriority;
  /** Runs `fn` on one dedicated connection (session-level locks need that). */
  withSession<T>(fn: (orm: Orm) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ListenEvents {
  /** The listening connection was lost; it is being re-established. */
  onLost?: (error: Error) => void;
  /** Listening again after a loss (never for the first connect). */
  onReconnect?: () => void;
}

export interface OpenOptions {
  /** postgres://… ; when absent the embedded PGlite in `dataDir` is used. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; `memory://` keeps it in memory. Default `./.svc`. */
  dataDir?: string | undefined;
  /** A `dumpDataDir` tarball to start an in-memory PGlite from (tests: skips initdb). */
  pgliteSnapshot?: Blob | undefined;
  /** Pool size for PostgreSQL. */
  poolSize?: number | undefined;
  /** Hears what opening did that an operator should know (a stale lock taken over); default stderr. */
  note?: ((message: string) => void) | undefined;
}

const noteOnStderr = (message: string) => process.stderr.write(`svc: ${message}\n`);

/**
 * Each engine's driver is loaded only when it is opened: a start on the embedded database never
 * loads pg, and one on PostgreSQL never loads PGlite (each is a few hundred ms of a cold start).
 */
export async function openDatabase(options: OpenOptions = {}): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import('./postgres');
    return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  }
  const { openPglite } = await import('./pglite');
  return openPglite(options.dataDir ?? './.svc', options.note ?? noteOnStderr, options.pgliteSnapshot);
}

const CONNECTION_LOST_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast or smart shutdown
  '57P02', // crash_shutdown: another backend crashed and the server restarts
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
]);
const CONNECTION_LOST_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_LOST_MESSAGES = [
  'Connection terminated',
  'is not queryable',
  'not currently accepting connections',
  'timeout exceeded when trying to connect',
];

/**
 * True when `error` (or an error it wraps, as drizzle's `DrizzleQueryError` wraps the driver's)
 * says the connection to the database was lost or could not be made: a fault of the platform,
 * not of the statement. A statement that failed on its own merits (a constraint, a syntax
 * error) is not.
 */
export function isConnectionLost(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const { code, message, cause, errors } = e as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string') {
      if (CONNECTION_LOST_SQLSTATES.has(code) || code.startsWith('08') || CONNECTION_LOST_ERRNOS.has(code))
        return true;
    }
    if (typeof message === 'string' && CONNECTION_LOST_MESSAGES.some((m) => message.includes(m))) return true;
    queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return false;
}
