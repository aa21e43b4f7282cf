/**
 * The CLI's file ledger: the same reconciliation as the service's database ledger (checked side by
 * side on one scripted history), dismissals by id, and a file that survives concurrent writers and
 * refuses to be overwritten when it cannot be read.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FileLedger,
  FindingLookupError,
  LedgerFileError,
  ledgerFileName,
} from '../../src/review/file-ledger';
import { recordInLedger } from '../../src/review/ledger';
import type { MergedFinding } from '../../src/review/merge';
import { findings } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

const found = (over: Partial<MergedFinding>): MergedFinding => ({
  severity: 'P0',
  path: 'src/a.ts',
  line: 1,
  endLine: 1,
  title: 'eval of input',
  body: 'why and fix',
  rule: 'security/eval',
  category: 'security',
  reviewer: 'security',
  reviewers: ['security'],
  ...over,
});

const tempLedger = (name = 'feature') =>
  new FileLedger(
    join(mkdtempSync(join(tmpdir(), 'svc-ledger-')), 'svc', 'ledger', ledgerFileName({ branch: name })),
    name,
  );

interface Step {
  name: string;
  files: Record<string, string>;
  found: MergedFinding[];
  /** A person's dismissal (by fingerprint) before the step's review. */
  dismissBefore?: (fingerprints: string[]) => string;
}

/** A branch's history as reviews see it: every transition the ledger knows. */
const HISTORY: Step[] = [
  {
    name: 'new findings, and identical code flagged twice in one file stays two',
    files: { 'src/a.ts': 'eval(input);\n', 'src/b.ts': 'eval(x);\neval(x);\n', 'src/d.ts': 'exec(cmd);\n' },
    found: [
      found({}),
      found({ path: 'src/b.ts', line: 1, endLine: 1 }),
      found({ path: 'src/b.ts', line: 2, endLine: 2 }),
      found({ path: 'src/d.ts', rule: 'security/exec' }),
    ],
  },
  {
    name: 'lines shift above a finding: the same finding, on its new line, with every reviewer',
    files: {
      'src/a.ts': '// header\n// more\neval(input);\n',
      'src/b.ts': 'eval(x);\neval(x);\n',
      'src/d.ts': 'exec(cmd);\n',
    },
    found: [
      found({ line: 3, endLine: 3, reviewers: ['security', 'general'] }),
      found({ path: 'src/b.ts', line: 1, endLine: 1 }),
      found({ path: 'src/b.ts', line: 2, endLine: 2 }),
      found({ path: 'src/d.ts', rule: 'security/exec' }),
    ],
  },
  {
    name: 'a person dismisses one; it stays dismissed when found again',
    files: {
      'src/a.ts': '// header\n// more\neval(input);\n',
      'src/b.ts': 'eval(x);\neval(x);\n',
      'src/d.ts': 'exec(cmd);\n',
    },
    found: [
      found({ line: 3, endLine: 3 }),
      found({ path: 'src/b.ts', line: 1, endLine: 1 }),
      found({ path: 'src/b.ts', line: 2, endLine: 2 }),
      found({ path: 'src/d.ts', rule: 'security/exec' }),
    ],
    dismissBefore: () => 'src/a.ts',
  },
  {
    name: 'code gone: fixed; not reported but still there: stays open; dismissed: untouched',
    files: {
      'src/a.ts': '// header\n// more\neval(input);\n',
      'src/b.ts': 'const ok = 1;\n',
      'src/d.ts': 'exec(cmd);\n',
    },
    found: [],
  },
  {
    name: 'fixed ones come back (reopened); an inline svc-ignore dismisses with its reason',
    files: {
      'src/a.ts': '// header\n// more\neval(input);\n',
      'src/b.ts': 'eval(x);\neval(x);\n',
      'src/c.ts': 'eval(y); // svc-ignore eval: trusted\n',
      'src/d.ts': 'exec(cmd);\n',
    },
    found: [
      found({ path: 'src/b.ts', line: 1, endLine: 1 }),
      found({ path: 'src/b.ts', line: 2, endLine: 2 }),
      found({ path: 'src/c.ts', dismissal: { reason: 'trusted' } }),
    ],
  },
];

const inspected = (files: Record<string, string>) => new Set(Object.keys(files));
const headText = (files: Record<string, string>) => (path: string) => files[path] ?? null;

