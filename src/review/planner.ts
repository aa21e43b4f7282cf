/**
 * The planner: with no lineup given, it chooses one from the diff (languages, paths, size) and
 * the project's `svc.review.budget_usd`, and says why for every reviewer it took or left out.
 * The budget is a scale signal for how wide a lineup to buy, not a ceiling on spend.
 */
import type { Diff } from '../core/review';
import type { LineupEntry } from './lineup';
import type { ReviewerRow } from './reviewer-catalog';

const RULE_LANGUAGES = new Set(['javascript', 'typescript', 'python', 'go', 'java']);

export interface PlanInput {
  diff: Diff;
  budgetUsd: number;
  /** Workspace reviewers (catalog copies and custom ones). */
  reviewers: ReviewerRow[];
  /** Providers an LLM reviewer can run on here (name → configured). */
  llmProviders: Set<string>;
}

export interface Plan {
  lineup: LineupEntry[];
  reasons: { reviewer_id: string; chosen: boolean; why: string }[];
  signals: {
    files: number;
    changed_lines: number;
    languages: Record<string, number>;
    budget_usd: number;
    llm_providers: string[];
    width: number;
  };
}

/** How many model reviewers a budget buys: none below $0.25, one up to $2, then one per $2 more. */
export function modelReviewerWidth(budgetUsd: number): number {
  if (budgetUsd < 0.25) return 0;
  return 1 + Math.floor(Math.max(0, budgetUsd - 2) / 2);
}

export function planLineup(input: PlanInput): Plan {
  const languages: Record<string, number> = {};
  let changedLines = 0;
  for (const file of input.diff.files) {
    if (file.skipped || file.change === 'deleted') continue;
    if (file.language) languages[file.language] = (languages[file.language] ?? 0) + 1;
    changedLines += file.additions;
  }
  const reviewable = input.diff.files.some(
    (f) => !f.skipped && f.change !== 'deleted' && f.changedLines.length > 0,
  );
  const ruleLanguages = Object.keys(languages).filter((l) => RULE_LANGUAGES.has(l));
  const width = modelReviewerWidth(input.budgetUsd);
  const reasons: Plan['reasons'] = [];
  const lineup: LineupEntry[] = [];
  const take = (r: ReviewerRow, why: string) => {
    lineup.push({ key: r.id, reviewerId: r.id, model: null, skillRevisionId: null });
    reasons.push({ reviewer_id: r.id, chosen: true, why });
  };
  const skip = (r: ReviewerRow, why: string) => reasons.push({ reviewer_id: r.id, chosen: false, why });

  let modelSlots = width;
  // Catalog reviewers in a fixed order, then custom ones by popularity: plans are reproducible.
  const ordered = [...input.reviewers].sort((a, b) =>
    a.source === b.source ? b.uses - a.uses || a.id.localeCompare(b.id) : a.source === 'catalog' ? -1 : 1,
  );
  for (const reviewer of ordered) {
    if (!reviewable) {
      skip(reviewer, 'the diff has no reviewable lines');
      continue;
    }
    if (reviewer.engine === 'builtin') {
      if (reviewer.skillId === 'secrets') take(reviewer, 'credentials can hide in any changed text file');
      else if (ruleLanguages.length > 0)
        take(reviewer, `rules cover the changed ${ruleLanguages.join(', ')} files`);
      else
        skip(reviewer, 'no changed file is in a language its rules cover (JavaScript, TypeScript, Python)');
      continue;
    }
    const provider = reviewer.modelPin.split('/')[0] ?? '';
    if (!input.llmProviders.has(provider)) {
      skip(reviewer, `its model ${reviewer.modelPin} needs provider "${provider}", which is not configured`);
    } else if (modelSlots <= 0) {
      skip(reviewer, `budget $${input.budgetUsd} buys ${width} model reviewer(s); lineup already has them`);
    } else {
      modelSlots--;
      take(
        reviewer,
        `budget $${input.budgetUsd} buys ${width} model reviewer(s); ${changedLines} changed lines`,
      );
    }
  }
  return {
    lineup,
    reasons,
    signals: {
      files: input.diff.files.length,
      changed_lines: changedLines,
      languages,
      budget_usd: input.budgetUsd,
      llm_providers: [...input.llmProviders].sort(),
      width,
    },
  };
}
