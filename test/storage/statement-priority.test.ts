/**
 * On the embedded database, what a client waits on goes first: a background statement (the
 * worker's) starts only once no foreground work (a webhook acknowledgement) is in flight; a
 * foreground statement never waits for the background; with PostgreSQL nothing waits. Checked by
 * the order things happen in, on a real PGlite database, never by how long they took.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementPriority } from '../../src/storage/priority';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/** A promise and its resolve, to hold foreground work open until the test lets it go. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const turns = (n: number) =>
  Array.from({ length: n }).reduce<Promise<void>>(
    (p) => p.then(() => new Promise((resolve) => setImmediate(resolve))),
    Promise.resolve(),
  );

describe('statement priority', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
  });
  afterAll(() => testDb.close());

  it('starts a background statement only after the foreground work in flight', async () => {
    const { db } = testDb;
    const order: string[] = [];
    const held = gate();
    const foreground = db.priority.foreground(async () => {
      await db.rows(sql`SELECT 1`);
      order.push('foreground started');
      await held.opened;
      await db.rows(sql`SELECT 2`);
      order.push('foreground done');
    });
    await turns(3);
    const background = db.priority.inBackground(async () => {
      await db.rows(sql`SELECT 3`);
      order.push('background done');
    });
    await turns(20);
    expect(order).toEqual(['foreground started']);
    held.open();
    await Promise.all([foreground, background]);
    expect(order).toEqual(['foreground started', 'foreground done', 'background done']);
  });

  it('never makes foreground work or work of no priority wait', async () => {
    const { db } = testDb;
    const held = gate();
    const order: string[] = [];
    const foreground = db.priority.foreground(() => held.opened);
    await db.rows(sql`SELECT 1`);
    order.push('plain statement done');
    await db.priority.foreground(() => db.rows(sql`SELECT 2`));
    order.push('second foreground done');
    held.open();
    await foreground;
    expect(order).toEqual(['plain statement done', 'second foreground done']);
  });

  it('lets a background statement go after its longest wait, so the worker always progresses', async () => {
    const priority = new StatementPriority(true, 1);
    const held = gate();
    const foreground = priority.foreground(() => held.opened);
    await priority.inBackground(async () => {
      await priority.turn();
    });
    expect(priority.busy).toBe(1);
    held.open();
    await foreground;
    expect(priority.busy).toBe(0);
  });

  it('holds nothing back when every caller has its own connection (PostgreSQL)', async () => {
    const priority = new StatementPriority(false);
    const held = gate();
    const foreground = priority.foreground(() => held.opened);
    await expect(priority.inBackground(async () => priority.turn() === undefined)).resolves.toBe(true);
    held.open();
    await foreground;
  });
});
