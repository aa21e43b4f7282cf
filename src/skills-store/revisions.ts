/**
 * Immutable skill revisions: imported once, content-addressed, verified on every read. A revision
 * is never updated; importing the same bytes again finds the row that is there.
 */
import { and, eq } from 'drizzle-orm';
import { ApiError } from '../core/errors';
import { catalogSkill } from '../skills/catalog';
import type { Database } from '../storage/database';
import { skillRevisions } from '../storage/schema';
import { type SkillFiles, skillFilesHash, skillRevisionId } from './hash';

export type SkillRevisionRow = typeof skillRevisions.$inferSelect;

/** What an import needs to know of the catalog: the current hash of a catalog skill. */
export type CatalogLookup = (skillId: string) => Promise<{ id: string; hash: string } | null>;

/** The build's catalog (src/skills/). */
export const buildCatalog: CatalogLookup = async (skillId) => {
  const skill = await catalogSkill(skillId);
  return skill ? { id: skill.id, hash: skill.hash } : null;
};

export interface SkillImport {
  skill_id: string;
  files: SkillFiles;
  base_catalog_hash?: string | undefined;
}

export async function findSkillRevision(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<SkillRevisionRow | null> {
  const [row] = await db.orm
    .select()
    .from(skillRevisions)
    .where(and(eq(skillRevisions.workspaceId, workspaceId), eq(skillRevisions.id, id)))
    .limit(1);
  return row ?? null;
}

/**
 * Stores the revision, or finds the one these bytes already are. `created` is false when the
 * bytes were imported before (the caller answers 200 instead of 201).
 */
export async function importSkillRevision(
  db: Database,
  workspaceId: string,
  input: SkillImport,
  catalog: CatalogLookup = buildCatalog,
): Promise<{ row: SkillRevisionRow; created: boolean }> {
  const base = input.base_catalog_hash ?? null;
  if (base !== null) {
    const current = await catalog(input.skill_id);
    if (!current) {
      throw new ApiError(
        'not_found',
        `skill ${input.skill_id} is not in the catalog, so base_catalog_hash cannot name a version of it; omit base_catalog_hash for a skill of your own`,
      );
    }
    if (current.hash !== base) {
      throw new ApiError(
        'conflict',
        `base_catalog_hash ${base} is not the current catalog skill ${input.skill_id} (hash ${current.hash}); rebase the override on the current catalog skill and import it against that hash`,
        { skill_id: input.skill_id, base_catalog_hash: base, current_catalog_hash: current.hash },
      );
    }
  }
  const hash = skillFilesHash(input.files);
  const id = skillRevisionId(workspaceId, hash);
  const inserted = await db.orm
    .insert(skillRevisions)
    .values({ id, workspaceId, skillId: input.skill_id, hash, baseCatalogHash: base, files: input.files })
    .onConflictDoNothing()
    .returning();
  if (inserted[0]) return { row: inserted[0], created: true };

  const existing = await findSkillRevision(db, workspaceId, id);
  if (!existing) throw new Error(`skill revision ${id} neither inserted nor found`);
  if (existing.skillId !== input.skill_id || existing.baseCatalogHash !== base) {
    // The same bytes are one revision; it cannot also be another skill's, or rest on another base.
    throw new ApiError(
      'conflict',
      `these files are already revision ${id} of skill ${existing.skillId}` +
        (existing.baseCatalogHash
          ? ` on catalog base ${existing.baseCatalogHash}`
          : ' with no catalog base') +
        '; a revision is immutable, so change the files to import them as another revision',
      {
        revision_id: id,
        skill_id: existing.skillId,
        base_catalog_hash: existing.baseCatalogHash,
      },
    );
  }
  return { row: existing, created: false };
}

/**
 * A stored revision checked against its own bytes: the hash recomputed from the files it holds
 * must equal the hash recorded at import, and that hash must be the one its id was made from.
 */
export function verifySkillRevision(row: SkillRevisionRow): {
  verified: boolean;
  computedHash: string | null;
} {
  // Bytes changed behind the API's back may not even be a path → text map any more.
  const files: unknown = row.files;
  const wellFormed =
    typeof files === 'object' &&
    files !== null &&
    !Array.isArray(files) &&
    Object.values(files).every((v) => typeof v === 'string');
  if (!wellFormed) return { verified: false, computedHash: null };
  const computedHash = skillFilesHash(row.files);
  const verified = computedHash === row.hash && skillRevisionId(row.workspaceId, row.hash) === row.id;
  return { verified, computedHash };
}
