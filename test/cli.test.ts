/**
 * The `svc` command as a user runs it: a real process on a fresh embedded data directory.
 * serve prints a workspace key once (and none when its port is taken), SVC_BOOTSTRAP_KEY is
 * honoured, migrate and keys create work, and a second process on the same data directory is
 * refused.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asc, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database';
import { events } from '../src/storage/schema';
import { freePort } from './helpers/net';

const run = promisify(execFile);
const SVC = join(process.cwd(), 'bin', 'svc.mjs');
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function env(extra: Record<string, string>) {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  return { ...base, LOG_LEVEL: 'warn', ...extra };
}

/** Starts `svc serve` and resolves once it answers /healthz, with everything it wrote to stderr so far. */
async function serve(
  extra: Record<string, string>,
): Promise<{ port: number; child: ChildProcess; stderr: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [SVC, 'serve', '--port', String(port)], { env: env(extra) });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc serve exited ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { port, child, stderr: () => stderr };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`svc serve did not answer: ${stderr}`);
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/**
 * Each test starts two or three `svc` processes, and each first start on a fresh data directory
 * initialises an embedded database (~7 s alone, several times that on a loaded 2-core machine).
 * The limits below only stop a hung process; they measure nothing.
 */
const PROCESS_TEST_TIMEOUT_MS = 180_000;

