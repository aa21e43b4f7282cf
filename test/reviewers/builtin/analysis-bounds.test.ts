/**
 * The builtin analysis is bounded: the resolution work per sink does not grow with the file, a
 * file past its budget is a named gap, and an aborted run stops its analysis at the next step.
 * Work is counted (resolutionWork, event-loop turns), never timed.
 */
import { describe, expect, it } from 'vitest';
import {
  type AnalysisLanguage,
  EXTENSION,
  LANGUAGES,
  SHAPES,
  type Shape,
  worstCase,
} from '../../../bench/analysis/worst-case';
import { snippetDiffFile } from '../../../eval/evaluate';
import { fileAnalysisBudgetMs } from '../../../src/config';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { resolutionWork } from '../../../src/reviewers/builtin/flow';
import type { ReviewFile } from '../../../src/reviewers/types';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

const security = async (): Promise<CatalogSkill> => {
  const s = await catalogSkill('security');
  if (!s) throw new Error('no catalog skill security');
  return s;
};
const jsFile = (code: string): ReviewFile => ({
  diff: snippetDiffFile('src/handlers.js', code, null),
  content: code,
});
const never = new AbortController().signal;

/** Resolution visits and findings of one analysis of `shape` with `n` sinks in `language`. */
async function analyse(language: AnalysisLanguage, shape: Shape, n: number) {
  const code = worstCase(language, shape, n);
  const file: ReviewFile = {
    diff: snippetDiffFile(`src/handlers.${EXTENSION[language]}`, code, null),
    content: code,
  };
  const before = resolutionWork.visits;
  const result = await runBuiltinSkill(await security(), [file], { reviewerId: 'security', signal: never });
  return { visits: resolutionWork.visits - before, result };
}

describe.each(LANGUAGES)('resolution work per sink (%s)', (language) => {
  for (const shape of SHAPES) {
    it(`grows linearly with the sinks of a file: ${shape}`, async () => {
      const small = await analyse(language, shape, 150);
      const large = await analyse(language, shape, 300);
      // Every sink is a finding: the flow analysis really ran for each.
      expect(small.result.findings).toHaveLength(150);
      expect(large.result.findings).toHaveLength(300);
      expect(small.visits).toBeGreaterThan(150);
      // Quadratic work would be 4x; linear work is 2x plus the file's fixed part.
      expect(large.visits).toBeLessThanOrEqual(2.2 * small.visits);
    });
  }
});

describe('file analysis budget', () => {
  it('stops a file past its budget with a file_analysis_budget gap, keeping the findings made before', async () => {
    const code = worstCase('javascript', 'functions', 1500);
    const skill = await security();
    const full = await runBuiltinSkill(skill, [jsFile(code)], {
      reviewerId: 's',
      signal: never,
      fileBudgetMs: 0,
    });
    expect(full.findings).toHaveLength(1500);
    expect(full.gaps).toEqual([]);

    const cut = await runBuiltinSkill(skill, [jsFile(code)], {
      reviewerId: 's',
      signal: never,
      fileBudgetMs: 0.001,
      turnMs: 0,
    });
    expect(cut.gaps.map((g) => g.code)).toEqual(['file_analysis_budget']);
    expect(cut.gaps[0]?.message).toMatch(/^src\/handlers\.js: .*SVC_FILE_ANALYSIS_BUDGET_MS/);
    expect(cut.findings.length).toBeLessThan(1500);
  });

  it('is read from SVC_FILE_ANALYSIS_BUDGET_MS', () => {
    expect(fileAnalysisBudgetMs({})).toBeUndefined();
    expect(fileAnalysisBudgetMs({ SVC_FILE_ANALYSIS_BUDGET_MS: '2500' })).toBe(2500);
    expect(() => fileAnalysisBudgetMs({ SVC_FILE_ANALYSIS_BUDGET_MS: 'soon' })).toThrow(
      /SVC_FILE_ANALYSIS_BUDGET_MS must be a non-negative number/,
    );
  });
});

describe('abort', () => {
  it('stops the analysis within a step of the signal, mid-file', async () => {
    const controller = new AbortController();
    const code = worstCase('javascript', 'functions', 3000);
    const before = resolutionWork.visits;
    let turnsAfterAbort = 0;
    let settled = false;
    const analysis = runBuiltinSkill(await security(), [jsFile(code)], {
      reviewerId: 's',
      signal: controller.signal,
      turnMs: 0,
    }).finally(() => {
      settled = true;
    });
    // Abort once the flow analysis is under way, then count the event loop's turns until the
    // analysis settles: with a check at every step, one turn (the step under way) is all it takes.
    let visitsAtAbort = 0;
    const turn = () => {
      if (settled) return;
      if (controller.signal.aborted) turnsAfterAbort++;
      else if (resolutionWork.visits - before > 5000) {
        visitsAtAbort = resolutionWork.visits;
        controller.abort(new Error('run canceled'));
      }
      setImmediate(turn);
    };
    setImmediate(turn);
    await expect(analysis).rejects.toThrow('run canceled');
    expect(visitsAtAbort).toBeGreaterThan(0);
    expect(turnsAfterAbort).toBeLessThanOrEqual(2);
    // Hardly any resolution work after the abort (one step's worth at most).
    expect(resolutionWork.visits - visitsAtAbort).toBeLessThan(200);
  });
});
