/** The ledger across re-runs, on both storage engines. */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HeadText, type LedgerScope, recordInLedger } from '../../src/review/ledger';
import type { MergedFinding } from '../../src/review/merge';
import type { Database } from '../../src/storage/database';
import { findings } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

const found = (over: Partial<MergedFinding>): MergedFinding => ({
  severity: 'P0',
  path: 'src/a.ts',
  line: 2,
  endLine: 2,
  title: 'eval of input',
  body: 'why and fix',
  rule: 'security/eval',
  category: 'security',
  reviewer: 'security',
  reviewers: ['security'],
  ...over,
});

describe.each(DATABASE_KINDS)('findings ledger on %s', (kind) => {
  let t: TestDatabase;
  let db: Database;
  const scope = (runId: string, ledgerKey = 'pr:1'): LedgerScope => ({
    ledgerKey,
    workspaceId: 'ws',
    projectId: 'prj',
    pullRequestId: 'pr_1',
    taskId: 'tsk_1',
    runId,
    headSha: 'abc',
  });
  const text =
    (files: Record<string, string>): HeadText =>
    (path) =>
      files[path] ?? null;
  const rows = (ledgerKey = 'pr:1') =>
    db.orm.select().from(findings).where(eq(findings.ledgerKey, ledgerKey));

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    db = t.db;
  });
  afterAll(() => t.close());

  it('opens new findings and does not duplicate them on a re-run, even when lines shift', async () => {
    const v1 = { 'src/a.ts': 'const a = 1;\neval(input);\n' };
    const first = await recordInLedger(db, scope('run_1'), [found({})], text(v1), new Set(['src/a.ts']));
    expect(first.opened).toBe(1);
    // Two lines added above: the same defect, now on line 4.
    const v2 = { 'src/a.ts': '// header\n// more\nconst a = 1;\neval(input);\n' };
    const second = await recordInLedger(
      db,
      scope('run_2'),
      [found({ line: 4, endLine: 4 })],
      text(v2),
      new Set(['src/a.ts']),
    );
    expect(second.opened).toBe(0);
    const all = await rows();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'open', line: 4, firstRunId: 'run_1', lastRunId: 'run_2' });
  });

  it('keeps two identical defects in one file as two findings', async () => {
    const v = { 'src/b.ts': 'eval(x);\neval(x);\n' };
    await recordInLedger(
      db,
      scope('run_3', 'pr:2'),
      [found({ path: 'src/b.ts', line: 1, endLine: 1 }), found({ path: 'src/b.ts', line: 2, endLine: 2 })],
      text(v),
      new Set(['src/b.ts']),
    );
    expect(await rows('pr:2')).toHaveLength(2);
  });

  it('marks a finding fixed when its code is gone and it was not found again', async () => {
    const fixed = { 'src/a.ts': '// header\n// more\nconst a = 1;\nrun(input);\n' };
    const outcome = await recordInLedger(db, scope('run_4'), [], text(fixed), new Set(['src/a.ts']));
    expect(outcome.fixed).toBe(1);
    expect((await rows())[0]).toMatchObject({ status: 'fixed', fixedRunId: 'run_4' });
  });

  it('keeps a finding open when its code is still there but the reviewer did not report it this time', async () => {
    const v = { 'src/c.ts': 'eval(y);\n' };
    await recordInLedger(
      db,
      scope('run_5', 'pr:3'),
      [found({ path: 'src/c.ts', line: 1, endLine: 1 })],
      text(v),
      new Set(['src/c.ts']),
    );
    const outcome = await recordInLedger(db, scope('run_6', 'pr:3'), [], text(v), new Set(['src/c.ts']));
    expect(outcome.fixed).toBe(0);
    expect((await rows('pr:3'))[0]?.status).toBe('open');
  });

  it('keeps a dismissed finding dismissed when it is found again', async () => {
    const v = { 'src/d.ts': 'eval(z);\n' };
    await recordInLedger(
      db,
      scope('run_7', 'pr:4'),
      [found({ path: 'src/d.ts', line: 1, endLine: 1 })],
      text(v),
      new Set(['src/d.ts']),
    );
    await db.orm
      .update(findings)
      .set({ status: 'dismissed', dismissedReason: 'test fixture' })
      .where(eq(findings.ledgerKey, 'pr:4'));
    const outcome = await recordInLedger(
      db,
      scope('run_8', 'pr:4'),
      [found({ path: 'src/d.ts', line: 1, endLine: 1 })],
      text(v),
      new Set(['src/d.ts']),
    );
    expect(outcome.stillDismissed).toBe(1);
    expect(await rows('pr:4')).toHaveLength(1);
    expect((await rows('pr:4'))[0]).toMatchObject({ status: 'dismissed', dismissedReason: 'test fixture' });
  });

  it('reopens a fixed finding that comes back', async () => {
    const back = { 'src/a.ts': 'eval(input);\n' };
    const outcome = await recordInLedger(
      db,
      scope('run_9'),
      [found({ line: 1, endLine: 1 })],
      text(back),
      new Set(['src/a.ts']),
    );
    expect(outcome.reopened).toBe(1);
    expect(await rows()).toHaveLength(1);
    expect((await rows())[0]).toMatchObject({ status: 'open', fixedAt: null });
  });
});
