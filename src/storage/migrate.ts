import { sql } from 'drizzle-orm';
import { packagePath } from '../core/install-paths';
import type { Database } from './database';

export const MIGRATIONS_DIR = packagePath('drizzle');

// Any fixed number: every svc process takes the same advisory lock while migrating, so two
// workers starting together do not both try to create the same tables.
const MIGRATION_LOCK = 0x57c0001;

export async function migrate(db: Database): Promise<void> {
  const config = { migrationsFolder: MIGRATIONS_DIR };
  // Each driver's migrator is loaded only for its own engine (see openDatabase).
  if (db.kind === 'pglite') {
    const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator');
    // biome-ignore lint/suspicious/noExplicitAny: drizzle's migrators want their driver's own type
    await migratePglite(db.orm as any, config);
    return;
  }
  const { migrate: migrateNodePg } = await import('drizzle-orm/node-postgres/migrator');
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