describe('svc command', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('serve prints a workspace key once on first start, and never again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    const first = await serve({ SVC_DATA_DIR: dataDir });
    const key = /^(svc_ws_\S+)$/m.exec(first.stderr())?.[1];
    expect(key).toBeDefined();
    const res = await fetch(`http://127.0.0.1:${first.port}/api/v1/projects`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(await stop(first.child)).toBe(0);

    const second = await serve({ SVC_DATA_DIR: dataDir });
    expect(second.stderr()).not.toMatch(/svc_ws_/);
    const again = await fetch(`http://127.0.0.1:${second.port}/api/v1/projects`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(200);

    // The data directory is locked while the first process holds it.
    const refused = await run(process.execPath, [SVC, 'migrate'], {
      env: env({ SVC_DATA_DIR: dataDir }),
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/is in use by process \d+ on /);
    expect(await stop(second.child)).toBe(0);
  });

  it('fails by name on a port in use, and mints no key: the next start prints the first one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const clash = await run(process.execPath, [SVC, 'serve', '--port', String(port)], {
        env: env({ SVC_DATA_DIR: dataDir }),
      }).then(
        () => null,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(clash?.code).toBe(1);
      expect(clash?.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(`${clash?.stdout}${clash?.stderr}`).not.toMatch(/svc_ws_/);
    } finally {
      taken.close();
    }
    // The failed start minted nothing: the first start that holds its port shows the first key.
    const next = await serve({ SVC_DATA_DIR: dataDir });
    expect(next.stderr()).toMatch(/shown once[^\n]*\nsvc_ws_\S+/);
    expect(await stop(next.child)).toBe(0);
  });

  it('takes SVC_BOOTSTRAP_KEY as the first workspace key, and refuses one that is not a workspace key', async () => {
    const key = 'svc_ws_bootstrap-for-tests-0123456789';
    const started = await serve({
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')),
      SVC_BOOTSTRAP_KEY: key,
    });
    expect(started.stderr()).not.toMatch(/shown once/);
    const res = await fetch(`http://127.0.0.1:${started.port}/api/v1/keys`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const listed = (await res.json()) as { data: { name: string }[] };
    expect(listed.data[0]?.name).toMatch(/SVC_BOOTSTRAP_KEY/);
    await stop(started.child);

    const bad = await run(process.execPath, [SVC, 'serve', '--port', String(await freePort())], {
      env: env({ SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')), SVC_BOOTSTRAP_KEY: 'hunter2' }),
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stderr).toMatch(/SVC_BOOTSTRAP_KEY must be a workspace key/);
  });

  it('migrate applies migrations; keys create mints a key the service accepts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    const migrated = await run(process.execPath, [SVC, 'migrate'], { env: env({ SVC_DATA_DIR: dataDir }) });
    expect(migrated.stdout).toMatch(/migrations applied/);
    const created = await run(process.execPath, [SVC, 'keys', 'create', '--name', 'ci'], {
      env: env({ SVC_DATA_DIR: dataDir }),
    });
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^svc_ws_/);
    expect(created.stderr).toMatch(/shown once/);
    const started = await serve({ SVC_DATA_DIR: dataDir });
    // Keys existed already, so serve mints none.
    expect(started.stderr()).not.toMatch(/svc_ws_/);
    const res = await fetch(`http://127.0.0.1:${started.port}/api/v1/keys`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(res.status).toBe(200);
    await stop(started.child);

    const missing = await run(process.execPath, [SVC, 'keys', 'create', '--project', 'prj_nope'], {
      env: env({ SVC_DATA_DIR: dataDir }),
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(missing?.code).toBe(3);
    expect(missing?.stderr).toMatch(/prj_nope was not found/);
  });

  it('keys create, list and revoke work through a running svc; directly, they say how', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    const started = await serve({ SVC_DATA_DIR: dataDir });
    const admin = /^(svc_ws_\S+)$/m.exec(started.stderr())?.[1] as string;
    const url = `http://127.0.0.1:${started.port}`;
    const keys = (args: string[], extra: Record<string, string> = {}) =>
      run(process.execPath, [SVC, 'keys', ...args], { env: env({ SVC_DATA_DIR: dataDir, ...extra }) });
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );

    // The server holds the data directory: the direct path refuses and names the way through it.
    const direct = await failure(keys(['create', '--name', 'ci']));
    expect(direct?.code).toBe(3);
    expect(direct?.stderr).toMatch(/is in use by process \d+/);
    expect(direct?.stderr).toMatch(/--url http:\/\/127\.0\.0\.1:8080 with SVC_API_KEY/);

    const created = await keys(['create', '--name', 'ci', '--url', url], { SVC_API_KEY: admin });
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^svc_ws_/);
    const id = /created workspace key (key_\S+);/.exec(created.stderr)?.[1] as string;
    expect(id).toBeTruthy();
    const asNew = await fetch(`${url}/api/v1/keys`, { headers: { authorization: `Bearer ${secret}` } });
    expect(asNew.status).toBe(200);

    const listed = await keys(['list'], { SVC_URL: url, SVC_API_KEY: admin });
    const line = listed.stdout.split('\n').find((l) => l.startsWith(`${id}\t`));
    expect(line).toMatch(/\tworkspace\tci\t/);
    expect(listed.stdout).not.toContain(secret);

    await keys(['revoke', id], { SVC_URL: url, SVC_API_KEY: admin });
    const refused = await fetch(`${url}/api/v1/keys`, { headers: { authorization: `Bearer ${secret}` } });
    expect(refused.status).toBe(401);
    const noKey = await failure(keys(['list', '--url', url]));
    expect(noKey?.code).toBe(2);
    expect(noKey?.stderr).toMatch(/SVC_API_KEY/);
    expect(await stop(started.child)).toBe(0);

    // Stopped: the direct path sees the same keys, the revoked one marked.
    const offline = await keys(['list']);
    expect(offline.stdout.split('\n').find((l) => l.startsWith(`${id}\t`))).toMatch(/\trevoked /);

    // Every change is on the timeline, whichever way it was made: through the API as the
    // admin key, directly as `svc keys` with no key.
    const direct2 = await keys(['create', '--name', 'offline']);
    const offlineId = /created workspace key (key_\S+);/.exec(direct2.stderr)?.[1] as string;
    await keys(['revoke', offlineId]);
    const db = await openDatabase({ dataDir });
    try {
      const rows = await db.orm
        .select()
        .from(events)
        .where(eq(events.objectType, 'key'))
        .orderBy(asc(events.createdAt), asc(events.id));
      const changes = rows
        .filter((e) => e.objectId !== rows[0]?.objectId) // the first start's own key
        .map((e) => [e.objectId, e.kind, e.actor, (e.data.payload as { via?: string }).via ?? null]);
      const adminId = rows[0]?.objectId;
      expect(rows[0]).toMatchObject({ kind: 'created', actor: null });
      expect(changes).toEqual([
        [id, 'created', adminId, null],
        [id, 'revoked', adminId, null],
        [offlineId, 'created', null, 'svc keys (database)'],
        [offlineId, 'revoked', null, 'svc keys (database)'],
      ]);
    } finally {
      await db.close();
    }
  });
});
