/**
 * What a plan document says about itself, in an optional YAML front matter block:
 *
 *   ---
 *   requires_approval: false        # svc approves it itself once reviewed (default: true)
 *   supersedes: docs/plans/old.md   # or a list: this document replaces those plans
 *   ---
 *
 * Anything else in the block is left to people. A block that is not valid YAML, or a key of the
 * wrong type, is a named problem; the document is still reviewed, on the defaults.
 */
import { parse } from 'yaml';

export interface PlanFrontMatter {
  requiresApproval: boolean;
  supersedes: string[];
  /** What could not be used, by name (a plan-review gap). */
  problems: string[];
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

export function readFrontMatter(text: string): PlanFrontMatter {
  const result: PlanFrontMatter = { requiresApproval: true, supersedes: [], problems: [] };
  const block = FRONT_MATTER.exec(text)?.[1];
  if (block === undefined) return result;
  let data: unknown;
  try {
    data = parse(block);
  } catch (error) {
    result.problems.push(`the front matter is not valid YAML (${(error as Error).message.split('\n')[0]})`);
    return result;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return result;
  const fields = data as Record<string, unknown>;
  if ('requires_approval' in fields) {
    if (typeof fields.requires_approval === 'boolean') result.requiresApproval = fields.requires_approval;
    else result.problems.push('requires_approval must be true or false');
  }
  const supersedes = fields.supersedes;
  if (typeof supersedes === 'string') result.supersedes = [supersedes];
  else if (Array.isArray(supersedes) && supersedes.every((p) => typeof p === 'string'))
    result.supersedes = supersedes;
  else if (supersedes !== undefined && supersedes !== null)
    result.problems.push('supersedes must be a path or a list of paths');
  result.supersedes = result.supersedes.map((p) => p.trim().replace(/^\.?\//, '')).filter(Boolean);
  return result;
}
