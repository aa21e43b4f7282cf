/**
 * Lineups: the reviewer items of a review configuration (string and object forms) resolved
 * against the workspace's reviewers into what will execute, with the model each runs on.
 */
import type { ReviewerRow } from './reviewer-catalog';

/** One configured entry, normalized from any of the spec's forms. */
export interface LineupEntry {
  /** Stable key of the entry within the configuration (the `reviewer_key`). */
  key: string;
  reviewerId: string;
  /** `<provider>/<model>` pinned for this run; null: the reviewer's governed pin. */
  model: string | null;
  skillRevisionId: string | null;
}

export type ReviewerItem =
  | string
  | { reviewer_id: string; model?: string | undefined; skill_revision_id?: string | undefined };

export function parseReviewerItem(item: ReviewerItem): LineupEntry {
  if (typeof item !== 'string') {
    return {
      key: item.reviewer_id,
      reviewerId: item.reviewer_id,
      model: item.model ?? null,
      skillRevisionId: item.skill_revision_id ?? null,
    };
  }
  const explicitAuto = /^svc:([^:]+):auto$/.exec(item);
  if (explicitAuto?.[1])
    return { key: explicitAuto[1], reviewerId: explicitAuto[1], model: null, skillRevisionId: null };
  const at = item.indexOf('@');
  if (at < 0) return { key: item, reviewerId: item, model: null, skillRevisionId: null };
  const reviewerId = item.slice(0, at);
  return { key: reviewerId, reviewerId, model: item.slice(at + 1), skillRevisionId: null };
}

/** Entries from a request, with keys made unique (`security`, `security-2`) when a reviewer repeats. */
export function parseLineup(items: ReviewerItem[]): LineupEntry[] {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const entry = parseReviewerItem(item);
    const n = (seen.get(entry.key) ?? 0) + 1;
    seen.set(entry.key, n);
    return n === 1 ? entry : { ...entry, key: `${entry.key}-${n}` };
  });
}

export function toReviewerItem(entry: LineupEntry) {
  return {
    key: entry.key,
    reviewer_id: entry.reviewerId,
    model: entry.model,
    skill_revision_id: entry.skillRevisionId,
  };
}

/** What will execute for one entry. */
export interface ResolvedReviewer {
  key: string;
  reviewer: ReviewerRow;
  engine: 'builtin' | 'llm';
  /** `builtin`, or provider and model for LLM reviewers. */
  provider: string | null;
  model: string | null;
  pinSource: 'governed' | 'run';
  skillRevisionId: string | null;
}

export function splitModel(model: string): { provider: string; model: string } {
  const slash = model.indexOf('/');
  return { provider: model.slice(0, slash), model: model.slice(slash + 1) };
}

export function resolveEntry(entry: LineupEntry, reviewer: ReviewerRow): ResolvedReviewer {
  const pin = entry.model ?? reviewer.modelPin;
  if (reviewer.engine === 'builtin') {
    return {
      key: entry.key,
      reviewer,
      engine: 'builtin',
      provider: null,
      model: null,
      pinSource: entry.model ? 'run' : 'governed',
      skillRevisionId: entry.skillRevisionId ?? reviewer.skillRevisionId,
    };
  }
  const { provider, model } = splitModel(pin);
  return {
    key: entry.key,
    reviewer,
    engine: 'llm',
    provider,
    model,
    pinSource: entry.model ? 'run' : 'governed',
    skillRevisionId: entry.skillRevisionId ?? reviewer.skillRevisionId,
  };
}
