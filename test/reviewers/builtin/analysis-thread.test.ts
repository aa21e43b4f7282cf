/**
 * The service matches each file in an analysis thread (analysisThread: true), so its event loop
 * only passes messages while a review analyses its largest files. The thread must find exactly
 * what the main thread finds, do the work there and not here, keep the file budget, and stop at
 * once when the run is aborted. Work and threads are counted, never timed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { describe, expect, it } from 'vitest';
import { worstCase } from '../../../bench/analysis/worst-case';
import { snippetDiffFile } from '../../../eval/evaluate';
import { type BuiltinRunOptions, runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { resolutionWork } from '../../../src/reviewers/builtin/flow';
import { ANALYSIS_NICE, analysisThreads, hardStop } from '../../../src/reviewers/builtin/match-pool';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

const skill = async (id: string): Promise<CatalogSkill> => {
  const s = await catalogSkill(id);
  if (!s) throw new Error(`no catalog skill ${id}`);
  return s;
};
const file = (path: string, code: string, changed?: { start: number; end: number }[]): ReviewFile => ({
  diff: snippetDiffFile(path, code, changed ?? null),
  content: code,
});
const never = new AbortController().signal;

const files = (): ReviewFile[] => [
  file('src/handlers.js', worstCase('javascript', 'one-function', 120)),
  file('src/appends.ts', worstCase('javascript', 'appends', 80)),
  file('app/views.py', worstCase('python', 'functions', 60)),
  file('cmd/run.go', worstCase('go', 'distinct-names', 40)),
  file('src/Handlers.java', worstCase('java', 'functions', 40)),
  // Only some lines changed: findings on the others are not reported.
  file('src/partly.js', worstCase('javascript', 'functions', 50), [{ start: 10, end: 60 }]),
];

async function both(id: string, make: () => ReviewFile[], extra: Partial<BuiltinRunOptions> = {}) {
  const options = { reviewerId: id, signal: never, ...extra };
  const here = await runBuiltinSkill(await skill(id), make(), options);
  const visitsBefore = resolutionWork.visits;
  const there = await runBuiltinSkill(await skill(id), make(), { ...options, analysisThread: true });
  return { here, there, visitsHere: resolutionWork.visits - visitsBefore };
}

describe('analysis thread', () => {
  for (const id of ['security', 'correctness']) {
    it(`finds what the main thread finds, doing none of the work here: ${id}`, async () => {
      const { here, there, visitsHere } = await both(id, files);
      expect(there.findings).toEqual(here.findings);
      expect(there.gaps).toEqual(here.gaps);
      if (id === 'security') expect(here.findings.length).toBeGreaterThan(100);
      // The flow analysis ran in the thread: this thread resolved no name.
      expect(visitsHere).toBe(0);
    });
  }

  it('leaves out findings the base already had, as the main thread does', async () => {
    const head = worstCase('javascript', 'functions', 30);
    const base = worstCase('javascript', 'functions', 20);
    const make = () => [
      {
        diff: { ...snippetDiffFile('src/handlers.js', head, null), change: 'modified' as const },
        content: head,
      },
    ];
    const readBase = async (paths: readonly string[]) => new Map(paths.map((p) => [p, base]));
    const { here, there } = await both('security', make, { readBase });
    expect(here.gaps.map((g) => g.code)).toContain('builtin_preexisting_not_reported');
    expect(here.findings).toHaveLength(10);
    expect(there.findings).toEqual(here.findings);
    expect(there.gaps).toEqual(here.gaps);
  });

  it('stops a file past its budget with a file_analysis_budget gap, keeping the findings made before', async () => {
    const code = worstCase('javascript', 'functions', 1500);
    const cut = await runBuiltinSkill(await skill('security'), [file('src/handlers.js', code)], {
      reviewerId: 's',
      signal: never,
      fileBudgetMs: 0.001,
      turnMs: 0,
      analysisThread: true,
    });
    expect(cut.gaps.map((g) => g.code)).toEqual(['file_analysis_budget']);
    expect(cut.gaps[0]?.message).toMatch(/^src\/handlers\.js: .*SVC_FILE_ANALYSIS_BUDGET_MS/);
    expect(cut.findings.length).toBeLessThan(1500);
  });

  it('ends a thread that holds a file past twice its budget, as one native search can, with the same gap', async () => {
    const slack = hardStop.slackMs;
    hardStop.slackMs = 0;
    try {
      const alive = analysisThreads().alive;
      const cut = await runBuiltinSkill(
        await skill('security'),
        [file('cmd/run.go', worstCase('go', 'one-function', 400))],
        { reviewerId: 's', signal: never, fileBudgetMs: 0.001, analysisThread: true },
      );
      // Stopped from outside: no step of the thread got to report, so nothing was kept.
      expect(cut.gaps.map((g) => g.code)).toEqual(['file_analysis_budget']);
      expect(cut.gaps[0]?.message).toMatch(/^cmd\/run\.go: .* 0 finding\(s\) made before were kept/);
      expect(cut.findings).toEqual([]);
      // The thread that held it was ended (a file that finished leaves its thread idle, alive).
      expect(analysisThreads().alive).toBe(Math.max(0, alive - 1));
    } finally {
      hardStop.slackMs = slack;
    }
  });

  it('ends the thread of an aborted run at once, and starts another for the next file', async () => {
    const controller = new AbortController();
    const code = worstCase('javascript', 'functions', 4000);
    const running = runBuiltinSkill(await skill('security'), [file('src/handlers.js', code)], {
      reviewerId: 's',
      signal: controller.signal,
      fileBudgetMs: 0,
      analysisThread: true,
    });
    const settled = running.then(
      () => 'completed',
      (error: Error) => error.name,
    );
    // Abort once the file is in a thread (the job is handed over within a few turns).
    for (let turn = 0; turn < 1000 && analysisThreads().busy === 0; turn++)
      await new Promise((r) => setImmediate(r));
    const before = analysisThreads();
    expect(before.busy).toBe(1);
    controller.abort();
    // Ended without waiting for the analysis: the thread is terminated in the abort's own turn.
    expect(analysisThreads()).toEqual({ alive: before.alive - 1, busy: 0 });
    expect(await settled).toBe('AbortError');

    const next = await runBuiltinSkill(
      await skill('security'),
      [file('src/handlers.js', worstCase('javascript', 'functions', 5))],
      { reviewerId: 's', signal: never, analysisThread: true },
    );
    expect(next.findings).toHaveLength(5);
  });

  /** The nice value of every thread of this process (Linux's /proc; field 19 of a task's stat). */
  const threadNiceValues = (): number[] =>
    readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });

  it.runIf(platform() === 'linux')('runs its threads at a lower priority than the server', async () => {
    await runBuiltinSkill(
      await skill('security'),
      [file('src/handlers.js', worstCase('javascript', 'functions', 5))],
      { reviewerId: 's', signal: never, analysisThread: true },
    );
    // The thread stays a while after its job; every live one runs at the analysis priority, and
    // the process's own threads at theirs.
    const { alive } = analysisThreads();
    expect(alive).toBeGreaterThan(0);
    const nice = threadNiceValues();
    expect(nice.filter((n) => n === ANALYSIS_NICE).length).toBeGreaterThanOrEqual(alive);
    expect(nice).toContain(0);
  });
});
