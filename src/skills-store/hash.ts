/**
 * The one content hash of a skill's files, for catalog skills and imported revisions alike:
 * SHA-256 over the files in sorted path order, each contributing `path \0 byteLength \0 bytes`
 * (`skillContentHash` in src/skills/catalog.ts). The length prefix makes the encoding
 * unambiguous, and using the catalog's definition means an unchanged catalog skill imported as a
 * revision hashes exactly like the catalog skill, so provenance hashes compare across both.
 */
import { createHash } from 'node:crypto';
import { skillContentHash } from '../skills/catalog';

/** Path → UTF-8 content, as a revision stores its files. */
export type SkillFiles = Record<string, string>;

export function skillFilesHash(files: SkillFiles): string {
  return skillContentHash(
    Object.entries(files).map(([path, content]) => ({ path, bytes: Buffer.from(content, 'utf8') })),
  );
}

/**
 * The revision id for a hash in a workspace: `skr_` and 24 hex characters. Content-addressed
 * within the workspace (the same bytes always get the same id there); the workspace is mixed in
 * because ids are global keys and two workspaces may import the same bytes without seeing each
 * other's records.
 */
export function skillRevisionId(workspaceId: string, hash: string): string {
  const digest = createHash('sha256').update(`${workspaceId}\u0000${hash}`).digest('hex');
  return `skr_${digest.slice(0, 24)}`;
}
