/**
 * Databases for tests: each call gives a fresh, migrated database of the asked kind that no
 * other test file sees. PostgreSQL databases are cloned from the template made in global setup
 * and dropped on close.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/storage/database';
import { ADMIN_URL, SNAPSHOT_FILE, templateName, urlFor } from './paths';

export type DatabaseKind = 'pglite' | 'postgres';
export const DATABASE_KINDS: DatabaseKind[] = ['pglite', 'postgres'];

export interface TestDatabase {
  db: Database;
  /** The connection string (postgres only), for child processes. */
  url: string | undefined;
  close(): Promise<void>;
}

let snapshot: Blob | undefined;

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    snapshot ??= new Blob([readFileSync(SNAPSHOT_FILE)]);
    const db = await openDatabase({ dataDir: 'memory://', pgliteSnapshot: snapshot });
    return { db, url: undefined, close: () => db.close() };
  }
  const hash = inject('migrationsHash');
  const name = `svc_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${templateName(hash)}`);
  await admin.end();
  const url = urlFor(name);
  const db = await openDatabase({ databaseUrl: url });
  return {
    db,
    url,
    async close() {
      await db.close();
      const cleanup = new pg.Client({ connectionString: ADMIN_URL });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
