/**
 * Opens the one database svc keeps its state in: PGlite in a data directory (the embedded
 * default) or PostgreSQL when DATABASE_URL is set. Both are driven through the same drizzle
 * schema; the engine additionally needs raw SQL and LISTEN/NOTIFY, exposed here uniformly.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { packagePath } from '../core/install-paths';
import { lockDataDir } from './data-dir-lock';
import * as schema from './schema';

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

export async function openDatabase(options: OpenOptions = {}): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(options.dataDir ?? './.svc', options.note ?? noteOnStderr, options.pgliteSnapshot);
}

/**
 * A pool whose checked-out clients survive their connection dying. A connection the server ends
 * (a restart, `pg_terminate_backend`, a network cut) emits 'error' on its client; pg-pool
 * listens only while the client is idle, so a checked-out one (inside a transaction or a
 * session) would crash the process. And drizzle's transaction never releases a client whose
 * `begin` failed, so each such death would leak a pool slot until the pool is exhausted. Here a
 * checked-out client that errors is released at once (pg-pool drops it, the slot is free again)
 * and a later release of it is a no-op: the statement in flight fails with the error, and the
 * next one gets a fresh connection.
 */
class ResilientPool extends pg.Pool {
  constructor(config: pg.PoolConfig) {
    super(config);
    // Idle, checked out or in between: no client's 'error' ever goes unheard.
    this.on('connect', (client) => client.on('error', () => {}));
    this.on('error', () => {});
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(
    callback?: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): Promise<pg.PoolClient> | undefined {
    // The callback form is pg-pool's own `query`, which already releases on error.
    if (callback) {
      super.connect(callback);
      return undefined;
    }
    return super.connect().then((client) => {
      const release = client.release;
      let released = false;
      const onError = (error: Error) => client.release(error);
      client.release = (err?: Error | boolean) => {
        if (released) return;
        released = true;
        client.removeListener('error', onError);
        release.call(client, err);
      };
      client.on('error', onError);
      return client;
    });
  }
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new ResilientPool({ connectionString: url, max: poolSize });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end();
    throw new Error(
      `cannot connect to PostgreSQL at ${redact(url)}: ${(error as Error).message}. ` +
        'Check DATABASE_URL, or unset it to use the embedded database.',
      { cause: error },
    );
  }
  const orm = drizzlePg({ client: pool, schema }) as unknown as Orm;
  const listener = new PgListener(url);

  return {
    kind: 'postgres',
    writeGeneration: () => null,
    label: `postgres ${redact(url)}`,
    orm,
    async rows<T>(query: SQL) {
      const result = await orm.execute(query);
      return (result as unknown as { rows: T[] }).rows;
    },
    listen: (channel, onPayload, events) => listener.subscribe(channel, onPayload, events ?? {}),
    async notify(channel, payload) {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn(drizzlePg({ client, schema }) as unknown as Orm);
      } finally {
        client.release();
      }
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}

/** Reconnect delays of the LISTEN connection: doubling from the first, capped at the last. */
const LISTEN_RECONNECT_MS = { first: 100, max: 5_000 } as const;

interface Subscription {
  channel: string;
  onPayload: (payload: string) => void;
  events: ListenEvents;
}

/**
 * The one dedicated LISTEN connection of a PostgreSQL database. When the server ends it, it is
 * opened again with backoff (100 ms doubling to 5 s, with jitter), LISTENs on every subscribed
 * channel again, and then tells each subscriber (`onReconnect`) so it can catch up on what it
 * missed.
 */
class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly subscriptions = new Set<Subscription>();
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly url: string) {}

  async subscribe(
    channel: string,
    onPayload: (payload: string) => void,
    events: ListenEvents,
  ): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('the database is closed');
    const subscription: Subscription = { channel, onPayload, events };
    const listening = this.channels().has(channel);
    this.subscriptions.add(subscription);
    try {
      const client = await this.connected();
      // (A connection opened just now already listens on it; LISTEN twice is a no-op.)
      if (!listening) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      this.subscriptions.delete(subscription);
      throw error;
    }
    return async () => {
      this.subscriptions.delete(subscription);
      if (this.channels().has(channel)) return;
      await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => {});
  }

  private channels(): Set<string> {
    return new Set([...this.subscriptions].map((s) => s.channel));
  }

  /** The live connection, opening it (and listening on every channel) when there is none. */
  private connected(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    let lost = false;
    const onLost = (error: Error) => {
      if (lost) return;
      lost = true;
      client.end().catch(() => {});
      if (this.client === client) {
        this.client = null;
        this.lost(error);
      }
    };
    // Attached before connecting: an 'error' with no listener would crash the process.
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the LISTEN connection ended')));
    client.on('notification', (msg) => {
      for (const s of this.subscriptions) if (s.channel === msg.channel) s.onPayload(msg.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.channels()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      lost = true;
      await client.end().catch(() => {});
      throw new Error('the database is closed');
    }
    this.client = client;
    return client;
  }

  private lost(error: Error): void {
    for (const s of this.subscriptions) s.events.onLost?.(error);
    this.failures = 0;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.subscriptions.size === 0) return;
    const base = Math.min(LISTEN_RECONNECT_MS.max, LISTEN_RECONNECT_MS.first * 2 ** this.failures);
    const delay = Math.round(base * (0.5 + Math.random() / 2));
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.connected().then(
        () => {
          this.failures = 0;
          for (const s of this.subscriptions) s.events.onReconnect?.();
        },
        () => {
          this.failures++;
          this.scheduleReconnect();
        },
      );
    }, delay);
    // Reconnecting must not keep a process alive that is otherwise done.
    this.retryTimer.unref();
  }
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

