/**
 * The two reads every authenticated request makes: the key by its digest, and whether a
 * project belongs to a workspace. They were half the cost of a task read (see
 * docs/benchmarks.md), so they are prepared once per database and cached in the process.
 *
 * Only positive answers are cached. Projects are never deleted, so a project seen once stays
 * valid. A key is cached until it is revoked through this process, and at most for the
 * caller's bound (SVC_KEY_CACHE_MS): another process may revoke it. Without one, the bound is
 * {@link DEFAULT_KEY_CACHE_MS} on PostgreSQL and none on PGlite, whose data-dir lock makes this
 * the only process, so it sees every revocation.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from './database';
import { apiKeys, projects } from './schema';

export interface ActiveKey {
  id: string;
  kind: 'workspace' | 'project' | 'personal';
  workspaceId: string;
  projectId: string | null;
}

const MAX_ENTRIES = 10_000;

const prepareKeyLookup = (db: Database) =>
  db.orm
    .select({
      id: apiKeys.id,
      kind: apiKeys.kind,
      workspaceId: apiKeys.workspaceId,
      projectId: apiKeys.projectId,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.digest, sql.placeholder('digest')), isNull(apiKeys.revokedAt)))
    .limit(1)
    .prepare('svc_key_by_digest');

const prepareProjectLookup = (db: Database) =>
  db.orm
    .select({ id: projects.id })
    .from(projects)
    .where(
      and(eq(projects.id, sql.placeholder('id')), eq(projects.workspaceId, sql.placeholder('workspaceId'))),
    )
    .limit(1)
    .prepare('svc_project_in_workspace');

interface State {
  keys: Map<string, { key: ActiveKey; expiresAt: number }>;
  projects: Set<string>;
  keyByDigest: ReturnType<typeof prepareKeyLookup>;
  projectInWorkspace: ReturnType<typeof prepareProjectLookup>;
}

const states = new WeakMap<Database, State>();

function state(db: Database): State {
  let s = states.get(db);
  if (!s) {
    s = {
      keys: new Map(),
      projects: new Set(),
      keyByDigest: prepareKeyLookup(db),
      projectInWorkspace: prepareProjectLookup(db),
    };
    states.set(db, s);
  }
  return s;
}

/** How long another process's revocation may go unseen on PostgreSQL, by default. */
export const DEFAULT_KEY_CACHE_MS = 1_000;

function keyTtlMs(db: Database, configured: number | undefined): number {
  if (configured !== undefined) return configured;
  return db.kind === 'pglite' ? Number.POSITIVE_INFINITY : DEFAULT_KEY_CACHE_MS;
}

/**
 * The key with this digest if this process has it cached and the cache may still be trusted;
 * undefined when only the database can tell (callers then ration their reads).
 */
export function cachedActiveKey(db: Database, digest: string): ActiveKey | undefined {
  const cached = state(db).keys.get(digest);
  return cached && cached.expiresAt > Date.now() ? cached.key : undefined;
}

/**
 * The unrevoked key with this digest, or null. `cacheMs` bounds how long an answer is reused
 * (SVC_KEY_CACHE_MS; 0: never); undefined is the default for the database's kind.
 */
export async function findActiveKey(
  db: Database,
  digest: string,
  cacheMs?: number,
): Promise<ActiveKey | null> {
  const s = state(db);
  const ttl = keyTtlMs(db, cacheMs);
  const cached = s.keys.get(digest);
  if (cached && cached.expiresAt > Date.now()) return cached.key;
  const [row] = await s.keyByDigest.execute({ digest });
  if (!row || ttl <= 0) {
    s.keys.delete(digest);
    return row ?? null;
  }
  if (s.keys.size >= MAX_ENTRIES) s.keys.clear();
  s.keys.set(digest, { key: row, expiresAt: Date.now() + ttl });
  return row;
}

/** Revocation through this process takes effect at once. */
export function forgetKey(db: Database, keyId: string): void {
  const keys = state(db).keys;
  for (const [digest, cached] of keys) if (cached.key.id === keyId) keys.delete(digest);
}

export async function projectInWorkspace(
  db: Database,
  workspaceId: string,
  projectId: string,
): Promise<boolean> {
  const s = state(db);
  const cacheKey = `${workspaceId}\u0000${projectId}`;
  if (s.projects.has(cacheKey)) return true;
  const [row] = await s.projectInWorkspace.execute({ id: projectId, workspaceId });
  if (!row) return false;
  if (s.projects.size >= MAX_ENTRIES) s.projects.clear();
  s.projects.add(cacheKey);
  return true;
}
