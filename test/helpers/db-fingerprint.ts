/**
 * A fingerprint of everything a database holds, to show that a request wrote nothing: per
 * table of the public schema, its row count, the latest `updated_at` where it has one, and the
 * newest row version (`xmin`, the transaction that wrote it: an insert or an update in place
 * that forgot `updated_at` moves it, a delete moves the count). Events, idempotency records and
 * every other table count alike.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/storage/database';

export type Fingerprint = Map<string, string>;

export interface Fingerprinter {
  take(): Promise<Fingerprint>;
  /**
   * Where the write-ahead log ends: every committed write to a table moves it, so an unmoved
   * position proves nothing was written without the cost of `take()`. (A read may move it too,
   * pruning a page: then `take()` decides.)
   */
  walPosition(): Promise<string>;
}

/** Reads the table list once; `take()` is then one query. */
export async function fingerprinter(db: Database): Promise<Fingerprinter> {
  const columns = await db.rows<{ table_name: string; has_updated_at: boolean }>(sql`
    SELECT t.table_name,
           EXISTS (SELECT 1 FROM information_schema.columns c
                   WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
                     AND c.column_name = 'updated_at') AS has_updated_at
    FROM information_schema.tables t
    WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE'
    ORDER BY t.table_name`);
  if (columns.length === 0) throw new Error('no tables to fingerprint: is the database migrated?');
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const text = columns
    .map(
      ({ table_name: name, has_updated_at: hasUpdatedAt }) =>
        `SELECT '${name.replaceAll("'", "''")}' AS name, count(*)::text AS rows, ` +
        `${hasUpdatedAt ? 'max(updated_at)::text' : 'NULL::text'} AS updated_at, ` +
        `max(xmin::text::bigint)::text AS newest FROM ${quote(name)}`,
    )
    .join(' UNION ALL ');
  const query = sql.raw(text);
  return {
    async take() {
      const rows = await db.rows<{
        name: string;
        rows: string;
        updated_at: string | null;
        newest: string | null;
      }>(query);
      return new Map(
        rows.map((r) => [
          r.name,
          `${r.rows} rows, updated ${r.updated_at ?? '-'}, newest xmin ${r.newest ?? '-'}`,
        ]),
      );
    },
    async walPosition() {
      const [row] = await db.rows<{ lsn: string }>(sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`);
      return row?.lsn ?? '';
    },
  };
}

/** The tables whose fingerprint differs, with before → after; empty when nothing changed. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .filter((name) => before.get(name) !== after.get(name))
    .map((name) => `${name}: ${before.get(name) ?? 'absent'} → ${after.get(name) ?? 'absent'}`);
}

/**
 * Tells what was written since the last call: nothing when the write-ahead log has not moved,
 * else the tables whose fingerprint changed.
 */
export async function watchWrites(db: Database): Promise<{ changes(): Promise<string[]> }> {
  const fingerprints = await fingerprinter(db);
  let position = await fingerprints.walPosition();
  let last = await fingerprints.take();
  return {
    async changes() {
      const now = await fingerprints.walPosition();
      if (now === position) return [];
      const next = await fingerprints.take();
      const changed = changedTables(last, next);
      position = now;
      last = next;
      return changed;
    },
  };
}
