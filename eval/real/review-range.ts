/**
 * Reviews a range of a local git repository with the builtin rules the way svc's review run
 * does (src/review/run-review.ts), from its pure pieces: the diff and head blobs from the local
 * code host, the repository's `.svc.yml`/`.gitattributes` deciding which files are reviewed and
 * in what role, every builtin catalog skill, then the repository's policy, merging and inline
 * suppressions. No database and no ledger: the findings are what a first review would record.
 */

import { LocalCodeHost } from '../../src/codehost/local/local-host';
import type { Diff, FindingDraft } from '../../src/core/review';
import { type MergedFinding, mergeFindings } from '../../src/review/merge';
import {
  applyPolicy,
  CONTEXT_PATHS,
  markSuppressed,
  prepareFiles,
  repositoryContext,
} from '../../src/review/policy';
import { runBuiltinSkill } from '../../src/reviewers/builtin/engine';
import type { ReviewFile } from '../../src/reviewers/types';
import type { CatalogSkill } from '../../src/skills/catalog';

export interface RangeReview {
  diff: Diff;
  /** The changed files as the reviewers were given them (excluded paths dropped, roles set). */
  files: ReviewFile[];
  /** Reported findings; those an inline `svc-ignore` dismissed carry `dismissal`. */
  findings: MergedFinding[];
  /** Head text of every changed file. */
  text: Map<string, string | null>;
  gaps: string[];
}

/** As run-review decodes blobs: UTF-8, or latin1 when the bytes are not UTF-8. */
function decode(buffer: Buffer | null | undefined): string | null {
  if (!buffer) return null;
  const text = buffer.toString('utf8');
  return text.includes('\uFFFD') ? buffer.toString('latin1') : text;
}

export async function reviewRange(
  reposDir: string,
  fullName: string,
  range: { baseSha: string; headSha: string },
  skills: CatalogSkill[],
): Promise<RangeReview> {
  const host = new LocalCodeHost(reposDir);
  const diff = await host.getDiff(fullName, range.baseSha, range.headSha);
  const gaps = diff.gaps.map((g) => `${g.code}: ${g.message}`);
  const readable = diff.files.filter((f) => f.change !== 'deleted' && !f.binary && !f.skipped);
  const paths = readable.map((f) => f.path);
  const contents = await host.readFiles(fullName, range.headSha, [...new Set([...paths, ...CONTEXT_PATHS])]);
  const text = new Map(paths.map((p) => [p, decode(contents.get(p))]));
  const context = repositoryContext(new Map(CONTEXT_PATHS.map((p) => [p, decode(contents.get(p))])));
  gaps.push(...context.gaps.map((g) => `${g.code}: ${g.message}`));
  const files = prepareFiles(
    diff.files.map((f) => ({ diff: f, content: text.get(f.path) ?? null })),
    context,
  );
  const drafts: FindingDraft[] = [];
  const signal = new AbortController().signal;
  for (const skill of skills) {
    const result = await runBuiltinSkill(skill, files, { reviewerId: skill.id, signal });
    drafts.push(...result.findings);
    gaps.push(...result.gaps.map((g) => `${skill.id}: ${g.code}: ${g.message}`));
  }
  const findings = markSuppressed(
    mergeFindings(applyPolicy(drafts, files, context)),
    (p) => text.get(p) ?? null,
  );
  return { diff, files, findings, text, gaps };
}
