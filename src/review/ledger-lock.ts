/**
 * One writer at a time per findings ledger. A review's merge (./ledger.ts) commits in many short
 * transactions, so the lock that keeps two merges (or a merge and a person's disposition,
 * ./disposition.ts) from interleaving must outlive any one transaction:
 *
 * - in this process, a queue per ledger key (the only lock PGlite needs: the data dir lock makes
 *   this process the database's only writer, and its one session makes advisory locks no-ops);
 * - on PostgreSQL, also a session-level advisory lock on `hashtext(ledger key)`, held on the one
 *   connection the merge writes through. It conflicts with the transaction-level lock
 *   `applyDisposition` takes on the same key, and dies with the connection: a merge whose process
 *   or connection is gone holds nothing.
 */
import { sql } from 'drizzle-orm';
import type { Database, Orm } from '../storage/database';

const queues = new WeakMap<Database, Map<string, Promise<unknown>>>();

/** Runs `fn` once every earlier holder of `ledgerKey` in this process has finished. */
export async function withLedgerMutex<T>(db: Database, ledgerKey: string, fn: () => Promise<T>): Promise<T> {
  let byKey = queues.get(db);
  if (!byKey) {
    byKey = new Map();
    queues.set(db, byKey);
  }
  const before = byKey.get(ledgerKey) ?? Promise.resolve();
  const mine = before.then(
    () => fn(),
    () => fn(),
  );
  const settled = mine.then(
    () => {},
    () => {},
  );
  byKey.set(ledgerKey, settled);
  try {
    return await mine;
  } finally {
    // The last holder leaves no entry behind.
    if (byKey.get(ledgerKey) === settled) byKey.delete(ledgerKey);
  }
}

/**
 * Runs `fn` holding the ledger's lock for as long as it runs; `fn` writes through the `orm` it is
 * given (on PostgreSQL, the connection that holds the advisory lock) in transactions of its own.
 */
export function withLedgerLock<T>(db: Database, ledgerKey: string, fn: (orm: Orm) => Promise<T>): Promise<T> {
  return withLedgerMutex(db, ledgerKey, () => {
    if (db.kind === 'pglite') return fn(db.orm);
    return db.withSession(async (session) => {
      await session.execute(sql`SELECT pg_advisory_lock(hashtext(${ledgerKey}))`);
      try {
        return await fn(session);
      } finally {
        // If the connection is gone, so is the lock (and the pool drops the broken client).
        await session.execute(sql`SELECT pg_advisory_unlock(hashtext(${ledgerKey}))`).catch(() => {});
      }
    });
  });
}
