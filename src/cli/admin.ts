import type { Config } from '../config';
import { openDatabase } from '../storage/database';
import { migrate } from '../storage/migrate';

async function open(config: Config) {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(db);
  return db;
}

export async function migrateCommand(config: Config) {
  const db = await open(config);
  process.stdout.write(`migrations applied (${db.label})\n`);
  await db.close();
}
