/**
 * Runs one resolved reviewer on its engine: rule skills on the builtin engine, model reviewers
 * through the LLM engine. A skill revision pinned on the reviewer (or the lineup entry) replaces
 * the catalog skill's bytes, and the receipt says so (`project_override`).
 */
import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { fileAnalysisBudgetMs } from '../config';
import { RunFailure } from '../core/failures';
import type { ReviewerResult, ReviewInput } from '../reviewers/types';
import { catalogSkill, skillFromFiles } from '../skills/catalog';
import type { Database } from '../storage/database';
import { skillRevisions } from '../storage/schema';
import type { ResolvedReviewer } from './lineup';

export interface ExecuteDeps {
  db: Database;
  workspaceId: string;
  env: NodeJS.ProcessEnv;
}

async function loadRevision(deps: ExecuteDeps, revisionId: string) {
  const [row] = await deps.db.orm
    .select()
    .from(skillRevisions)
    .where(and(eq(skillRevisions.id, revisionId), eq(skillRevisions.workspaceId, deps.workspaceId)))
    .limit(1);
  if (!row) throw new RunFailure('skill_instance_not_found', `skill revision ${revisionId} was not found`);
  return row;
}

/** The SKILL.md body without its front matter: the instructions a model reviewer follows. */
export function skillInstructions(markdown: string): string {
  return markdown.replace(/^---\n[\s\S]*?\n---\n?/, '').trim();
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export async function executeReviewer(
  deps: ExecuteDeps,
  reviewer: ResolvedReviewer,
  input: ReviewInput,
): Promise<ReviewerResult> {
  const revision = reviewer.skillRevisionId ? await loadRevision(deps, reviewer.skillRevisionId) : null;
  const catalog = await catalogSkill(reviewer.reviewer.skillId);

  if (reviewer.engine === 'builtin') {
    if (!catalog && !revision) {
      throw new RunFailure(
        'skill_instance_not_found',
        `reviewer ${reviewer.reviewer.id} needs skill ${reviewer.reviewer.skillId}, which is not in the catalog`,
      );
    }
    const skill = revision ? await skillFromFiles(reviewer.reviewer.skillId, revision.files) : catalog;
    if (!skill)
      throw new RunFailure(
        'skill_instance_not_found',
        `skill ${reviewer.reviewer.skillId} could not be loaded`,
      );
    // Loaded on the first review, not at start: the rule engines (ast-grep's native parsers,
    // secretlint) are a large part of a cold start's module loading.
    const { runBuiltinSkill } = await import('../reviewers/builtin/engine');
    const result = await runBuiltinSkill(skill, input.files, {
      reviewerId: reviewer.key,
      signal: input.signal,
      runtimes: input.runtimes,
      readBase: input.readBase,
      readHead: input.readHead,
      fileBudgetMs: fileAnalysisBudgetMs(deps.env),
      // The service's event loop answers /healthz and the API meanwhile: matching goes to a thread.
      analysisThread: true,
    });
    if (revision) {
      result.skills = result.skills.map((s) => ({
        ...s,
        source: 'project_override' as const,
        executed_hash: revision.hash,
        ...(catalog ? { base_catalog_hash: catalog.hash } : {}),
      }));
    }
    return result;
  }

  const instructions = revision?.files['SKILL.md']
    ? skillInstructions(revision.files['SKILL.md'])
    : (reviewer.reviewer.instructions ?? (catalog ? skillInstructions(catalog.files['SKILL.md'] ?? '') : ''));
  if (!instructions) {
    throw new RunFailure(
      'skill_instance_not_found',
      `reviewer ${reviewer.reviewer.id} has no instructions and no skill`,
    );
  }
  // Loaded on first use: the AI SDK is ~0.15 s of a start that runs no model reviewer.
  const { runLlmReviewer } = await import('../reviewers/llm/engine');
  const result = await runLlmReviewer({
    reviewerId: reviewer.key,
    instructions,
    provider: reviewer.provider ?? '',
    model: reviewer.model ?? '',
    input,
    env: deps.env,
  });
  // What executed: a pinned revision, the workspace's own instructions, or the catalog skill.
  const own = !revision && reviewer.reviewer.instructions ? sha256(reviewer.reviewer.instructions) : null;
  const executedHash = revision?.hash ?? own ?? catalog?.hash ?? null;
  if (executedHash) {
    const override = revision !== null || own !== null;
    result.skills = [
      {
        skill_id: reviewer.reviewer.skillId,
        source: override ? 'project_override' : 'catalog',
        executed_hash: executedHash,
        ...(override && catalog ? { base_catalog_hash: catalog.hash } : {}),
      },
    ];
  }
  return result;
}
