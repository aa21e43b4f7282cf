/**
 * The repository's own review configuration: `.svc.yml` at its root, read at the reviewed head
 * (like a linter's config, it travels with the code it configures; a change to it shows in the
 * diff, and so does every inline suppression).
 *
 * ```yaml
 * paths:
 *   exclude: ["legacy/**"]          # never reviewed
 *   tests: ["qa/**", "**\/*_check.py"]  # extra test globs: never P0, production-only rules skip them
 * rules:
 *   security/weak-hash: { severity: P2 }
 *   correctness/debug-statement: { disable: true }   # or just `off`
 * guidance: |
 *   Model reviewers read this with every review.
 * ```
 * A file that does not parse or holds unknown keys is a named gap; the review goes on with the
 * defaults rather than silently half-applying it.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SEVERITIES, type Severity } from '../core/review';

export const REPO_CONFIG_PATH = '.svc.yml';

/** `off` is short for `{ disable: true }`. */
const ruleSettingSchema = z.preprocess(
  (v) => (v === 'off' ? { disable: true } : v),
  z
    .object({ severity: z.enum(SEVERITIES).optional(), disable: z.boolean().optional() })
    .strict()
    .transform((v): RuleSetting => ({ disable: v.disable ?? false, severity: v.severity })),
);

const repoConfigSchema = z
  .object({
    paths: z
      .object({
        exclude: z.array(z.string().min(1)).default([]),
        tests: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ exclude: [], tests: [] }),
    rules: z.record(z.string().regex(/^[a-z0-9-]+(\/[a-z0-9-]+)?$/), ruleSettingSchema).default({}),
    guidance: z.string().default(''),
  })
  .strict();

export interface RuleSetting {
  disable: boolean;
  severity: Severity | undefined;
}

export interface RepoConfig {
  paths: { exclude: string[]; tests: string[] };
  /** By rule id: `skill/rule` or the bare `rule` (every skill's rule of that name). */
  rules: Record<string, RuleSetting>;
  guidance: string;
}

export const DEFAULT_REPO_CONFIG: RepoConfig = { paths: { exclude: [], tests: [] }, rules: {}, guidance: '' };

export type RepoConfigResult = { config: RepoConfig; error: null } | { config: RepoConfig; error: string };

/** Parses `.svc.yml`; null or empty text is the defaults. */
export function parseRepoConfig(text: string | null): RepoConfigResult {
  if (text === null || text.trim() === '') return { config: DEFAULT_REPO_CONFIG, error: null };
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    return { config: DEFAULT_REPO_CONFIG, error: `not YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  const parsed = repoConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the file';
    return { config: DEFAULT_REPO_CONFIG, error: `${where}: ${issue?.message ?? 'invalid'}` };
  }
  return { config: parsed.data, error: null };
}

/** The setting for a finding's rule: the full id wins over the bare rule name. */
export function ruleSetting(config: RepoConfig, ruleId: string): RuleSetting | undefined {
  const bare = ruleId.slice(ruleId.indexOf('/') + 1);
  return config.rules[ruleId] ?? config.rules[bare];
}
