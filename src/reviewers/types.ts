/**
 * What a reviewer engine is given and gives back. Engines (builtin rules, LLM) know nothing of
 * runs, storage or HTTP: they read a diff and the changed files and return findings.
 */

import type { FileRole } from '../core/file-roles';
import type { Diff, DiffFile, FindingDraft } from '../core/review';
import type { Gap } from '../core/runs';
import type { RuntimeStatement } from './builtin/runtime-version';

/** One changed file as a reviewer reads it: the diff entry and the new file's text. */
export interface ReviewFile {
  diff: DiffFile;
  /** The file's content at head; null when deleted, binary or skipped. */
  content: string | null;
  /** What the file is for (tests, docs, generated, ...); omitted: production code. */
  role?: FileRole;
  /**
   * The language `.gitattributes` gives the file (`linguist-language=<name>`, lower-cased): rules
   * read it in that language's grammar, or not at all when no rule language is it; omitted: by
   * its extension.
   */
  declaredLanguage?: string;
}

/**
 * Files as they were at the diff's base, by path (null: no such file, or not text). Rule
 * reviewers read the base of a file they found something in, to tell a defect the change only
 * touched (reformatted, re-indented, moved within the file) from one it introduced.
 */
export type BaseReader = (paths: readonly string[]) => Promise<Map<string, string | null>>;

export interface ReviewInput {
  diff: Diff;
  files: ReviewFile[];
  /** The base's files; omitted: every finding on a changed line is reported. */
  readBase?: BaseReader;
  /**
   * The head's files, any of the repository's (same form as readBase): rule reviewers read the
   * modules a changed file imports, so a helper there that runs a shell command is a sink for the
   * file's calls. Omitted: imports are not followed.
   */
  readHead?: BaseReader;
  /** Project guidance (`svc.review.guidance`), repository knowledge and current learnings. */
  guidance: string;
  learnings: string[];
  /** The repository knowledge (`svc.json`) in brief, for model reviewers; empty when unknown. */
  knowledge?: string;
  /**
   * The runtime versions the repository states (the knowledge's `runtimes`), for rules that only
   * apply to some versions; omitted or empty: none is known and those rules do not run.
   */
  runtimes?: readonly RuntimeStatement[];
  signal: AbortSignal;
  /** Where a model reviewer records what it sent and received (the run's transcript); omitted: nowhere. */
  transcript?: ModelTranscript;
}

/**
 * A run's transcript as a model reviewer writes to it: its prompts, the model's answers and any
 * tool calls, already redacted of secrets by the reviewer.
 */
export interface ModelTranscript {
  write(
    role: 'system' | 'user' | 'assistant' | 'tool',
    content: string,
    data?: Record<string, unknown>,
  ): Promise<void>;
  /** The model's first streamed token arrived (the run's `first_token_at`). */
  firstToken(): void;
}

export interface SkillProvenance {
  skill_id: string;
  source: 'catalog' | 'project_override';
  executed_hash: string;
  base_catalog_hash?: string;
}

export interface UsageItem {
  kind: string;
  description: string;
  quantity: number;
  unit: string;
  cost_usd: number | null;
}

export interface ReviewerResult {
  findings: FindingDraft[];
  gaps: Gap[];
  usage: UsageItem[];
  skills: SkillProvenance[];
  /** What actually executed (provider/model for LLM reviewers). */
  backend: { harness: string; provider: string | null; model: string | null };
}
