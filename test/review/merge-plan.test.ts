import { describe, expect, it } from 'vitest';
import type { Diff, DiffFile, FindingDraft } from '../../src/core/review';
import { parseLineup } from '../../src/review/lineup';
import { canonicalCategory, mergeFindings } from '../../src/review/merge';
import { modelReviewerWidth, planLineup } from '../../src/review/planner';
import type { ReviewerRow } from '../../src/review/reviewer-catalog';

const draft = (over: Partial<FindingDraft>): FindingDraft => ({
  severity: 'P1',
  path: 'src/a.ts',
  line: 10,
  endLine: 10,
  title: 't',
  body: 'b',
  rule: 'security/eval',
  category: 'security',
  reviewer: 'security',
  ...over,
});

describe('mergeFindings', () => {
  it('merges reports of one defect from several reviewers, keeping the highest severity and every reviewer', () => {
    const merged = mergeFindings([
      draft({
        severity: 'P1',
        reviewer: 'general',
        rule: 'llm/injection',
        category: 'Injection',
        title: 'model says',
      }),
      draft({ severity: 'P0', reviewer: 'security', title: 'rule says' }),
    ]);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ severity: 'P0', title: 'rule says', rule: 'security/eval' });
    expect(merged[0]?.reviewers.sort()).toEqual(['general', 'security']);
  });

  it('keeps apart different defects: other file, distant lines, other kind of problem', () => {
    const merged = mergeFindings([
      draft({}),
      draft({ path: 'src/b.ts' }),
      draft({ line: 40, endLine: 40 }),
      draft({ rule: 'correctness/empty-catch', category: 'correctness', reviewer: 'correctness' }),
    ]);
    expect(merged).toHaveLength(4);
  });

  it('prefers the deterministic rule as the primary on equal severity', () => {
    const merged = mergeFindings([
      draft({ reviewer: 'general', rule: 'llm/security', title: 'model' }),
      draft({ reviewer: 'security', rule: 'security/eval', title: 'rule' }),
    ]);
    expect(merged[0]?.title).toBe('rule');
  });

  it('folds free-form categories', () => {
    expect(canonicalCategory('SQL Injection')).toBe('security');
    expect(canonicalCategory('Hardcoded credential')).toBe('secrets');
    expect(canonicalCategory('Logic bug')).toBe('correctness');
  });
});

describe('parseLineup', () => {
  it('reads all three string forms and the object form', () => {
    expect(
      parseLineup([
        'security',
        'general@openai/gpt-4o-mini',
        'svc:correctness:auto',
        { reviewer_id: 'general', model: 'compat/llama3' },
      ]),
    ).toEqual([
      { key: 'security', reviewerId: 'security', model: null, skillRevisionId: null },
      { key: 'general', reviewerId: 'general', model: 'openai/gpt-4o-mini', skillRevisionId: null },
      { key: 'correctness', reviewerId: 'correctness', model: null, skillRevisionId: null },
      { key: 'general-2', reviewerId: 'general', model: 'compat/llama3', skillRevisionId: null },
    ]);
  });
});

const reviewer = (over: Partial<ReviewerRow>): ReviewerRow => ({
  workspaceId: 'ws',
  id: 'security',
  name: 'n',
  description: '',
  engine: 'builtin',
  skillId: 'security',
  skillRevisionId: null,
  modelPin: 'builtin/rules',
  instructions: null,
  source: 'catalog',
  uses: 0,
  createdAt: new Date(),
  updatedAt: new Date(),
  ...over,
});

const file = (path: string, language: string | null, lines = 10): DiffFile => ({
  path,
  oldPath: null,
  change: 'modified',
  binary: false,
  oldMode: null,
  newMode: null,
  language,
  additions: lines,
  deletions: 0,
  changedLines: [{ start: 1, end: lines }],
  hunks: [],
  skipped: null,
});

const diff = (files: DiffFile[]): Diff => ({ base: 'a', head: 'b', files, gaps: [] });
const all = [
  reviewer({ id: 'security', skillId: 'security' }),
  reviewer({ id: 'correctness', skillId: 'correctness' }),
  reviewer({ id: 'secrets', skillId: 'secrets' }),
  reviewer({ id: 'general', engine: 'llm', skillId: 'general', modelPin: 'openai/gpt-4o-mini' }),
];

describe('planLineup', () => {
  it('takes the rule reviewers for their languages and says why the model reviewer is left out', () => {
    const plan = planLineup({
      diff: diff([file('src/a.ts', 'typescript')]),
      budgetUsd: 1,
      reviewers: all,
      llmProviders: new Set(),
    });
    expect(plan.lineup.map((e) => e.reviewerId).sort()).toEqual(['correctness', 'secrets', 'security']);
    expect(plan.reasons.find((r) => r.reviewer_id === 'general')).toMatchObject({
      chosen: false,
      why: expect.stringMatching(/not configured/),
    });
  });

  it('uses only secrets on a change with no rule-covered language', () => {
    const plan = planLineup({
      diff: diff([file('main.rs', 'rust')]),
      budgetUsd: 1,
      reviewers: all,
      llmProviders: new Set(),
    });
    expect(plan.lineup.map((e) => e.reviewerId)).toEqual(['secrets']);
  });

  it('buys model reviewers with the budget, as a scale signal', () => {
    expect(modelReviewerWidth(0.1)).toBe(0);
    expect(modelReviewerWidth(1)).toBe(1);
    expect(modelReviewerWidth(6)).toBe(3);
    const cheap = planLineup({
      diff: diff([file('a.py', 'python')]),
      budgetUsd: 0.1,
      reviewers: all,
      llmProviders: new Set(['openai']),
    });
    expect(cheap.lineup.map((e) => e.reviewerId)).not.toContain('general');
    const paid = planLineup({
      diff: diff([file('a.py', 'python')]),
      budgetUsd: 1,
      reviewers: all,
      llmProviders: new Set(['openai']),
    });
    expect(paid.lineup.map((e) => e.reviewerId)).toContain('general');
    expect(paid.signals).toMatchObject({ budget_usd: 1, width: 1, languages: { python: 1 } });
  });

  it('chooses nobody when nothing is reviewable, and says so', () => {
    const plan = planLineup({ diff: diff([]), budgetUsd: 1, reviewers: all, llmProviders: new Set() });
    expect(plan.lineup).toEqual([]);
    expect(plan.reasons.every((r) => /no reviewable/.test(r.why))).toBe(true);
  });
});

describe('mergeFindings on adjacent lines', () => {
  it('keeps one rule on two adjacent lines as two findings', () => {
    const merged = mergeFindings([draft({ line: 3, endLine: 3 }), draft({ line: 4, endLine: 4 })]);
    expect(merged).toHaveLength(2);
  });

  it('merges a model report one line off from a rule report of the same kind', () => {
    const merged = mergeFindings([
      draft({ line: 3, endLine: 3 }),
      draft({ line: 4, endLine: 4, rule: 'llm/security', reviewer: 'general' }),
    ]);
    expect(merged).toHaveLength(1);
  });
});

describe('mergeFindings within one reviewer', () => {
  it("keeps one reviewer's different rules apart, even on adjacent lines", () => {
    const merged = mergeFindings([
      draft({ line: 3, endLine: 3, rule: 'security/command-injection' }),
      draft({ line: 4, endLine: 4, rule: 'security/code-injection' }),
      draft({ line: 4, endLine: 4, rule: 'security/xss' }),
    ]);
    expect(merged).toHaveLength(3);
  });
});
