/**
 * Bearer-key authentication and project resolution. A pinned key sees exactly one project;
 * any other project id is reported as not found, never as forbidden, so ids do not leak.
 */
import { ApiError } from '../core/errors';
import { keyDigest, keyKindOf, type Principal } from '../core/keys';
import type { Database } from '../storage/database';
import { cachedActiveKey, findActiveKey, projectInWorkspace } from '../storage/lookups';
import type { LookupGate } from './lookup-gate';

/**
 * The principal of a bearer key. `keyCacheMs` is SVC_KEY_CACHE_MS: how long a key read from the
 * database may be reused by this process (undefined: the default for the database's kind).
 * `lookups`, when given, rations the database reads of keys that are not cached.
 */
export async function authenticate(
  db: Database,
  authorization: string | undefined,
  keyCacheMs?: number,
  lookups?: LookupGate,
): Promise<Principal> {
  const secret = bearerSecret(authorization);
  const digest = keyDigest(secret);
  const read = () => findActiveKey(db, digest, keyCacheMs);
  const key = cachedActiveKey(db, digest) ?? (lookups ? await lookups.run(read) : await read());
  if (!key) throw new ApiError('unauthenticated', 'invalid or revoked API key');
  return { keyId: key.id, kind: key.kind, workspaceId: key.workspaceId, pinnedProjectId: key.projectId };
}

/** The secret of a bearer Authorization header; refused (401) when missing or malformed, free of I/O. */
function bearerSecret(authorization: string | undefined): string {
  if (!authorization) {
    throw new ApiError('unauthenticated', 'missing Authorization header; send "Authorization: Bearer <key>"');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) {
    throw new ApiError('unauthenticated', 'malformed Authorization header; expected "Bearer <key>"');
  }
  const secret = match[1];
  if (!keyKindOf(secret)) throw new ApiError('unauthenticated', 'invalid API key');
  return secret;
}

/**
 * The project a project-scoped call acts on: the path's project id, else the `Project-ID`
 * header, else the pinned key's project. It must exist in the key's workspace and be the
 * pinned project when the key is pinned; otherwise 404.
 */
export async function resolveProject(
  db: Database,
  principal: Principal,
  requested: string | undefined,
): Promise<string> {
  const projectId = requested || principal.pinnedProjectId;
  if (!projectId) {
    throw new ApiError('project_required', 'this operation is project-scoped; send the Project-ID header');
  }
  if (principal.pinnedProjectId && principal.pinnedProjectId !== projectId) {
    throw new ApiError('not_found', `project ${projectId} was not found`);
  }
  if (!(await projectInWorkspace(db, principal.workspaceId, projectId))) {
    throw new ApiError('not_found', `project ${projectId} was not found`);
  }
  return projectId;
}
