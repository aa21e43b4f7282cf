/**
 * Idempotency-Key handling for writes. The first request under a key records "in progress";
 * its success is stored and replayed for 24 hours to the same key holder. A changed body is a
 * conflict; a request still in flight is `operation_in_progress`. A failed request releases the
 * key, so the client may retry it unchanged — also when it failed because the database went
 * away: the release (and the recording of a success) is retried in the background until the
 * database is back, and a key whose request never came back (its process died) is free again
 * after IDEMPOTENCY_IN_PROGRESS_MS.
 */
import { createHash } from 'node:crypto';
import { and, eq, lt, type SQL } from 'drizzle-orm';
import stringify from 'safe-stable-stringify';
import { ApiError } from '../core/errors';
import type { Principal } from '../core/keys';
import { type Database, isConnectionLost } from '../storage/database';
import { idempotencyRecords } from '../storage/schema';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a first request holds its key `in_progress`. Requests answer in seconds (the work
 * itself runs as tasks); a record still in progress after this is one whose request died with
 * its process, and no longer binds the key.
 */
export const IDEMPOTENCY_IN_PROGRESS_MS = 10 * 60 * 1000;
/** How long a release or a success that could not be written is retried while the database is away. */
const WRITE_RETRY_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** What an idempotent request is recognised by when its key is used again. */
export interface KeyedRequest {
  method: string;
  path: string;
  body: unknown;
  projectId?: string | null;
}

/** The request's fingerprint, once its Idempotency-Key is checked (400 for a key outside the grammar). */
export function keyedFingerprint(key: string, request: KeyedRequest): string {
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  return requestFingerprint(request.method, request.path, request.body, request.projectId ?? null);
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
  request: KeyedRequest,
  execute: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  const fingerprint = keyedFingerprint(key, request);
  const where = and(eq(idempotencyRecords.holder, principal.keyId), eq(idempotencyRecords.key, key)) as SQL;
  // Identifies this request's own record: a later request may hold the key once ours expired.
  const holdUntil = new Date(Date.now() + IDEMPOTENCY_IN_PROGRESS_MS);
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
      expiresAt: holdUntil,
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

  const ours = and(
    where,
    eq(idempotencyRecords.state, 'in_progress'),
    eq(idempotencyRecords.expiresAt, holdUntil),
  ) as SQL;
  let response: StoredResponse;
  try {
    response = await execute();
  } catch (error) {
    // Nothing was done: release the key so the same request can be retried. (Should even that
    // fail, the key is free again once its in-progress hold expires.)
    await persist(() => db.orm.delete(idempotencyRecords).where(ours)).catch(() => {});
    throw error;
  }
  // The work is done: its answer is recorded and replayed. If the database is away right now
  // the key stays `in_progress` (409 on a retry, telling the client to inspect the resource)
  // until the answer is written, rather than letting a retry do the work twice.
  await persist(() =>
    db.orm
      .update(idempotencyRecords)
      .set({
        state: 'done',
        responseStatus: response.status,
        responseBody: response.body,
        expiresAt: new Date(Date.now() + IDEMPOTENCY_TTL_MS),
      })
      .where(ours),
  );
  return { ...response, replayed: false };
}

/**
 * Runs a write of the key's record once; when the connection to the database is lost, keeps
 * retrying it in the background (backoff to 5 s, for up to WRITE_RETRY_MS) instead of failing
 * the request over its bookkeeping. Any other error fails the request as before.
 */
async function persist(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isConnectionLost(error)) throw error;
    const deadline = Date.now() + WRITE_RETRY_MS;
    const retry = (delay: number) => {
      setTimeout(() => {
        write().catch((e: unknown) => {
          if (isConnectionLost(e) && Date.now() < deadline) retry(Math.min(delay * 2, 5_000));
        });
      }, delay).unref();
    };
    retry(250);
  }
}
