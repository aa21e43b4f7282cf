/** One-shot administrative commands: migrate, keys create. */
import { and, eq } from 'drizzle-orm';
import type { Config } from '../config';
import { openDatabase } from '../storage/database';
import { createApiKey, ensureWorkspace } from '../storage/keys';
import { migrate } from '../storage/migrate';
import { projects } from '../storage/schema';

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

export async function keysCreateCommand(
  config: Config,
  options: { project?: string; personal?: boolean; name: string },
) {
  const db = await open(config);
  try {
    const workspaceId = await ensureWorkspace(db);
    if (options.project) {
      const [project] = await db.orm
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, options.project), eq(projects.workspaceId, workspaceId)))
        .limit(1);
      if (!project) {
        process.stderr.write(`project ${options.project} was not found\n`);
        process.exitCode = 1;
        return;
      }
    }
    const kind = options.project ? 'project' : options.personal ? 'personal' : 'workspace';
    const { row, secret } = await createApiKey(db, {
      workspaceId,
      kind,
      projectId: options.project ?? null,
      name: options.name,
    });
    process.stderr.write(
      `created ${kind} key ${row.id}${options.project ? ` pinned to ${options.project}` : ''}; the secret is shown once:\n`,
    );
    process.stdout.write(`${secret}\n`);
  } finally {
    await db.close();
  }
}
