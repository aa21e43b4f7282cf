/**
 * A big merge never stops the server answering (issue 13, point 2): planning gives the event loop
 * a turn every few hundred findings, the ledger is written in short batches with a turn between
 * any two, batching changes nothing in the ledger, a merge stopped between batches and run again
 * converges to the ledger the whole merge writes, and a person's disposition waits for a merge
 * rather than landing between its batches.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCooperatively, SLICE } from '../../src/core/cooperative';
import type { FindingDraft } from '../../src/core/review';
import { applyDisposition } from '../../src/review/disposition';
import { type HeadText, type LedgerOutcome, type LedgerScope, recordInLedger } from '../../src/review/ledger';
import { reconcileSteps } from '../../src/review/ledger-reconcile';
import {
  canonicalCategory,
  type MergedFinding,
  mergeFindings,
  mergeFindingsCooperatively,
} from '../../src/review/merge';
import type { Database } from '../../src/storage/database';
import { findings, runFindings } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';
import { turnsDuring } from '../helpers/event-loop';

/** `files` files of `perFile` flagged lines each, and one finding per line (two rules alternate). */
function bigChange(files: number, perFile: number, variant = '') {
  const text: Record<string, string> = {};
  const found: MergedFinding[] = [];
  for (let f = 0; f < files; f++) {
    const path = `src/pkg${f}/module${f}.ts`;
    const lines: string[] = [];
    for (let i = 1; i <= perFile; i++) {
      lines.push(i % 2 ? `  debugger; // ${variant}step ${i}` : `  const h${i} = md5(input${i});`);
      found.push({
        severity: i % 7 === 0 ? 'P0' : 'P1',
        path,
        line: i,
        endLine: i,
        title: i % 2 ? 'Debug statement left in' : 'Weak hash',
        body: `why and fix ${i}`,
        rule: i % 2 ? 'correctness/debug-statement' : 'security/weak-hash',
        category: i % 2 ? 'correctness' : 'security',
        reviewer: i % 2 ? 'correctness' : 'security',
        reviewers: [i % 2 ? 'correctness' : 'security'],
      });
    }
    text[path] = `${lines.join('\n')}\n`;
  }
  const headText: HeadText = (path) => text[path] ?? null;
  return { text, found, headText, inspected: new Set(Object.keys(text)) };
}

