/** Workspaces and API keys: minting, bootstrap and revocation. Secrets are returned once, never stored. */
import { and, count, eq, isNull } from 'drizzle-orm';
import { type KeyKind, keyDigest, keyKindOf, mintKeySecret } from '../core/keys';
import type { Database } from './database';
import { newId } from './ids';
import { forgetKey } from './lookups';
import { appendObjectEvent, type Tx } from './object-events';
import { apiKeys, workspaces } from './schema';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * Who changed a key, for its timeline event: the key that asked (`actor`), or null for svc
 * itself; `via` names a path that had no key to act as (`svc keys` on the database).
 */
export interface KeyChangeBy {
  actor: string | null;
  via?: string;
}

/**
 * A key's change on the timeline, in the change's transaction, whichever path made it (API,
 * `svc keys` on the database, the first start's key): a pinned key's under its project, others
 * workspace-wide.
 */
function recordKeyChange(
  tx: Tx,
  key: ApiKeyRow,
  kind: 'created' | 'revoked',
  before: Record<string, unknown> | null,
  after: Record<string, unknown>,
  by: KeyChangeBy,
) {
  return appendObjectEvent(tx, {
    workspaceId: key.workspaceId,
    projectId: key.projectId,
    objectType: 'key',
    objectId: key.id,
    kind,
    payload: { before, after, ...(by.via ? { via: by.via } : {}) },
    actor: by.actor,
  });
}

export async function createApiKey(
  db: Database,
  input: { workspaceId: string; kind: KeyKind; projectId?: string | null; name: string; secret?: string },
  by: KeyChangeBy,
): Promise<{ row: ApiKeyRow; secret: string }> {
  const secret = input.secret ?? mintKeySecret(input.kind);
  const row = await db.orm.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(apiKeys)
      .values({
        id: newId('key'),
        workspaceId: input.workspaceId,
        kind: input.kind,
        projectId: input.projectId ?? null,
        name: input.name,
        digest: keyDigest(secret),
        hint: `${secret.slice(0, secret.indexOf('_', 4) + 5)}…`,
      })
      .returning();
    if (!inserted) throw new Error('inserting the API key returned no row');
    const after = {
      kind: inserted.kind,
      name: inserted.name,
      project_id: inserted.projectId,
      hint: inserted.hint,
    };
    await recordKeyChange(tx, inserted, 'created', null, after, by);
    return inserted;
  });
  return { row, secret };
}

export async function revokeApiKey(
  db: Database,
  workspaceId: string,
  keyId: string,
  by: KeyChangeBy,
): Promise<ApiKeyRow | null> {
  const row = await db.orm.transaction(async (tx) => {
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)))
      .returning();
    if (revoked) {
      const after = { revoked_at: revoked.revokedAt?.toISOString() ?? null };
      await recordKeyChange(tx, revoked, 'revoked', { revoked_at: null }, after, by);
    }
    return revoked ?? null;
  });
  if (row) forgetKey(db, row.id);
  return row;
}

/** The workspace this installation serves; created on first start. */
export async function ensureWorkspace(db: Database): Promise<string> {
  const [existing] = await db.orm
    .select({ id: workspaces.id })
    .from(workspaces)
    .orderBy(workspaces.createdAt)
    .limit(1);
  if (existing) return existing.id;
  const id = newId('workspace');
  await db.orm.insert(workspaces).values({ id, name: 'default' }).onConflictDoNothing();
  const [first] = await db.orm
    .select({ id: workspaces.id })
    .from(workspaces)
    .orderBy(workspaces.createdAt)
    .limit(1);
  return first?.id ?? id;
}

/**
 * When the database has no key at all, the first workspace key is SVC_BOOTSTRAP_KEY if given,
 * else a freshly minted one that the caller prints once. Returns the new secret, or null when
 * keys already exist.
 */
export async function bootstrapKey(
  db: Database,
  workspaceId: string,
  configured: string | undefined,
): Promise<{ secret: string; minted: boolean } | null> {
  if (configured !== undefined && keyKindOf(configured) !== 'workspace') {
    throw new Error(
      'SVC_BOOTSTRAP_KEY must be a workspace key: "svc_ws_" followed by at least 16 characters',
    );
  }
  if (configured !== undefined && configured.length < 'svc_ws_'.length + 16) {
    throw new Error(
      'SVC_BOOTSTRAP_KEY is too short: use "svc_ws_" followed by at least 16 random characters',
    );
  }
  const [row] = await db.orm.select({ n: count() }).from(apiKeys);
  if ((row?.n ?? 0) > 0) return null;
  const { secret } = await createApiKey(
    db,
    {
      workspaceId,
      kind: 'workspace',
      name: configured ? 'bootstrap (SVC_BOOTSTRAP_KEY)' : 'bootstrap',
      ...(configured ? { secret: configured } : {}),
    },
    { actor: null },
  );
  return { secret, minted: configured === undefined };
}
