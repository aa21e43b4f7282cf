/**
 * Idempotency-Key handling for acknowledgements: operations declared `acknowledgement`, whose
 * one write is a single statement (`ctx.acknowledge`, e.g. POST /reviews: the task and its run,
 * `Engine.enqueue`). The key's record, holding the answer, is the guard of that statement: the
 * task and run are written only when the record is, in the same implicit transaction, so the work
 * and its record commit together or not at all. There is no `in_progress` record to write, finish
 * or release (three commits in idempotency.ts), and nothing holds the key when a request fails
 * or its connection dies.
 *
 * Nothing is read before the work: when the guard finds the key taken (a retry, or a request
 * racing under the same key: PostgreSQL makes the insert wait for the first one to commit,
 * PGlite runs one statement at a time), the statement writes nothing and the recorded answer is
 * replayed, or the request is a conflict. A request refused (a 4xx) under a key that is already
 * recorded gets the key's answer too, so a changed body is `idempotency_conflict` as before.
 */
import { type SQL, sql } from 'drizzle-orm';
import { ApiError } from '../core/errors';
import type { Principal } from '../core/keys';
import type { Database } from '../storage/database';
import { IDEMPOTENCY_TTL_MS, type KeyedRequest, keyedFingerprint, type StoredResponse } from './idempotency';

/** The statement that records the key with `response`; returns one row when it did. */
export type KeyGuard = (response: StoredResponse) => SQL;

/** An acknowledgement's guarded write wrote nothing: another request holds the key. */
export class KeyTaken extends Error {}

const inProgress = (key: string) =>
  new ApiError(
    'operation_in_progress',
    `the request under Idempotency-Key "${key}" is still in progress; inspect the resource before retrying under a new key`,
  );

interface Recorded {
  request_hash: string;
  method: string;
  path: string;
  state: string;
  response_status: number | null;
  response_body: unknown;
  expired: boolean;
}

/**
 * The answer recorded under the key, or null when none binds it (an expired record is removed).
 * A different request under the key is `idempotency_conflict`; one still in progress (a record
 * of a non-acknowledgement operation under the same key) is `operation_in_progress`.
 */
async function recorded(
  db: Database,
  principal: Principal,
  key: string,
  fingerprint: string,
): Promise<StoredResponse | null> {
  const [existing] = await db.rows<Recorded>(sql`
    SELECT request_hash, method, path, state, response_status, response_body, expires_at < now() AS expired
    FROM idempotency_records WHERE holder = ${principal.keyId} AND key = ${key}`);
  if (!existing) return null;
  if (existing.expired) {
    await db.rows(sql`
      DELETE FROM idempotency_records WHERE holder = ${principal.keyId} AND key = ${key} AND expires_at < now()`);
    return null;
  }
  if (existing.request_hash !== fingerprint) {
    throw new ApiError(
      'idempotency_conflict',
      `Idempotency-Key "${key}" was already used with a different request (${existing.method} ${existing.path}); use a new key for a new request`,
    );
  }
  if (existing.state !== 'done') throw inProgress(key);
  return { status: existing.response_status ?? 200, body: existing.response_body };
}

export async function withIdempotentAcknowledgement(
  db: Database,
  principal: Principal,
  key: string,
  request: KeyedRequest,
  execute: (guard: KeyGuard) => Promise<StoredResponse>,
  attempt = 1,
): Promise<StoredResponse & { replayed: boolean }> {
  const fingerprint = keyedFingerprint(key, request);
  const record = (response: StoredResponse) => sql`
    INSERT INTO idempotency_records
      (holder, key, workspace_id, method, path, request_hash, state, response_status, response_body, expires_at)
    VALUES (${principal.keyId}, ${key}, ${principal.workspaceId}, ${request.method}, ${request.path}, ${fingerprint},
      'done', ${response.status}, ${JSON.stringify(response.body ?? null)}::jsonb,
      ${new Date(Date.now() + IDEMPOTENCY_TTL_MS).toISOString()}::timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING 1 AS recorded`;
  let guarded = false;
  try {
    const response = await execute((answer) => {
      guarded = true;
      return record(answer);
    });
    // An answer whose operation wrote through no guarded statement is recorded on its own.
    if (!guarded && (await db.rows(record(response))).length === 0) throw new KeyTaken();
    return { ...response, replayed: false };
  } catch (error) {
    if (!(error instanceof KeyTaken || error instanceof ApiError)) throw error;
    const first = await recorded(db, principal, key, fingerprint);
    if (first) return { ...first, replayed: true };
    if (!(error instanceof KeyTaken)) throw error;
    // The record that took the key is gone (it had expired): the request may run again, once.
    if (attempt > 1) throw inProgress(key);
    return withIdempotentAcknowledgement(db, principal, key, request, execute, attempt + 1);
  }
}