describe.each(DATABASE_KINDS)('the file ledger and the %s ledger', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  });
  afterAll(() => t.close());

  it('record every step of one history alike: same findings, statuses, lines, reasons and counts', async () => {
    const file = tempLedger();
    const key = 'pr:parity';
    for (const [i, step] of HISTORY.entries()) {
      if (step.dismissBefore) {
        const path = step.dismissBefore([]);
        const target = (await file.findings()).find((f) => f.path === path);
        if (!target) throw new Error(`no finding on ${path}`);
        await file.dismiss(target.id, 'test fixture');
        await t.db.orm
          .update(findings)
          .set({ status: 'dismissed', dismissedReason: 'test fixture' })
          .where(eq(findings.fingerprint, target.fingerprint));
      }
      const db = await recordInLedger(
        t.db,
        {
          ledgerKey: key,
          workspaceId: 'ws',
          projectId: 'prj',
          pullRequestId: null,
          taskId: 'tsk',
          runId: `run_${i}`,
          headSha: `head${i}`,
        },
        step.found,
        headText(step.files),
        inspected(step.files),
      );
      const fromFile = await file.record(step.found, headText(step.files), inspected(step.files), `head${i}`);
      const counts = (o: typeof db | typeof fromFile) => ({
        reported: o.reported.map((f) => f.fingerprint),
        opened: o.opened,
        reopened: o.reopened,
        fixed: o.fixed,
        stillDismissed: o.stillDismissed,
        dismissedInline: o.dismissedInline,
      });
      expect(counts(fromFile), step.name).toEqual(counts(db));
      const state = (
        rows: {
          fingerprint: string;
          status: string;
          line: number;
          dismissedReason: string | null;
          reviewers: string[];
        }[],
      ) =>
        rows
          .map((r) => ({
            fp: r.fingerprint,
            status: r.status,
            line: r.line,
            reason: r.dismissedReason,
            reviewers: [...r.reviewers].sort(),
          }))
          .sort((a, b) => a.fp.localeCompare(b.fp));
      const rows = await t.db.orm.select().from(findings).where(eq(findings.ledgerKey, key));
      expect(state(await file.findings()), step.name).toEqual(state(rows));
    }
    // The history really went through every transition, so the comparison above covered them.
    const final = await file.findings();
    expect(final.map((f) => `${f.path}:${f.status}`).sort()).toEqual([
      'src/a.ts:dismissed',
      'src/b.ts:open',
      'src/b.ts:open',
      'src/c.ts:dismissed',
      'src/d.ts:open',
    ]);
    expect(final.find((f) => f.path === 'src/c.ts')).toMatchObject({
      dismissedReason: 'trusted',
      dismissedBy: 'inline',
    });
    expect(final.find((f) => f.path === 'src/a.ts')).toMatchObject({
      dismissedReason: 'test fixture',
      dismissedBy: 'cli',
    });
  });
});

describe('file ledger', () => {
  it('keeps one entry per defect over many re-runs', async () => {
    const ledger = tempLedger();
    const files = { 'src/a.ts': 'eval(input);\n' };
    for (let i = 0; i < 9; i++) await ledger.record([found({})], headText(files), inspected(files), `h${i}`);
    const all = await ledger.findings();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'open', commitSha: 'h8' });
  });

  it('dismisses and reopens by id prefix, refuses an unknown, ambiguous or non-dismissed one', async () => {
    const ledger = tempLedger();
    const files = { 'src/a.ts': 'eval(a);\neval(b);\n' };
    await ledger.record([found({}), found({ line: 2, endLine: 2 })], headText(files), inspected(files), 'h');
    const [first] = await ledger.findings();
    if (!first) throw new Error('no finding');
    const { after } = await ledger.dismiss(first.id.slice(0, 6), 'generated by a tool we trust');
    expect(after).toMatchObject({ status: 'dismissed', dismissedReason: 'generated by a tool we trust' });
    await expect(ledger.reopen(first.id)).resolves.toMatchObject({
      after: { status: 'open', dismissedReason: null },
    });
    await expect(ledger.reopen(first.id)).rejects.toThrow(/only a dismissed finding can be reopened/);
    await ledger.dismiss(first.id, 'generated by a tool we trust');
    await expect(ledger.dismiss(first.id, 'another reason')).rejects.toThrow(/already dismissed/);
    await ledger.reopen(first.id);
    await expect(ledger.dismiss('abcdef0123', 'x')).rejects.toThrow(FindingLookupError);
    await expect(ledger.dismiss('xyz', 'x')).rejects.toThrow(/not a finding id/);
    // Too short a prefix could name several findings one day: at least four digits.
    await expect(ledger.dismiss(first.id.slice(0, 3), 'x')).rejects.toThrow(/4 or more hex digits/);
  });

  it('loses no finding when several processes record at once', async () => {
    const ledger = tempLedger();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const files = { [`src/f${i}.ts`]: `eval(v${i});\n` };
        // Separate instances, as separate processes would hold.
        return new FileLedger(ledger.file, ledger.name).record(
          [found({ path: `src/f${i}.ts` })],
          headText(files),
          inspected(files),
          `h${i}`,
        );
      }),
    );
    expect((await ledger.findings()).map((f) => f.path).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `src/f${i}.ts`).sort(),
    );
    // Nothing left behind: no lock, no temporary file.
    expect(readdirSync(join(ledger.file, '..'))).toEqual(['feature.json']);
  });

  it('refuses to overwrite a ledger file it cannot read', async () => {
    const ledger = tempLedger();
    const files = { 'src/a.ts': 'eval(input);\n' };
    await ledger.record([found({})], headText(files), inspected(files), 'h');
    writeFileSync(ledger.file, '{"version": 1, "findings": [');
    await expect(ledger.record([], headText(files), inspected(files), 'h')).rejects.toThrow(LedgerFileError);
    expect(readFileSync(ledger.file, 'utf8')).toBe('{"version": 1, "findings": [');
  });

  it('names ledgers so a branch and a range never share a file', () => {
    expect(ledgerFileName({ branch: 'feature/login' })).toBe('feature%2Flogin.json');
    expect(ledgerFileName({ base: 'a'.repeat(40), head: 'b'.repeat(40) })).toBe(
      `${'a'.repeat(40)}..${'b'.repeat(40)}.json`,
    );
  });
});
