/**
 * The scorecard's catalogue: every check it measures (id, category, weight, title, the generic
 * remedy) and the ladder of levels a repository climbs. Levels are cumulative: a level is reached
 * when its checks and those of every level below pass. Level 0 is where every repository starts.
 *
 * Weights say how much a check moves the score (0–100, the weighted share of decided checks that
 * pass): what stops defects reaching the default branch (CI running the tests, the review check
 * being required, no open P0, no committed secrets) weighs most; signals about habits least.
 */

export const CHECK_RESULTS = ['pass', 'fail', 'unknown'] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];

export const CHECK_CATEGORIES = [
  'dependencies',
  'runtime',
  'testing',
  'ci',
  'quality',
  'ownership',
  'review',
  'security',
  'feedback',
  'knowledge',
] as const;
export type CheckCategory = (typeof CHECK_CATEGORIES)[number];

export const CHECK_IDS = [
  'lockfile_committed',
  'runtime_declared',
  'tests_present',
  'ci_runs_tests_on_pull_requests',
  'linter_enforced',
  'formatter_enforced',
  'type_checking',
  'codeowners',
  'review_check_required',
  'no_open_p0_on_default_branch',
  'secrets_absent',
  'fix_rate_30d',
  'median_time_to_fix_30d',
  'dismissal_rate_per_rule',
  'svc_json_declared',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export interface CheckDefinition {
  id: CheckId;
  category: CheckCategory;
  weight: number;
  title: string;
  /** What to do when it does not pass; evaluation may name the files or rules it is about. */
  remedy: string;
}

/** The name of svc's check on the code host, the one branch protection should require. */
export const REVIEW_CHECK_NAME = 'Service / Review';

export const CHECKS: Readonly<Record<CheckId, CheckDefinition>> = {
  lockfile_committed: {
    id: 'lockfile_committed',
    category: 'dependencies',
    weight: 8,
    title: 'A lockfile is committed for every package manager',
    remedy:
      'Commit the lockfile your package manager writes (package-lock.json, pnpm-lock.yaml, poetry.lock, go.sum, Cargo.lock, …) so every install resolves the same versions.',
  },
  runtime_declared: {
    id: 'runtime_declared',
    category: 'runtime',
    weight: 5,
    title: 'The runtime version of each language is declared',
    remedy:
      'Declare the runtime version the code needs (package.json engines.node, .nvmrc, .python-version, go.mod, …) or in svc.json `runtimes`.',
  },
  tests_present: {
    id: 'tests_present',
    category: 'testing',
    weight: 10,
    title: 'Tests exist beside the code',
    remedy:
      'Add tests for the code (test files by your language’s convention: *.test.ts, test_*.py, *_test.go, …).',
  },
  ci_runs_tests_on_pull_requests: {
    id: 'ci_runs_tests_on_pull_requests',
    category: 'ci',
    weight: 15,
    title: 'CI runs the tests on every pull request',
    remedy: 'Add a CI workflow triggered by pull requests that runs the test command.',
  },
  linter_enforced: {
    id: 'linter_enforced',
    category: 'quality',
    weight: 6,
    title: 'A linter is configured and CI runs it',
    remedy: 'Configure a linter (eslint, biome, ruff, golangci-lint, clippy, …) and run it in CI.',
  },
  formatter_enforced: {
    id: 'formatter_enforced',
    category: 'quality',
    weight: 4,
    title: 'A formatter is configured and CI checks it',
    remedy:
      'Configure a formatter (prettier, biome, black, ruff format, gofmt, rustfmt, …) and check it in CI.',
  },
  type_checking: {
    id: 'type_checking',
    category: 'quality',
    weight: 8,
    title: 'The main languages are type-checked in CI',
    remedy:
      'Type-check the code in CI: tsc for TypeScript (and JavaScript with checkJs), mypy or pyright for Python.',
  },
  codeowners: {
    id: 'codeowners',
    category: 'ownership',
    weight: 4,
    title: 'A CODEOWNERS file names who owns the code',
    remedy:
      'Add a CODEOWNERS file (root, .github/ or docs/) naming the people or teams who review each path.',
  },
  review_check_required: {
    id: 'review_check_required',
    category: 'review',
    weight: 10,
    title: `Branch protection requires the \`${REVIEW_CHECK_NAME}\` check on the default branch`,
    remedy: `Require the \`${REVIEW_CHECK_NAME}\` status check in the default branch's protection rules, so an open P0 blocks the merge.`,
  },
  no_open_p0_on_default_branch: {
    id: 'no_open_p0_on_default_branch',
    category: 'review',
    weight: 10,
    title: 'No P0 finding was left open on a merged pull request',
    remedy:
      'Fix the open P0 findings that were merged into the default branch, or dismiss them with a reason.',
  },
  secrets_absent: {
    id: 'secrets_absent',
    category: 'security',
    weight: 10,
    title: 'No credential was ever found in a reviewed change',
    remedy:
      'Rotate every credential a secret finding names (removing it from the code does not remove it from history), then fix or dismiss the finding.',
  },
  fix_rate_30d: {
    id: 'fix_rate_30d',
    category: 'feedback',
    weight: 4,
    title: 'Most findings of the last 30 days were fixed',
    remedy:
      'Fix findings before merging, or dismiss the wrong ones with a reason (`wontfix: …`) so the rules can be tuned.',
  },
  median_time_to_fix_30d: {
    id: 'median_time_to_fix_30d',
    category: 'feedback',
    weight: 3,
    title: 'Findings of the last 30 days were fixed quickly',
    remedy: 'Fix findings while their pull request is open: the fix prompt in the check’s details says how.',
  },
  dismissal_rate_per_rule: {
    id: 'dismissal_rate_per_rule',
    category: 'feedback',
    weight: 3,
    title: 'No rule is dismissed most of the time',
    remedy:
      'Turn off or downgrade the rules people keep dismissing (`.svc.yml` `rules:`), or record a learning that scopes them.',
  },
  svc_json_declared: {
    id: 'svc_json_declared',
    category: 'knowledge',
    weight: 3,
    title: 'The repository declares its knowledge in svc.json',
    remedy:
      'Add a valid svc.json at the repository root declaring its runtimes and conventions, so reviewers are told facts rather than guesses.',
  },
};

export interface LevelDefinition {
  level: number;
  /** Stable id of the level record (`lvl_1`). */
  id: string;
  name: string;
  description: string;
  requires: CheckId[];
}

export const LEVEL_ZERO = { level: 0, name: 'None' } as const;

/** The ladder, lowest first; each level also needs every level below it. */
export const LEVELS: readonly LevelDefinition[] = [
  {
    level: 1,
    id: 'lvl_1',
    name: 'Tracked',
    description: 'Builds are reproducible: dependencies are locked and the runtime is declared.',
    requires: ['lockfile_committed', 'runtime_declared'],
  },
  {
    level: 2,
    id: 'lvl_2',
    name: 'Tested',
    description: 'Tests exist and CI runs them on every pull request.',
    requires: ['tests_present', 'ci_runs_tests_on_pull_requests'],
  },
  {
    level: 3,
    id: 'lvl_3',
    name: 'Guarded',
    description: 'Linting, formatting and type checking are enforced by CI.',
    requires: ['linter_enforced', 'formatter_enforced', 'type_checking'],
  },
  {
    level: 4,
    id: 'lvl_4',
    name: 'Reviewed',
    description: `Code has owners, \`${REVIEW_CHECK_NAME}\` blocks merges on a P0, and no P0 was merged.`,
    requires: ['codeowners', 'review_check_required', 'no_open_p0_on_default_branch'],
  },
  {
    level: 5,
    id: 'lvl_5',
    name: 'Trusted',
    description:
      'No secret was committed, findings get fixed quickly, no rule is mostly noise, and the repository declares its knowledge.',
    requires: [
      'secrets_absent',
      'fix_rate_30d',
      'median_time_to_fix_30d',
      'dismissal_rate_per_rule',
      'svc_json_declared',
    ],
  },
];

/** The level a check belongs to (every check belongs to exactly one). */
export function levelOf(check: CheckId): number {
  return LEVELS.find((l) => l.requires.includes(check))?.level ?? 0;
}

export function levelName(level: number): string {
  return level === 0 ? LEVEL_ZERO.name : (LEVELS.find((l) => l.level === level)?.name ?? `Level ${level}`);
}
