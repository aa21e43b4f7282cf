/**
 * The task read is cached with the embedded database and never served stale: any write (through
 * the ORM, raw SQL or a transaction) invalidates it. PostgreSQL, where other processes write, is
 * never cached.
 */
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { Engine } from '../../src/engine/engine';
import { runs } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

describe.each(DATABASE_KINDS)('task read cache on %s', (kind) => {
  let t: TestDatabase;
  let engine: Engine;
  let taskId: string;

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    engine = new Engine(t.db, loadConfig({}).engine, {}, pino({ level: 'silent' }));
    await t.db.rows(sql`INSERT INTO workspaces (id, name) VALUES ('ws_c', 'c')`);
    await t.db.rows(
      sql`INSERT INTO projects (id, workspace_id, name, repo_full_name, installation_id) VALUES ('prj_c', 'ws_c', 'c', 'a/b', 1)`,
    );
    taskId = (
      await engine.createTask({
        workspaceId: 'ws_c',
        projectId: 'prj_c',
        kind: 'diagnostic',
        title: 't',
        input: {},
      })
    ).task.id;
  });
  afterAll(() => t.close());

  it('says whether it can cache at all', () => {
    expect(t.db.writeGeneration() === null).toBe(kind === 'postgres');
  });

  it('sees every kind of write at once', async () => {
    const read = () => engine.getTaskWithLatestRun('ws_c', 'prj_c', taskId);
    expect((await read()).run?.status).toBe('pending');
    expect((await read()).run?.status).toBe('pending');
    await t.db.orm.update(runs).set({ statusText: 'orm write' }).where(eq(runs.taskId, taskId));
    expect((await read()).run?.statusText).toBe('orm write');
    await t.db.rows(sql`UPDATE runs SET status_text = 'raw write' WHERE task_id = ${taskId}`);
    expect((await read()).run?.statusText).toBe('raw write');
    await t.db.orm.transaction(async (tx) => {
      await tx.update(runs).set({ statusText: 'in a transaction' }).where(eq(runs.taskId, taskId));
    });
    expect((await read()).run?.statusText).toBe('in a transaction');
    // A write that starts like a read: WITH … (INSERT … SELECT …) SELECT ….
    await t.db.rows(
      sql`WITH w AS (UPDATE runs SET status_text = 'with a write' WHERE task_id = ${taskId} RETURNING id) SELECT id FROM w`,
    );
    expect((await read()).run?.statusText).toBe('with a write');
    await engine.cancel(taskId);
    expect((await read()).run?.status).toBe('canceled');
  });

  it('never answers for another project', async () => {
    await expect(engine.getTaskWithLatestRun('ws_c', 'prj_other', taskId)).rejects.toThrow(/not found/);
  });
});