async function openPglite(
  dataDir: string,
  note: (message: string) => void,
  snapshot?: Blob,
): Promise<Database> {
  let release: (() => Promise<void>) | null = null;
  let client: PGlite;
  if (dataDir.startsWith('memory://')) {
    client = await PGlite.create(snapshot ? { loadDataDir: snapshot } : {});
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    release = await lockDataDir(dir, note);
    if (!existsSync(join(dir, 'PG_VERSION'))) await initDataDirInChild(dir);
    client = await PGlite.create(dir);
  }
  keepTimesAsText(client);
  const generation = trackWrites(client);
  const orm = drizzlePglite({ client, schema }) as unknown as Orm;
  return {
    writeGeneration: () => generation.value,
    kind: 'pglite',
    label: dataDir.startsWith('memory://') ? 'pglite (in memory)' : `pglite ${resolve(dataDir)}`,
    orm,
    async rows<T>(query: SQL) {
      const result = await orm.execute(query);
      return (result as unknown as { rows: T[] }).rows;
    },
    async listen(channel, onPayload) {
      const unsubscribe = await client.listen(channel, onPayload);
      return unsubscribe;
    },
    async notify(channel, payload) {
      await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    withSession: (fn) => fn(orm),
    async close() {
      await client.close();
      await release?.();
    },
  };
}

/** The types drizzle asks PGlite to leave as text (dates, times, intervals, numeric[]), on every query. */
const TEXT_TYPES = [1082, 1114, 1115, 1182, 1184, 1185, 1186, 1187, 1231];
const asText = (value: string) => value;
type Parsers = Record<string, (value: string, type: number) => unknown>;

/**
 * drizzle passes PGlite the same `parsers` with every query (the types above left as text), and
 * PGlite merges them into its ~300 parsers on every call: ~0.15 ms of the one thread per
 * statement, measured (bench/api.ts, the review acknowledgement). The client's own parsers leave
 * those types as text instead, and a query asking for exactly that runs without the option.
 * Anything else (another set, or parsers PGlite replaced since) is passed on as given.
 */
function keepTimesAsText(client: PGlite): void {
  const own = (client as unknown as { parsers: Parsers }).parsers;
  for (const type of TEXT_TYPES) own[type] = asText;
  type Query = (text: string, params?: unknown[], options?: { parsers?: Parsers }) => Promise<unknown>;
  const lean =
    (query: Query): Query =>
    (text, params, options) => {
      const asked = options?.parsers;
      const same =
        asked !== undefined &&
        Object.keys(asked).length === TEXT_TYPES.length &&
        TEXT_TYPES.every((type) => asked[type]?.('x', type) === 'x' && own[type] === asText);
      return query(text, params, same ? { ...options, parsers: undefined } : options);
    };
  const target = client as unknown as { query: Query; transaction: PGlite['transaction'] };
  target.query = lean(client.query.bind(client) as Query);
  const transaction = client.transaction.bind(client);
  target.transaction = (fn) =>
    transaction((tx) => {
      (tx as unknown as { query: Query }).query = lean(tx.query as Query);
      return fn(tx);
    });
}

/** Anything but a plain read may write: such statements (and every transaction) bump the generation. */
const READ_ONLY = /^\s*(select|with\s+[\s\S]*?\)\s*select|show|explain)\b/i;
/** A `WITH … (INSERT INTO t (cols) SELECT …)` statement looks like a read to READ_ONLY, and writes. */
const MODIFIES = /\b(insert|update|delete|merge|truncate)\b/i;

function trackWrites(client: PGlite): { value: number } {
  const generation = { value: 0 };
  const bump = () => {
    generation.value++;
  };
  for (const method of ['query', 'exec'] as const) {
    const original = client[method].bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as Record<string, unknown>)[method] = async (text: string, ...rest: unknown[]) => {
      const writes = !READ_ONLY.test(text) || MODIFIES.test(text);
      // Bumped when issued (later reads see the new value) and when done (reads issued meanwhile
      // were queued behind the write by PGlite and cached nothing older).
      if (writes) bump();
      try {
        return await original(text, ...rest);
      } finally {
        if (writes) bump();
      }
    };
  }
  const transaction = client.transaction.bind(client);
  (client as unknown as Record<string, unknown>).transaction = async (
    fn: Parameters<PGlite['transaction']>[0],
  ) => {
    bump();
    try {
      return await transaction(fn);
    } finally {
      bump();
    }
  };
  return generation;
}

const INIT_SCRIPT = packagePath('src', 'storage', 'pglite-init.mjs');

/** initdb for a new data dir, in a child process so its memory is returned when it exits. */
async function initDataDirInChild(dir: string): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [INIT_SCRIPT, dir], { timeout: 120_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(
      `could not create the embedded database in ${dir}: ${stderr || (error as Error).message}`,
      { cause: error },
    );
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}
