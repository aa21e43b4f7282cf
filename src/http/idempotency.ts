/**
 * Idempotency-Key handling for writes. The first request under a key records "in progress";
 * its success is stored and replayed for 24 hours to the same key holder. A changed body is a
 * conflict; a request still in flight is `operation_in_progress`. A failed request releases the
 * key, so the client may retry it unchanged.
 */
import { createHash } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import stringify from 'safe-stable-stringify';
import { ApiError } from '../core/errors';
import type { Principal } from '../core/keys';
import type { Database } from '../storage/database';
import { idempotencyRecords } from '../storage/schema';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** The request's identity: method, path, the project it acts on (a header) and the canonical body. */
export function requestFingerprint(
  method: string,
  path: string,
  body: unknown,
  projectId: string | null = null,
): string {
  return createHash('sha256')
    .update(`${method} ${path}${projectId ? ` project=${projectId}` : ''}\n${stringify(body ?? null)}`)
    .digest('hex');
}

export async function withIdempotency(
  db: Database,
  principal: Principal,
  key: string,
  request: { method: string; path: string; body: unknown; projectId?: string | null },
  execute: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  const fingerprint = requestFingerprint(
    request.method,
    request.path,
    request.body,
    request.projectId ?? null,
  );
  const where = and(eq(idempotencyRecords.holder, principal.keyId), eq(idempotencyRecords.key, key));
  // An expired record no longer binds the key.
  await db.orm.delete(idempotencyRecords).where(and(where, lt(idempotencyRecords.expiresAt, new Date())));
  const inserted = await db.orm
    .insert(idempotencyRecords)
    .values({
      holder: principal.keyId,
      key,
      workspaceId: principal.workspaceId,
      method: request.method,
      path: request.path,
      requestHash: fingerprint,
      state: 'in_progress',
      expiresAt: new Date(Date.now() + IDEMPOTENCY_TTL_MS),
    })
    .onConflictDoNothing()
    .returning({ key: idempotencyRecords.key });

  if (inserted.length === 0) {
    const [existing] = await db.orm.select().from(idempotencyRecords).where(where).limit(1);
    if (!existing) {
      // Released between our insert and read by a failing first request: a retry is safe.
      return withIdempotency(db, principal, key, request, execute);
    }
    if (existing.requestHash !== fingerprint) {
      throw new ApiError(
        'idempotency_conflict',
        `Idempotency-Key "${key}" was already used with a different request (${existing.method} ${existing.path}); use a new key for a new request`,
      );
    }
    if (existing.state !== 'done') {
      throw new ApiError(
        'operation_in_progress',
        `the request under Idempotency-Key "${key}" is still in progress; inspect the resource before retrying under a new key`,
      );
    }
    return { status: existing.responseStatus ?? 200, body: existing.responseBody, replayed: true };
  }

  let response: StoredResponse;
  try {
    response = await execute();
  } catch (error) {
    // Nothing was done: release the key so the same request can be retried.
    await db.orm.delete(idempotencyRecords).where(where);
    throw error;
  }
  // The work is done; if recording its answer fails the key stays `in_progress` (409 on retry,
  // telling the client to inspect the resource) rather than letting a retry do the work twice.
  await db.orm
    .update(idempotencyRecords)
    .set({ state: 'done', responseStatus: response.status, responseBody: response.body })
    .where(where);
  return { ...response, replayed: false };
}
