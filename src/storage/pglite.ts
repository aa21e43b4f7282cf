/** The embedded database behind the `Database` interface: PGlite in a locked data directory. */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { lockDataDir } from './data-dir-lock';
import type { Database, Orm } from './database';
import { createDataDir } from './pglite-data-dir';
import { StatementPriority } from './priority';
import * as schema from './schema';

/**
 * PGlite's own start parameters, with a 16 MB buffer pool instead of PostgreSQL's 128 MB. PGlite
 * writes over its whole pool when it starts, so 128 MB cost ~0.4 s of every start and stayed
 * resident (~130 MB of RSS); pages beyond the pool are read back from the OS's page cache
 * (decision 116).
 */
const PGLITE_START = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

export async function openPglite(
  dataDir: string,
  note: (message: string) => void,
  snapshot?: Blob,
): Promise<Database> {
  let release: (() => Promise<void>) | null = null;
  let client: PGlite;
  if (dataDir.startsWith('memory://')) {
    client = await PGlite.create({
      startParams: PGLITE_START,
      ...(snapshot ? { loadDataDir: snapshot } : {}),
    });
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    release = await lockDataDir(dir, note);
    if (!existsSync(join(dir, 'PG_VERSION'))) await createDataDir(dir);
    client = await PGlite.create(dir, { startParams: PGLITE_START });
  }
  keepTimesAsText(client);
  const priority = new StatementPriority(true);
  const generation = trackWrites(client, priority);
  const orm = drizzlePglite({ client, schema }) as unknown as Orm;
  return {
    writeGeneration: () => generation.value,
    priority,
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

/**
 * Also where a background statement waits for foreground work (priority.ts): every statement and
 * transaction of the process passes here before PGlite queues it.
 */
function trackWrites(client: PGlite, priority: StatementPriority): { value: number } {
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
      const turn = priority.turn();
      if (turn) await turn;
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
    const turn = priority.turn();
    if (turn) await turn;
    try {
      return await transaction(fn);
    } finally {
      bump();
    }
  };
  return generation;
}
