import { z } from 'zod';
import { branchNameSchema } from './git-grammar';

/**
 * Every setting svc understands, with its scope, schema and default. Reads merge stored values
 * over these defaults, so an unconfigured project behaves sensibly.
 */
const checkConclusion = z.enum(['action_required', 'failure', 'neutral', 'success']);

export const PROJECT_SETTINGS = {
  'svc.review.enabled': { schema: z.boolean(), default: true, doc: 'Automatic review of pull requests.' },
  'svc.review.guidance': {
    schema: z.string().max(20_000),
    default: '',
    doc: 'Project-specific instruction added to every reviewer.',
  },
  'svc.review.budget_usd': {
    schema: z.number().min(0).max(10_000),
    default: 1,
    doc: 'Scale signal for how wide a lineup the planner buys; not a ceiling.',
  },
  'svc.repository.default_branch': {
    schema: branchNameSchema.nullable(),
    default: null,
    doc:
      'Local code host only: the branch pull requests without refs/pull/N/base are compared with and merge into. ' +
      'null: what the repository declares (a bare repository HEAD, origin/HEAD, init.defaultBranch), else an existing main or master; never the branch checked out in a work tree.',
  },
  'svc.brakes.paused': {
    schema: z.boolean(),
    default: false,
    doc: 'When true every new run fails before it starts with `project_paused`.',
  },
  'svc.brakes.approval_window': {
    schema: z
      .object({ start: z.iso.datetime({ offset: true }), end: z.iso.datetime({ offset: true }) })
      .nullable(),
    default: null,
    doc:
      'An absolute span, not a daily window: `{"start", "end"}`, two ISO 8601 times with an offset (e.g. `2026-12-01T09:00:00Z`). ' +
      'When set, runs may start only between them; before `start` and after `end` they fail with `project_paused`. null: no window.',
  },
  'svc.brakes.spend_cap_usd': {
    schema: z.number().min(0).nullable(),
    default: null,
    doc: 'Known spend of the last 30 days at which new runs fail with `spend_cap_reached`. null: no cap.',
  },
  'svc.brakes.run_budget': {
    schema: z.number().int().min(0).nullable(),
    default: null,
    doc: 'Runs allowed per rolling 24 hours; past it new runs fail with `budget_exceeded`. null: no budget.',
  },
} as const;

export const WORKSPACE_SETTINGS = {
  'svc.checks.p0_conclusion': {
    schema: checkConclusion,
    default: 'action_required',
    doc: 'Check conclusion while a P0 finding is open.',
  },
  'svc.checks.p1_conclusion': {
    schema: checkConclusion,
    default: 'neutral',
    doc: 'Check conclusion while P1 (and no P0) findings are open.',
  },
  'svc.checks.p2_conclusion': {
    schema: checkConclusion,
    default: 'success',
    doc: 'Check conclusion while only P2 findings (or none) are open.',
  },
} as const;

type Registry = Record<string, { schema: z.ZodType; default: unknown; doc: string }>;
type Values<R extends Registry> = { [K in keyof R]: z.infer<R[K]['schema']> };

export type ProjectSettings = Values<typeof PROJECT_SETTINGS>;
export type WorkspaceSettings = Values<typeof WORKSPACE_SETTINGS>;

function schemaFor<R extends Registry>(registry: R) {
  const shape = Object.fromEntries(Object.entries(registry).map(([k, v]) => [k, v.schema.optional()]));
  return z.strictObject(shape) as z.ZodType<Partial<Values<R>>>;
}

/** Partial update bodies: unknown keys are rejected so a typo never silently does nothing. */
export const projectSettingsPatch = schemaFor(PROJECT_SETTINGS);
export const workspaceSettingsPatch = schemaFor(WORKSPACE_SETTINGS);

function resolve<R extends Registry>(registry: R, stored: Record<string, unknown>): Values<R> {
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(registry)) {
    const parsed = def.schema.safeParse(stored[key]);
    out[key] = key in stored && parsed.success ? parsed.data : def.default;
  }
  return out as Values<R>;
}

export const resolveProjectSettings = (stored: Record<string, unknown>) => resolve(PROJECT_SETTINGS, stored);
export const resolveWorkspaceSettings = (stored: Record<string, unknown>) =>
  resolve(WORKSPACE_SETTINGS, stored);