describe('planning a big merge', () => {
  it('merges reviewers’ drafts exactly as comparing each with every earlier group would', () => {
    // The straightforward definition, kept here as the reference for the indexed one.
    const reference = (drafts: FindingDraft[]) => {
      const rank = (s: string) => ({ P0: 0, P1: 1, P2: 2 })[s] as number;
      const sorted = [...drafts].sort(
        (a, b) =>
          rank(a.severity) - rank(b.severity) ||
          (a.rule.startsWith('llm/') ? 1 : 0) - (b.rule.startsWith('llm/') ? 1 : 0) ||
          a.rule.localeCompare(b.rule) ||
          a.line - b.line,
      );
      const over = (a: FindingDraft, b: FindingDraft, s: number) =>
        a.line <= b.endLine + s && b.line <= a.endLine + s;
      const byPath = new Map<string, FindingDraft[][]>();
      const groups: FindingDraft[][] = [];
      for (const d of sorted) {
        const candidates = byPath.get(d.path) ?? [];
        const g = candidates.find((group) =>
          group.some((m) =>
            m.rule === d.rule
              ? over(m, d, 0)
              : m.reviewer !== d.reviewer &&
                over(m, d, 1) &&
                canonicalCategory(m.category) === canonicalCategory(d.category),
          ),
        );
        if (g) g.push(d);
        else {
          candidates.push([d]);
          byPath.set(d.path, candidates);
          groups.push(candidates.at(-1) as FindingDraft[]);
        }
      }
      return groups.map((g) => ({ primary: g[0]?.title, members: g.map((d) => d.title).sort() }));
    };
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)] as T;
    for (let trial = 0; trial < 50; trial++) {
      const drafts: FindingDraft[] = Array.from({ length: 150 }, (_, i) => {
        const line = 1 + Math.floor(random() * 30);
        return {
          severity: pick(['P0', 'P1', 'P2'] as const),
          path: pick(['a.ts', 'b.ts']),
          line,
          // Mostly short spans, some over the index's width, a few inverted.
          endLine: random() < 0.05 ? line - 1 : line + (random() < 0.1 ? 70 : Math.floor(random() * 3)),
          title: `t${i}`,
          body: 'b',
          rule: pick(['security/eval', 'correctness/debug', 'llm/bug', 'llm/injection']),
          category: pick(['security', 'correctness', 'Bug', 'injection']),
          reviewer: pick(['security', 'correctness', 'general']),
        };
      });
      const merged = mergeFindings(drafts).map((m) => ({ primary: m.title }));
      expect(merged).toEqual(reference(drafts).map((g) => ({ primary: g.primary })));
    }
  });

  it('gives the event loop a turn at least every SLICE findings while merging, fingerprinting and reconciling', async () => {
    const { found, headText, inspected } = bigChange(4, 1_500);
    const drafts: FindingDraft[] = found.map(({ reviewers: _, ...d }) => d);
    const merging = await turnsDuring(() => mergeFindingsCooperatively(drafts));
    expect(merging.value).toHaveLength(found.length);
    expect(merging.turns).toBeGreaterThanOrEqual(Math.floor(found.length / SLICE));
    // Against a ledger holding all of them, half under other fingerprints (and so fixed).
    const existing = found.map((f, i) => ({
      id: `f${i}`,
      fingerprint: `x${i}`,
      status: 'open' as const,
      path: f.path,
      anchorText: `gone ${i}`,
      reviewers: f.reviewers,
    }));
    const planning = await turnsDuring(() =>
      runCooperatively(reconcileSteps(existing, found, headText, inspected)),
    );
    expect(planning.value.fresh).toHaveLength(found.length);
    expect(planning.value.fixed).toHaveLength(found.length);
    // Fingerprinting, matching and the fixed check each yield every SLICE findings.
    expect(planning.turns).toBeGreaterThanOrEqual(Math.floor((3 * found.length) / SLICE));
  });
});

