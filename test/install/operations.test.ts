/**
 * The procedures docs/operations.md gives an operator, run as written: a PostgreSQL backup taken
 * with `pg_dump -Fc` and restored with `pg_restore` into a new database serves the same projects
 * to the same keys (nothing to migrate), and an embedded data directory copied while svc is
 * stopped opens as the original.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createServices } from '../../src/main';
import { type Database, openDatabase } from '../../src/storage/database';
import { bearer } from '../helpers/app';
import { createTestDatabase } from '../helpers/db';
import { makeRepo, makeReposDir } from '../helpers/git';
import { ADMIN_URL, urlFor } from '../helpers/paths';

const reposDir = makeReposDir();
makeRepo(reposDir, 'acme/ops', { 'README.md': '# ops\n' });
const config = loadConfig({ SVC_REPOS_DIR: reposDir, LOG_LEVEL: 'silent' });
const scratch = mkdtempSync(join(tmpdir(), 'svc-ops-'));
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

/** svc on `db`: the app, and the workspace key it minted (null when keys already existed). */
async function serveOn(db: Database): Promise<{ app: FastifyInstance; key: string | null }> {
  const started = await createServices(config, { db });
  const app = await buildApp(started.services, { logger: false });
  cleanups.push(() => app.close());
  return { app, key: started.bootstrap?.secret ?? null };
}

async function createProjectThrough(app: FastifyInstance, key: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/projects',
    headers: bearer(key),
    payload: { name: 'ops', repository: { full_name: 'acme/ops', installation_id: 1 } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().project.id;
}

const projectThrough = (app: FastifyInstance, key: string, id: string) =>
  app.inject({ method: 'GET', url: `/api/v1/projects/${id}`, headers: bearer(key) });

describe('backing up and restoring', () => {
  it('PostgreSQL: pg_dump -Fc, pg_restore into a new database, and the same key reads the same project', async () => {
    const source = await createTestDatabase('postgres');
    cleanups.push(() => source.close());
    const before = await serveOn(source.db);
    const key = before.key as string;
    const projectId = await createProjectThrough(before.app, key);

    const dump = join(scratch, 'svc.dump');
    execFileSync('pg_dump', ['-Fc', '--file', dump, source.url as string]);
    const restoredName = `svc_restore_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${restoredName}`);
    await admin.end();
    cleanups.push(async () => {
      const drop = new pg.Client({ connectionString: ADMIN_URL });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`);
      await drop.end();
    });
    execFileSync('pg_restore', ['--no-owner', '--dbname', urlFor(restoredName), dump]);

    const restored = await openDatabase({ databaseUrl: urlFor(restoredName) });
    cleanups.push(() => restored.close());
    const after = await serveOn(restored);
    // The restored database already has its keys: nothing new is minted.
    expect(after.key).toBeNull();
    const res = await projectThrough(after.app, key, projectId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: projectId, name: 'ops' });
  });

  it('embedded: a data directory copied while svc is stopped opens as the original', async () => {
    const dataDir = join(scratch, 'data');
    const original = await openDatabase({ dataDir });
    const first = await serveOn(original);
    const key = first.key as string;
    const projectId = await createProjectThrough(first.app, key);
    await first.app.close();
    await original.close();

    const copy = join(scratch, 'data-copy');
    cpSync(dataDir, copy, { recursive: true });
    const reopened = await openDatabase({ dataDir: copy });
    cleanups.push(() => reopened.close());
    const second = await serveOn(reopened);
    expect(second.key).toBeNull();
    expect((await projectThrough(second.app, key, projectId)).statusCode).toBe(200);
  }, 180_000); // a new data directory runs initdb: seconds alone, far more on a loaded machine
});
