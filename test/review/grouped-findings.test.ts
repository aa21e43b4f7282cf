/**
 * A finding standing for one idiom repeated in a file (reviewers/builtin/group.ts) in the ledger:
 * known by its path, rule and message, so a copy added (even above the first) or one of the
 * copies fixed leaves it the same open finding; it is fixed when every copy is gone. A row made
 * before, when each copy was a finding known by its code, is found again, not duplicated. An
 * inline `svc-ignore` dismisses it only when every copy carries one.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LineRange } from '../../src/core/review';
import { type HeadText, type LedgerScope, recordInLedger } from '../../src/review/ledger';
import { type LedgerEntry, reconcileLedger } from '../../src/review/ledger-reconcile';
import type { MergedFinding } from '../../src/review/merge';
import { markSuppressed } from '../../src/review/policy';
import { alsoAt } from '../../src/reviewers/builtin/group';
import type { Database } from '../../src/storage/database';
import { findings } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

const PATH = 'test/links.test.js';
const TITLE = '`url.parse()` is deprecated (DEP0169): use the WHATWG `URL` API';
const RULE = 'correctness/legacy-url-parse';

/** The file's text with a `url.parse` call on each of `copies` lines (1-based), others filler. */
function source(copies: number[], length = 12): string {
  return Array.from({ length }, (_, i) =>
    copies.includes(i + 1) ? `  expect(url.parse(u${i + 1}).host).toBe(h);` : `  step(${i + 1});`,
  ).join('\n');
}

/** The grouped finding the engine reports for `copies` (single copy: no locations). */
function grouped(copies: number[]): MergedFinding {
  const locations: LineRange[] = copies.map((l) => ({ start: l, end: l }));
  const [first] = copies as [number];
  return {
    severity: 'P2',
    path: PATH,
    line: first,
    endLine: first,
    title: TITLE,
    body: copies.length > 1 ? `why\n\n${alsoAt(locations)}` : 'why',
    rule: RULE,
    category: 'correctness',
    reviewer: 'correctness',
    reviewers: ['correctness'],
    identity: TITLE,
    ...(copies.length > 1 ? { locations } : {}),
  };
}

const head =
  (text: string): HeadText =>
  (path) =>
    path === PATH ? text : null;
const inspected = new Set([PATH]);

/** Runs the plan and applies it as a ledger would: the entries after this review. */
function review(existing: LedgerEntry[], found: MergedFinding[], text: string) {
  const plan = reconcileLedger(existing, found, head(text), inspected);
  const fixed = new Set(plan.fixed.map((e) => e.fingerprint));
  const after: LedgerEntry[] = existing.map((e) => {
    const seen = plan.seenAgain.find((s) => s.entry === e);
    if (seen) return { ...e, status: 'open', anchorText: seen.anchor ?? e.anchorText };
    return fixed.has(e.fingerprint) ? { ...e, status: 'fixed' } : e;
  });
  for (const f of plan.fresh)
    after.push({
      fingerprint: f.fingerprint,
      status: f.status,
      path: f.finding.path,
      anchorText: f.anchor,
      reviewers: f.finding.reviewers,
    });
  return { plan, after };
}