describe.each(DATABASE_KINDS)('a big merge into the ledger on %s', (kind) => {
  let t: TestDatabase;
  let db: Database;
  const scope = (runId: string, ledgerKey: string): LedgerScope => ({
    ledgerKey,
    workspaceId: 'ws',
    projectId: 'prj',
    pullRequestId: null,
    taskId: 'tsk_1',
    runId,
    headSha: `head_${runId}`,
  });

  /** The ledger as a reader sees it, by fingerprint, without ids and times (they differ per merge). */
  const ledgerState = async (ledgerKey: string) => {
    const rows = await db.orm.select().from(findings).where(eq(findings.ledgerKey, ledgerKey));
    return rows
      .map((r) => ({
        fingerprint: r.fingerprint,
        status: r.status,
        severity: r.severity,
        path: r.path,
        line: r.line,
        endLine: r.endLine,
        title: r.title,
        body: r.body,
        rule: r.rule,
        reviewers: r.reviewers,
        anchorText: r.anchorText,
        firstRunId: r.firstRunId,
        lastRunId: r.lastRunId,
        commitSha: r.commitSha,
        dismissedReason: r.dismissedReason,
        dismissed: r.dismissedAt !== null,
        fixed: r.fixedAt !== null,
        fixedRunId: r.fixedRunId,
      }))
      .sort((a, b) => a.fingerprint.localeCompare(b.fingerprint));
  };
  /** What a run listed as reported in one ledger, by fingerprint. */
  const listed = async (runId: string, ledgerKey: string) =>
    (
      await db.orm
        .select({ fingerprint: findings.fingerprint })
        .from(runFindings)
        .innerJoin(findings, eq(findings.id, runFindings.findingId))
        .where(and(eq(runFindings.runId, runId), eq(findings.ledgerKey, ledgerKey)))
    )
      .map((r) => r.fingerprint)
      .sort();
  const summary = (o: LedgerOutcome) => ({
    reported: o.reported.map((r) => [r.fingerprint, r.severity, r.status]),
    opened: o.opened,
    reopened: o.reopened,
    fixed: o.fixed,
    stillDismissed: o.stillDismissed,
    dismissedInline: o.dismissedInline,
  });

  /**
   * Three reviews of one ledger. The first finds `a` in three files; by the second, file 0's code
   * is gone (its findings fixed); by the third, file 0 is back (its findings reopened, some now
   * answered inline with `svc-ignore`) and files 1 and 2 were rewritten (some findings seen
   * again, some fixed, some new). The third is the merge the tests stop.
   */
  const history = () => {
    const a = bigChange(3, 120);
    const b = bigChange(3, 150, 'again ');
    const file0 = 'src/pkg0/module0.ts';
    const step = (found: MergedFinding[], text: Record<string, string>) => ({
      found,
      headText: (p: string) => text[p] ?? null,
      inspected: new Set(Object.keys(text)),
    });
    return [
      step(a.found, a.text),
      step(
        a.found.filter((f) => f.path !== file0),
        { ...a.text, [file0]: '' },
      ),
      step(
        [
          ...a.found
            .filter((f) => f.path === file0)
            .map((f, i) => (i % 9 === 0 ? { ...f, dismissal: { reason: 'svc-ignore: test fixture' } } : f)),
          ...b.found.filter((f) => f.path !== file0),
        ],
        { ...b.text, [file0]: a.text[file0] as string },
      ),
    ];
  };
  /** Merges the first steps of the history into `ledgerKey`, one run each (run ids `${prefix}1`…). */
  const mergeSteps = async (ledgerKey: string, prefix: string, steps: ReturnType<typeof history>) => {
    const out: LedgerOutcome[] = [];
    for (const [i, s] of steps.entries())
      out.push(
        await recordInLedger(db, scope(`${prefix}${i + 1}`, ledgerKey), s.found, s.headText, s.inspected),
      );
    return out;
  };

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    db = t.db;
  });
  afterAll(() => t.close());

  it('gives the event loop a turn at least every batch of K findings, new or seen again', async () => {
    const { found, headText, inspected } = bigChange(4, 300);
    const K = 100;
    const first = await turnsDuring(() =>
      recordInLedger(db, scope('run_y1', 'range:yield'), found, headText, inspected, { batchSize: K }),
    );
    expect(first.value.opened).toBe(found.length);
    expect(first.turns).toBeGreaterThanOrEqual(Math.ceil(found.length / K));
    // The re-review: every finding seen again, each row rewritten.
    const again = await turnsDuring(() =>
      recordInLedger(db, scope('run_y2', 'range:yield'), found, headText, inspected, { batchSize: K }),
    );
    expect(again.value.reported).toHaveLength(found.length);
    expect(again.turns).toBeGreaterThanOrEqual(Math.ceil(found.length / K));
    // And closing them all: every finding's code gone.
    const gone = await turnsDuring(() =>
      recordInLedger(db, scope('run_y3', 'range:yield'), [], () => '', inspected, { batchSize: K }),
    );
    expect(gone.value.fixed).toBe(found.length);
    expect(gone.turns).toBeGreaterThanOrEqual(Math.ceil(found.length / K));
  });

  it('writes the same ledger, outcome and run lists in small batches as in one', async () => {
    const h = history();
    const outcomes: Record<string, ReturnType<typeof summary>[]> = {};
    for (const [key, batchSize] of [
      ['range:one-batch', 1_000_000],
      ['range:small-batches', 7],
    ] as const) {
      outcomes[key] = [];
      for (const [i, s] of h.entries()) {
        const o = await recordInLedger(db, scope(`run_b${i + 1}`, key), s.found, s.headText, s.inspected, {
          batchSize,
        });
        outcomes[key].push(summary(o));
      }
    }
    const one = outcomes['range:one-batch'];
    expect(outcomes['range:small-batches']).toEqual(one);
    // Every kind of change happened in the last review.
    expect(one?.[2]).toMatchObject({ opened: 180, reopened: 106, dismissedInline: 14, fixed: 120 });
    expect(await ledgerState('range:small-batches')).toEqual(await ledgerState('range:one-batch'));
    for (const run of ['run_b1', 'run_b2', 'run_b3'])
      expect(await listed(run, 'range:small-batches')).toEqual(await listed(run, 'range:one-batch'));
  });

  it('converges to the whole merge’s ledger when a merge stopped between batches runs again', async () => {
    const h = history();
    const last = h[2] as (typeof h)[number];
    // The reference: all three reviews merged without a stop.
    const whole = (await mergeSteps('range:whole', 'run_c', h))[2] as LedgerOutcome;
    for (const stopAfter of [1, 4, 9]) {
      const key = `range:stopped-${stopAfter}`;
      await mergeSteps(key, 'run_c', h.slice(0, 2));
      const stop = new Error('the worker died here');
      await expect(
        recordInLedger(db, scope('run_c3', key), last.found, last.headText, last.inspected, {
          batchSize: 25,
          afterBatch: (n) => {
            if (n === stopAfter) throw stop;
          },
        }),
      ).rejects.toBe(stop);
      // Half merged: some of the third review's writes are there, not all.
      expect(await ledgerState(key)).not.toEqual(await ledgerState('range:whole'));
      const again = await recordInLedger(
        db,
        scope('run_c3', key),
        last.found,
        last.headText,
        last.inspected,
        {
          batchSize: 25,
        },
      );
      expect(await ledgerState(key)).toEqual(await ledgerState('range:whole'));
      expect(await listed('run_c3', key)).toEqual(await listed('run_c3', 'range:whole'));
      expect(again.reported.map((r) => r.fingerprint)).toEqual(whole.reported.map((r) => r.fingerprint));
    }
  });

  it('converges when a replacement run (another run id) merges after the stopped one', async () => {
    const h = history();
    const last = h[2] as (typeof h)[number];
    await mergeSteps('range:d-whole', 'run_d', h);
    await mergeSteps('range:d-stopped', 'run_d', h.slice(0, 2));
    const controller = new AbortController();
    await expect(
      recordInLedger(db, scope('run_d2-lost', 'range:d-stopped'), last.found, last.headText, last.inspected, {
        batchSize: 40,
        signal: controller.signal,
        // The lease is lost after the third batch: no further batch is written.
        afterBatch: (n) => {
          if (n === 3) controller.abort(new Error('lease lost'));
        },
      }),
    ).rejects.toThrow('lease lost');
    await recordInLedger(db, scope('run_d3', 'range:d-stopped'), last.found, last.headText, last.inspected);
    // The same findings in the same states; only who first reported the ones the stopped run
    // inserted differs (it did report them first).
    const strip = (rows: Awaited<ReturnType<typeof ledgerState>>) =>
      rows.map(({ firstRunId: _, ...rest }) => rest);
    expect(strip(await ledgerState('range:d-stopped'))).toEqual(strip(await ledgerState('range:d-whole')));
  });

  it('lets a person’s disposition land before or after a merge, never between its batches', async () => {
    const { found, headText, inspected } = bigChange(2, 200);
    const key = 'range:disposition';
    await recordInLedger(db, scope('run_e1', key), found, headText, inspected);
    const [target] = await db.orm.select().from(findings).where(eq(findings.ledgerKey, key)).limit(1);
    if (!target) throw new Error('no finding');
    let dismissed = false;
    const seenByBatches: boolean[] = [];
    let disposition: Promise<unknown> | null = null;
    await recordInLedger(db, scope('run_e2', key), found, headText, inspected, {
      batchSize: 50,
      afterBatch: async (n) => {
        if (n === 1) {
          disposition = applyDisposition(
            db,
            { workspaceId: 'ws', projectId: 'prj' },
            target.id,
            { kind: 'dismissed', reason: 'not a defect here' },
            { actor: null },
          ).then(() => {
            dismissed = true;
          });
        }
        // Time for the disposition to go through, were nothing holding it.
        await new Promise((r) => setTimeout(r, 20));
        seenByBatches.push(dismissed);
      },
    });
    expect(seenByBatches.length).toBeGreaterThan(2);
    expect(seenByBatches.every((d) => d === false)).toBe(true);
    await disposition;
    const [after] = await db.orm.select().from(findings).where(eq(findings.id, target.id));
    expect(after).toMatchObject({
      status: 'dismissed',
      dismissedReason: 'not a defect here',
      lastRunId: 'run_e2',
    });
  });
});
