/**
 * Runs once before all test files: compiles dist/ (the `svc` the process tests start), prepares a migrated PGlite snapshot and a migrated
 * PostgreSQL template database, so each test file gets its own fresh database in well under
 * a second instead of running initdb and migrations again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { buildSvc } from '../../scripts/build.mjs';
import { openDatabase } from '../../src/storage/database';
import { MIGRATIONS_DIR, migrate } from '../../src/storage/migrate';
import { ADMIN_URL, CACHE_DIR, SNAPSHOT_FILE, templateName, urlFor } from './paths';

/**
 * The template database is reused while the migrations are unchanged. The journal counts too:
 * the migrator applies by its `when` stamps, which `drizzle-kit generate` rewrites.
 */
function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    if (file.endsWith('.sql')) hash.update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  hash.update(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json')));
  return hash.digest('hex').slice(0, 12);
}

declare module 'vitest' {
  export interface ProvidedContext {
    migrationsHash: string;
  }
}

export default async function setup({ provide }: TestProject) {
  // The tests that start `svc` processes run the compiled build: compile what is being tested.
  await buildSvc({ ifStale: true });
  const hash = migrationsHash();
  provide('migrationsHash', hash);
  mkdirSync(CACHE_DIR, { recursive: true });

  const db = await openDatabase({ dataDir: 'memory://' });
  await migrate(db);
  // dumpDataDir lives on the PGlite client; reach it through a fresh client on the same data.
  const client = (db.orm as unknown as { $client: PGlite }).$client;
  const dump = await client.dumpDataDir('none');
  writeFileSync(SNAPSHOT_FILE, Buffer.from(await dump.arrayBuffer()));
  await db.close();

  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `the tests need PostgreSQL at ${ADMIN_URL} (set SVC_TEST_DATABASE_URL to change it): ${(error as Error).message}`,
    );
  }
  const template = templateName(hash);
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (exists.rowCount === 0) {
    await admin.query(`CREATE DATABASE ${template}`);
    const tdb = await openDatabase({ databaseUrl: urlFor(template) });
    await migrate(tdb);
    await tdb.close();
  }
  await admin.end();
}
