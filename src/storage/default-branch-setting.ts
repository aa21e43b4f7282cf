/**
 * The default branch a local repository's project names in its settings
 * (`svc.repository.default_branch`), for the local code host, which has no database of its own.
 * Read on every call: a setting changed through the API applies to the next review and tick.
 */
import { and, eq } from 'drizzle-orm';
import { resolveProjectSettings } from '../core/settings';
import type { Database } from './database';
import { projects } from './schema';

export function projectDefaultBranch(
  db: Database,
  installationId: number,
): (fullName: string) => Promise<string | null> {
  return async (fullName) => {
    const [project] = await db.orm
      .select({ settings: projects.settings })
      .from(projects)
      .where(and(eq(projects.installationId, installationId), eq(projects.repoFullName, fullName)))
      .limit(1);
    return project ? resolveProjectSettings(project.settings)['svc.repository.default_branch'] : null;
  };
}
