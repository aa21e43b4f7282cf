import { sql } from 'drizzle-orm';
// Both migrators are a few lines over drizzle's own migrator and load no driver.
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { packagePath } from '../core/install-paths';
import type { Database } from './database';

export const MIGRATIONS_DIR = packagePath('drizzle');

// Any fixed number: every svc process takes the same advisory lock while migrating, so two
// workers starting together do not both try to create the same tables.
const MIGRATION_LOCK = 0x57c0001;

/** Applies the migrations of `folder` (svc's own by default) the database has not applied yet. */
export async function migrate(db: Database, folder = MIGRATIONS_DIR): Promise<void> {
  const config = { migrationsFolder: folder };
  if (db.kind === 'pglite') {
    // biome-ignore lint/suspicious/noExplicitAny: drizzle's migrators want their driver's own type
    await migratePglite(db.orm as any, config);
    return;
  }
  await db.withSession(async (session) => {
    await session.execute(sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      // biome-ignore lint/suspicious/noExplicitAny: as above
      await migrateNodePg(session as any, config);
    } finally {
      await session.execute(sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
  });
}
