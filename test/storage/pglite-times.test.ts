/**
 * The embedded database reads dates and times the way drizzle expects whichever way a query
 * goes (the ORM, raw SQL, inside a transaction): svc gives PGlite drizzle's text parsers once
 * instead of with every query (src/storage/database.ts, keepTimesAsText), which must not change
 * a single value.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/storage/database';
import { migrate } from '../../src/storage/migrate';
import { workspaces } from '../../src/storage/schema';

describe('times on the embedded database', () => {
  let db: Database;
  const at = new Date('2026-01-02T03:04:05.678Z');

  beforeAll(async () => {
    db = await openDatabase({ dataDir: 'memory://' });
    await migrate(db);
    await db.orm.insert(workspaces).values({ id: 'ws_t', name: 't', createdAt: at });
  });
  afterAll(() => db.close());

  it('reads a timestamp as the same Date through the ORM, in and out of a transaction', async () => {
    const [row] = await db.orm.select().from(workspaces).where(eq(workspaces.id, 'ws_t'));
    expect(row?.createdAt).toEqual(at);
    const inTx = await db.orm.transaction(async (tx) =>
      tx.select().from(workspaces).where(eq(workspaces.id, 'ws_t')),
    );
    expect(inTx[0]?.createdAt).toEqual(at);
  });

  it('leaves times, dates and intervals as text on raw SQL, as drizzle asks', async () => {
    const [row] = await db.rows<Record<string, unknown>>(sql`
      SELECT created_at, created_at::date AS day, interval '90 minutes' AS span, ARRAY[created_at] AS list
      FROM workspaces WHERE id = 'ws_t'`);
    expect(typeof row?.created_at).toBe('string');
    expect(new Date(String(row?.created_at))).toEqual(at);
    expect(row?.day).toBe('2026-01-02');
    expect(row?.span).toBe('01:30:00');
    expect(typeof row?.list).toBe('string');
  });
});