describe('a grouped idiom in the ledger', () => {
  const six = [3, 4, 5, 7, 8, 9];
  const first = review([], [grouped(six)], source(six));

  it('is one new finding', () => {
    expect(first.plan.fresh).toHaveLength(1);
    expect(first.after).toHaveLength(1);
  });

  it('stays the same finding when a seventh copy is added, below or above the first', () => {
    for (const seven of [
      [...six, 11],
      [1, ...six],
    ]) {
      const { plan, after } = review(first.after, [grouped(seven)], source(seven));
      expect({ fresh: plan.fresh.length, fixed: plan.fixed.length, seen: plan.seenAgain.length }).toEqual({
        fresh: 0,
        fixed: 0,
        seen: 1,
      });
      expect(after).toHaveLength(1);
      // Its anchor follows its first place.
      expect(after[0]?.anchorText).toBe(`expect(url.parse(u${seven[0]}).host).toBe(h);`);
    }
  });

  it('stays open when one copy of six is fixed, the first included, and is fixed when all are', () => {
    const five = six.slice(1);
    const one = review(first.after, [grouped(five)], source(five));
    expect({ fresh: one.plan.fresh.length, fixed: one.plan.fixed.length }).toEqual({ fresh: 0, fixed: 0 });
    expect(one.after.map((e) => e.status)).toEqual(['open']);
    // Then every copy goes: nothing reported, the anchor (its first place now) gone.
    const all = review(one.after, [], source([]));
    expect(all.plan.fixed).toHaveLength(1);
    expect(all.after.map((e) => e.status)).toEqual(['fixed']);
  });

  it('stays the same finding from one copy to two and back', () => {
    const single = review([], [grouped([5])], source([5]));
    const two = review(single.after, [grouped([2, 5])], source([2, 5]));
    expect({ fresh: two.plan.fresh.length, fixed: two.plan.fixed.length }).toEqual({ fresh: 0, fixed: 0 });
    const back = review(two.after, [grouped([2])], source([2]));
    expect({ fresh: back.plan.fresh.length, fixed: back.plan.fixed.length }).toEqual({ fresh: 0, fixed: 0 });
    expect(back.after).toHaveLength(1);
  });

  it('finds again a row a copy made when it was a finding of its own (known by its code)', () => {
    const text = source(six);
    const legacy = review(
      [],
      six.map((line) => ({ ...grouped([line]), identity: undefined })),
      text,
    );
    expect(legacy.after).toHaveLength(6);
    const now = review(legacy.after, [grouped(six)], text);
    expect(now.plan.fresh).toHaveLength(0);
    expect(now.plan.seenAgain).toHaveLength(1);
    // The row keeps the code its fingerprint was made of; the other five, their code still
    // there, stay open as they were (not fixed, not duplicated).
    expect(now.plan.seenAgain[0]?.anchor).toBeNull();
    expect(now.plan.fixed).toHaveLength(0);
    expect(now.after).toHaveLength(6);
  });
});

describe('an inline svc-ignore on a grouped idiom', () => {
  const text = (ignored: number[]) =>
    source([2, 4, 6])
      .split('\n')
      .map((line, i) =>
        ignored.includes(i + 1) ? `${line} // svc-ignore legacy-url-parse: pinned API` : line,
      )
      .join('\n');

  it('dismisses it only when every copy carries one', () => {
    const f = grouped([2, 4, 6]);
    expect(markSuppressed([f], () => text([2]))[0]?.dismissal).toBeUndefined();
    expect(markSuppressed([f], () => text([2, 4, 6]))[0]?.dismissal).toEqual({ reason: 'pinned API' });
  });
});

describe.each(DATABASE_KINDS)('a grouped idiom in the findings ledger on %s', (kind) => {
  let t: TestDatabase;
  let db: Database;
  const scope = (runId: string): LedgerScope => ({
    ledgerKey: 'pr:grouped',
    workspaceId: 'ws',
    projectId: 'prj',
    pullRequestId: 'pr_1',
    taskId: 'tsk_1',
    runId,
    headSha: 'abc',
  });
  const rows = () => db.orm.select().from(findings).where(eq(findings.ledgerKey, 'pr:grouped'));

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    db = t.db;
  });
  afterAll(() => t.close());

  it('keeps one row across a seventh copy and the first copy fixed, and fixes it when all are gone', async () => {
    const six = [3, 4, 5, 7, 8, 9];
    const a = await recordInLedger(db, scope('run_1'), [grouped(six)], head(source(six)), inspected);
    expect(a.opened).toBe(1);
    const seven = [1, ...six];
    const b = await recordInLedger(db, scope('run_2'), [grouped(seven)], head(source(seven)), inspected);
    expect({ opened: b.opened, fixed: b.fixed }).toEqual({ opened: 0, fixed: 0 });
    const rest = seven.slice(1);
    const c = await recordInLedger(db, scope('run_3'), [grouped(rest)], head(source(rest)), inspected);
    expect({ opened: c.opened, fixed: c.fixed }).toEqual({ opened: 0, fixed: 0 });
    const [row] = await rows();
    expect(row).toMatchObject({ status: 'open', line: 3, firstRunId: 'run_1', lastRunId: 'run_3' });
    expect(row?.anchorText).toBe('expect(url.parse(u3).host).toBe(h);');
    expect(row?.body).toContain('**Also at lines 4, 5, 7, 8 and 9**');
    const d = await recordInLedger(db, scope('run_4'), [], head(source([])), inspected);
    expect(d.fixed).toBe(1);
    expect(await rows()).toHaveLength(1);
  });
});
