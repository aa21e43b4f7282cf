/**
 * Opens the one database svc keeps its state in: PGlite in a data directory (the embedded
 * default) or PostgreSQL when DATABASE_URL is set. Both are driven through the same drizzle
 * schema; the engine additionally needs raw SQL and LISTEN/NOTIFY, exposed here uniformly.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import lockfile from 'proper-lockfile';
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
  /** Subscribe to a NOTIFY channel; returns an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** Runs `fn` on one dedicated connection (session-level locks need that). */
  withSession<T>(fn: (orm: Orm) => Promise<T>): Promise<T>;
  close(): Promise<void>;
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
}

export async function openDatabase(options: OpenOptions = {}): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(options.dataDir ?? './.svc', options.pgliteSnapshot);
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
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
  let listener: pg.Client | null = null;
  const handlers = new Map<string, Set<(payload: string) => void>>();

  async function listenerClient(): Promise<pg.Client> {
    if (listener) return listener;
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {
      // Dropped listener: forget it; the engine's polling keeps working and the next listen reconnects.
      listener = null;
    });
    client.on('notification', (msg) => {
      for (const handler of handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    await client.connect();
    listener = client;
    return client;
  }

  return {
    kind: 'postgres',
    writeGeneration: () => null,
    label: `postgres ${redact(url)}`,
    orm,
    async rows<T>(query: SQL) {
      const result = await orm.execute(query);
      return (result as unknown as { rows: T[] }).rows;
    },
    async listen(channel, onPayload) {
      const client = await listenerClient();
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
      };
    },
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
      const l = listener;
      listener = null;
      await l?.end().catch(() => {});
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string, snapshot?: Blob): Promise<Database> {
  let release: (() => Promise<void>) | null = null;
  let client: PGlite;
  if (dataDir.startsWith('memory://')) {
    client = await PGlite.create(snapshot ? { loadDataDir: snapshot } : {});
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    // Two processes on one PGlite data dir silently lose writes, so the second one must refuse.
    try {
      release = await lockfile.lock(dir, { lockfilePath: `${dir}.lock`, stale: 15_000, update: 5_000 });
    } catch (error) {
      throw new Error(
        `the data directory ${dir} is in use by another svc process (lock ${dir}.lock). ` +
          'Stop that process (a lock left by a killed process expires after 15 s), or set DATABASE_URL to ' +
          'share a PostgreSQL database between processes.',
        { cause: error },
      );
    }
    if (!existsSync(join(dir, 'PG_VERSION'))) await initDataDirInChild(dir);
    client = await PGlite.create(dir);
  }
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

/** Anything but a plain read may write: such statements (and every transaction) bump the generation. */
const READ_ONLY = /^\s*(select|with\s+[\s\S]*?\)\s*select|show|explain)\b/i;

function trackWrites(client: PGlite): { value: number } {
  const generation = { value: 0 };
  const bump = () => {
    generation.value++;
  };
  for (const method of ['query', 'exec'] as const) {
    const original = client[method].bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as Record<string, unknown>)[method] = async (text: string, ...rest: unknown[]) => {
      const writes = !READ_ONLY.test(text);
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

const INIT_SCRIPT = fileURLToPath(new URL('./pglite-init.mjs', import.meta.url));

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
