/** Idempotency-Key: replay, conflict, in-progress, and release on failure. Both storage engines. */
import { count, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_IN_PROGRESS_MS, requestFingerprint, withIdempotency } from '../../src/http/idempotency';
import { isConnectionLost } from '../../src/storage/database';
import { idempotencyRecords, projects } from '../../src/storage/schema';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';
import { makeRepo, makeReposDir } from '../helpers/git';
import { ADMIN_URL } from '../helpers/paths';

describe.each(DATABASE_KINDS)('Idempotency-Key on %s', (kind) => {
  let t: TestApp;
  const body = (name: string) => ({
    name,
    repository: { full_name: 'acme/idem', installation_id: 1 },
    setup: true,
  });
  const post = (key: string, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: { ...bearer(t.workspaceKey), 'idempotency-key': key },
      payload: payload as Record<string, unknown>,
    });
  const projectCount = async () => (await t.services.db.orm.select({ n: count() }).from(projects))[0]?.n ?? 0;

  let reposDir: string;
  beforeAll(async () => {
    reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/idem', { 'README.md': '# idem\n' });
    t = await createTestApp({ kind, reposDir });
  });
  afterAll(() => t.close());

  it('replays the original acknowledgement for the same key and body, creating nothing new', async () => {
    const first = await post('k-1', body('idem'));
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('k-1', body('idem'));
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.json().setup.task.id).toBe(first.json().setup.task.id);
    expect(await projectCount()).toBe(1);
  });

  it('answers 409 idempotency_conflict for a changed body under the same key', async () => {
    const res = await post('k-1', body('renamed'));
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('idempotency_conflict');
    expect(await projectCount()).toBe(1);
  });

  it('answers 409 operation_in_progress while the first request under the key is unfinished', async () => {
    const payload = body('slow');
    // The state a first request is in between its start and its answer.
    const [key] = await t.services.db.orm.query.apiKeys.findMany({ limit: 1 });
    await t.services.db.orm.insert(idempotencyRecords).values({
      holder: key?.id ?? '',
      key: 'k-busy',
      workspaceId: t.workspaceId,
      method: 'POST',
      path: '/api/v1/projects',
      requestHash: requestFingerprint('POST', '/api/v1/projects', payload),
      state: 'in_progress',
      expiresAt: new Date(Date.now() + 60_000),
    });
    const res = await post('k-busy', payload);
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('operation_in_progress');
  });

  it('releases the key when the request fails, so the same request can be retried', async () => {
    const bad = { name: 'x', repository: { full_name: 'acme/missing', installation_id: 1 } };
    const first = await post('k-fail', bad);
    expect(first.statusCode).toBe(404);
    // The message says where svc looked for it.
    expect(first.json().error.message).toMatch(
      /^repository acme\/missing was not found on installation 1: repository acme\/missing is not under \/.+ \(SVC_REPOS_DIR\): no directory acme\/missing or acme\/missing\.git there$/,
    );
    const rows = await t.services.db.orm.select().from(idempotencyRecords);
    expect(rows.some((r) => r.key === 'k-fail')).toBe(false);
  });

  it('keeps keys per key holder: another key may use the same Idempotency-Key', async () => {
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'second' },
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { ...bearer(other.json().secret), 'idempotency-key': 'k-1' },
      payload: { name: 'third' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it("never replays one project's answer for another project under the same key", async () => {
    makeRepo(reposDir, 'acme/other', { 'x.md': '# x\n' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: { name: 'other', repository: { full_name: 'acme/other', installation_id: 1 } },
    });
    const projects = (
      await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: bearer(t.workspaceKey) })
    ).json().data;
    const [a, b] = projects.map((p: { id: string }) => p.id);
    const learn = (projectId: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/learnings',
        headers: { ...bearer(t.workspaceKey), 'project-id': projectId, 'idempotency-key': 'k-learn' },
        payload: { learning: 'Same words.', why: 'test' },
      });
    expect(created.statusCode).toBe(201);
    expect((await learn(a)).statusCode).toBe(201);
    const other = await learn(b);
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('idempotency_conflict');
  });

  it('rejects an Idempotency-Key that is not 1-255 visible characters', async () => {
    const res = await post('has space', body('idem'));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
  });
});

describe('Idempotency-Key when the database connection dies (PostgreSQL)', () => {
  let tdb: TestDatabase;
  let admin: pg.Client;
  let control: pg.Client;
  let name: string;
  const principal = {
    keyId: 'key_conn',
    kind: 'workspace' as const,
    workspaceId: 'wsp_conn',
    pinnedProjectId: null,
  };
  const request = { method: 'POST', path: '/api/v1/things', body: { a: 1 } };

  beforeAll(async () => {
    tdb = await createTestDatabase('postgres');
    name = new URL(tdb.url ?? '').pathname.slice(1);
    admin = new pg.Client({ connectionString: ADMIN_URL });
    control = new pg.Client({ connectionString: tdb.url });
    await Promise.all([admin.connect(), control.connect()]);
  });
  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await Promise.all([admin?.end().catch(() => {}), control?.end().catch(() => {})]);
    await tdb?.close();
  });

  it('releases a key whose request died with its connection, even while the database is still away', async () => {
    const first = withIdempotency(tdb.db, principal, 'k-conn', request, async () => {
      await tdb.db.rows(sql`SELECT pg_sleep(30)`);
      return { status: 201, body: { first: true } };
    });
    let held: { state: string; expires_at: Date } | undefined;
    for (let i = 0; i < 200 && !held; i++) {
      const { rows } = await control.query(
        "SELECT r.state, r.expires_at FROM idempotency_records r, pg_stat_activity a WHERE r.key = 'k-conn' AND a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.query ILIKE '%pg_sleep%' AND a.state = 'active'",
      );
      held = rows[0];
      if (!held) await new Promise((r) => setTimeout(r, 25));
    }
    // In progress, and held for minutes (not the 24 h an answer is kept) should its process die.
    expect(held?.state).toBe('in_progress');
    expect(held ? held.expires_at.getTime() - Date.now() : 0).toBeLessThanOrEqual(IDEMPOTENCY_IN_PROGRESS_MS);

    // What a restart does: every connection ends, and for a moment no new one is accepted.
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      await control.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      const error = await first.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isConnectionLost(error)).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }

    // Once the database is back the key is released: the same request under it runs (not 409).
    const deadline = Date.now() + 10_000;
    let again: Awaited<ReturnType<typeof withIdempotency>> | null = null;
    let last: unknown;
    while (!again && Date.now() < deadline) {
      again = await withIdempotency(tdb.db, principal, 'k-conn', request, async () => ({
        status: 201,
        body: { second: true },
      })).catch((e: unknown) => {
        last = e;
        return null;
      });
      if (!again) await new Promise((r) => setTimeout(r, 100));
    }
    expect(again, String(last)).toEqual({ status: 201, body: { second: true }, replayed: false });
    const replay = await withIdempotency(tdb.db, principal, 'k-conn', request, async () => ({
      status: 500,
      body: {},
    }));
    expect(replay).toEqual({ status: 201, body: { second: true }, replayed: true });
  });
});
