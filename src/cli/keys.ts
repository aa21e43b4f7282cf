/**
 * `svc keys create | list | revoke`, two ways. With `--url` (or SVC_URL) and a workspace key
 * (`--api-key` or SVC_API_KEY) they go through a running service's API (`keys_create`,
 * `keys_list`, `keys_delete`), which is the way while `svc serve` holds the embedded data dir.
 * Without, they open the database directly: the admin path when nothing is running, or for
 * the first key of a PostgreSQL deployment.
 */
import { and, desc, eq } from 'drizzle-orm';
import type { Config } from '../config';
import { toKeyRecord } from '../operations/keys';
import { openDatabase } from '../storage/database';
import { createApiKey, ensureWorkspace, revokeApiKey } from '../storage/keys';
import { migrate } from '../storage/migrate';
import { apiKeys, projects } from '../storage/schema';
import { CliError, EXIT } from './exit-codes';

export interface KeysTarget {
  url?: string | undefined;
  apiKey?: string | undefined;
}

interface KeyLine {
  id: string;
  kind: string;
  name: string;
  project_id: string | null;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

type KeyKind = 'workspace' | 'project' | 'personal';

/** The database path acts with no key: its timeline events say so. */
const BY_CLI = { actor: null, via: 'svc keys (database)' };

/** Through the API, when asked to; else null (the caller uses the database). */
function apiOf(target: KeysTarget) {
  if (!target.url) return null;
  if (!target.apiKey)
    throw new CliError('with --url (SVC_URL), pass a workspace key: --api-key or SVC_API_KEY', EXIT.usage);
  const base = target.url.replace(/\/+$/, '');
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${target.apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new CliError(`svc at ${base} did not answer: ${(error as Error).message}`, EXIT.failed);
    }
    const json = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
    if (!response.ok)
      throw new CliError(
        `${method} ${path}: ${response.status} ${json?.error?.message ?? ''}`.trim(),
        EXIT.failed,
      );
    return json as T;
  };
}

/** The database, or why it cannot be opened here (a running svc holds it) and what to do. */
async function openForKeys(config: Config) {
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await migrate(db);
    return db;
  } catch (error) {
    const message = (error as Error).message;
    if (/is in use by/.test(message))
      throw new CliError(
        `${message}\nWhile it runs, manage keys through it: svc keys … --url http://127.0.0.1:8080 with SVC_API_KEY set to a workspace key.`,
        EXIT.failed,
      );
    throw error;
  }
}

function printCreated(key: { id: string; kind: string; project_id: string | null }, secret: string) {
  process.stderr.write(
    `created ${key.kind} key ${key.id}${key.project_id ? ` pinned to ${key.project_id}` : ''}; the secret is shown once:\n`,
  );
  process.stdout.write(`${secret}\n`);
}

export async function keysCreate(
  config: Config,
  target: KeysTarget,
  options: { project?: string; personal?: boolean; name: string },
) {
  const kind: KeyKind = options.project ? 'project' : options.personal ? 'personal' : 'workspace';
  const api = apiOf(target);
  if (api) {
    const created = await api<KeyLine & { secret: string }>('POST', '/keys', {
      name: options.name,
      kind,
      ...(options.project ? { project_id: options.project } : {}),
    });
    printCreated(created, created.secret);
    return;
  }
  const db = await openForKeys(config);
  try {
    const workspaceId = await ensureWorkspace(db);
    if (options.project) {
      const [project] = await db.orm
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, options.project), eq(projects.workspaceId, workspaceId)))
        .limit(1);
      if (!project) throw new CliError(`project ${options.project} was not found`, EXIT.failed);
    }
    const { row, secret } = await createApiKey(
      db,
      {
        workspaceId,
        kind,
        projectId: options.project ?? null,
        name: options.name,
      },
      BY_CLI,
    );
    printCreated({ id: row.id, kind: row.kind, project_id: row.projectId }, secret);
  } finally {
    await db.close();
  }
}

export async function keysList(config: Config, target: KeysTarget) {
  const api = apiOf(target);
  let keys: KeyLine[];
  if (api) {
    keys = [];
    let cursor: string | null = null;
    do {
      const query: string = `/keys?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: { data: KeyLine[]; next_cursor: string | null } = await api('GET', query);
      keys.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
  } else {
    const db = await openForKeys(config);
    try {
      const workspaceId = await ensureWorkspace(db);
      const rows = await db.orm
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.workspaceId, workspaceId))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
      keys = rows.map(toKeyRecord);
    } finally {
      await db.close();
    }
  }
  for (const k of keys) {
    const state = k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${k.last_used_at ?? 'never'}`;
    const pin = k.project_id ? ` ${k.project_id}` : '';
    process.stdout.write(
      `${k.id}\t${k.kind}${pin}\t${k.name}\t${k.hint}…\tcreated ${k.created_at}\t${state}\n`,
    );
  }
}

export async function keysRevoke(config: Config, target: KeysTarget, keyId: string) {
  const api = apiOf(target);
  if (api) {
    await api('DELETE', `/keys/${encodeURIComponent(keyId)}`);
  } else {
    const db = await openForKeys(config);
    try {
      const row = await revokeApiKey(db, await ensureWorkspace(db), keyId, BY_CLI);
      if (!row) throw new CliError(`key ${keyId} was not found or is already revoked`, EXIT.failed);
    } finally {
      await db.close();
    }
  }
  process.stderr.write(`revoked ${keyId}; requests with it now get 401\n`);
}
