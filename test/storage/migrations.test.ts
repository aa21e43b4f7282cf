/**
 * Upgrades depend on released migrations never changing: a database records which migrations it
 * applied, so an edited or regenerated one would be skipped (or re-run against tables that
 * exist). drizzle/released.json fixes each migration's bytes; a new migration is added there
 * with its hash, on purpose.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/storage/database';
import { MIGRATIONS_DIR, migrate } from '../../src/storage/migrate';

interface Released {
  migrations: { tag: string; sha256: string }[];
}

const released = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'released.json'), 'utf8')) as Released;
const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};

/** svc's migrations as a release with only the first `count` of them shipped them. */
function releaseWith(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migrations-'));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  const shipped = { ...journal, entries: journal.entries.slice(0, count) };
  writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify(shipped));
  return dir;
}

describe('migrations', () => {
  it('keeps every released migration byte for byte', () => {
    for (const { tag, sha256 } of released.migrations) {
      const bytes = readFileSync(join(MIGRATIONS_DIR, `${tag}.sql`));
      expect(
        createHash('sha256').update(bytes).digest('hex'),
        `${tag}.sql changed after release: add a new migration instead`,
      ).toBe(sha256);
    }
  });

  it('journals exactly the released migrations, in order (a new one is recorded with its hash)', () => {
    expect(journal.entries.map((entry) => entry.tag)).toEqual(released.migrations.map((m) => m.tag));
  });

  // One embedded database per release and a fresh one: seconds each on a loaded machine.
  it('upgrades a database of every earlier release to what a new database gets, keeping its rows', {
    timeout: 180_000,
  }, async () => {
    const fresh = await openDatabase({ dataDir: 'memory://' });
    let expected: unknown[];
    try {
      await migrate(fresh);
      expected = await schemaOf(fresh);
    } finally {
      await fresh.close();
    }
    for (let shipped = 1; shipped < released.migrations.length; shipped++) {
      const earlier = releaseWith(shipped);
      const db = await openDatabase({ dataDir: 'memory://' });
      try {
        await migrate(db, earlier);
        await db.rows(sql`INSERT INTO workspaces (id, name) VALUES ('ws_upgrade', 'kept')`);
        await migrate(db);
        expect(await schemaOf(db), `upgraded from ${shipped} migration(s)`).toEqual(expected);
        expect(await db.rows(sql`SELECT name FROM workspaces WHERE id = 'ws_upgrade'`)).toEqual([
          { name: 'kept' },
        ]);
      } finally {
        await db.close();
        rmSync(earlier, { recursive: true, force: true });
      }
    }
  });
});

/** Tables, columns and indexes of the public schema, in a stable order. */
async function schemaOf(db: Database): Promise<unknown[]> {
  return [
    ...(await db.rows(sql`
      SELECT table_name, column_name, data_type, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public'
      ORDER BY table_name, column_name`)),
    ...(await db.rows(sql`
      SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
      ORDER BY tablename, indexname`)),
  ];
}
