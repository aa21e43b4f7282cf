/**
 * Reviewers and skills: reviewers with their governed model pin, their measured models and
 * events, and immutable skill revisions.
 *
 * Reviewers are workspace records: the catalog's are copied into every workspace at start, and
 * the ones users create belong to the workspace too, so every project of the workspace sees and
 * runs the same reviewers with the same pins. The operations are still project-scoped (the key
 * needs a project, as declared), but the project only authorizes the call; it does not filter.
 * Because a change reaches every project, creating or changing a reviewer, appending to its
 * events and importing a skill revision need workspace authority: a project-pinned key gets 403
 * `forbidden` (`workspaceWrite`); it still reads them and names them in its own reviews.
 */
import { and, asc, desc, eq, gt, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { ApiError, notFound } from '../core/errors';
import { skillFilePathSchema } from '../core/git-grammar';
import { defaultLlmModel, type ReviewerRow } from '../review/reviewer-catalog';
import { compatProviderName } from '../reviewers/llm/provider-config';
import { findSkillRevision, importSkillRevision, verifySkillRevision } from '../skills-store/revisions';
import { appendObjectEvent, type Tx } from '../storage/object-events';
import { reviewerModelStats, reviewers } from '../storage/schema';
import { type EventSubject, eventOperations } from './collections';
import { defineOperation, type Operation, type OperationContext } from './registry';
import { listOf, listQuery, timestamp } from './schemas/common';

const modelRef = z
  .string()
  .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._:/-]+$/, '"<provider>/<model>"')
  .max(200)
  .describe('"<provider>/<model>".');

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'SHA-256 hex digest');

export const reviewer = z.looseObject({
  object: z.literal('reviewer'),
  id: z.string().describe('Reviewer id, used in review lineups.'),
  name: z.string(),
  description: z.string().nullable(),
  model_pin: modelRef
    .nullable()
    .describe('The governed model pin: the model the reviewer runs on by default.'),
  skill_revision_id: z.string().nullable(),
  builtin: z.boolean().describe('True for reviewers shipped with the build.'),
  popularity: z.int().min(0).describe('Reviews that used it; the list is ordered by it, most popular first.'),
  engine: z.enum(['builtin', 'llm']).describe('`builtin`: rules (pinned to builtin/rules); `llm`: a model.'),
  skill_id: z.string().describe('The skill it runs: a catalog skill, or its own id for a custom reviewer.'),
  source: z.enum(['catalog', 'custom']),
  instructions: z
    .string()
    .nullable()
    .describe('What a custom reviewer looks for; null for catalog reviewers.'),
  created_at: timestamp,
  updated_at: timestamp,
});

export const reviewerModel = z.looseObject({
  object: z.literal('reviewer_model'),
  model: modelRef,
  pinned: z.boolean().describe('True for the current governed pin.'),
  runs: z.int().min(0).describe('Measured runs of the reviewer on this model.'),
  findings: z.int().min(0).describe('Findings it reported on this model.'),
  failures: z.int().min(0).describe('Runs on this model that failed.'),
  avg_ms: z.number().nullable().describe('Mean duration of a run; null before any.'),
  cost_usd: z.number().nullable().describe('Known spend on this model; null when unknown.'),
  measured_at: timestamp.nullable().describe('Last run on this model; null when never measured.'),
});

export const skillRevision = z.looseObject({
  object: z.literal('skill_revision'),
  id: z.string(),
  skill_id: z.string(),
  hash: sha256.describe('SHA-256 of the revision bytes; immutable.'),
  base_catalog_hash: sha256.nullable().describe('The catalog skill this revision overrides, when any.'),
  verified: z.boolean().describe('True when the stored bytes still hash to `hash`.'),
  computed_hash: sha256
    .nullable()
    .describe('The hash recomputed from the stored bytes at this read; null when they no longer parse.'),
  files: z.record(z.string(), z.string()).describe('Path → content of every file of the revision.'),
  created_at: timestamp,
});

const reviewerSlug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, ".", "_" and "-"');

export const reviewerCreateBody = z.strictObject({
  id: reviewerSlug.describe('Reviewer id to create (unique in the workspace).'),
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  instructions: z.string().min(1).max(100_000).describe('What the reviewer looks for and how it reports.'),
  model_pin: modelRef.optional(),
  skill_revision_id: z.string().min(1).max(200).optional(),
});

export const reviewerUpdateBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(2000).nullable().optional(),
    instructions: z.string().min(1).max(100_000).optional(),
    model_pin: modelRef.nullable().optional(),
    skill_revision_id: z.string().min(1).max(200).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

/** A relative `/`-separated path (core/git-grammar.ts): no `.`/`..` segments, backslashes or control characters. */
const skillFilePath = skillFilePathSchema;

export const skillImportBody = z.strictObject({
  skill_id: reviewerSlug.describe('Skill id (the catalog skill it overrides, or a new one).'),
  files: z
    .record(
      skillFilePath,
      z
        .string()
        .max(500_000)
        .refine((c) => !c.includes('\u0000'), 'text without NUL characters'),
    )
    .refine((f) => 'SKILL.md' in f, { message: 'files must include SKILL.md' })
    .refine((f) => Object.keys(f).length <= 200, { message: 'at most 200 files' })
    .describe('Path → content; must include SKILL.md.'),
  base_catalog_hash: sha256.optional().describe('Catalog hash the override is written against.'),
});

const reviewerIdParams = z.strictObject({ reviewer_id: z.string().min(1).max(200).describe('Reviewer id.') });

/** The one pin a rule reviewer (engine `builtin`) runs on. */
export const RULES_PIN = 'builtin/rules';

const envOf = (ctx: OperationContext) => ctx.services.config.env;

/** Providers a model pin may name: openai, anthropic and the OpenAI-compatible endpoint's name. */
export const pinProviders = (env: NodeJS.ProcessEnv) => ['openai', 'anthropic', compatProviderName(env)];

/** A governed pin must be one the reviewer's engine can run; throws 400 naming the rule otherwise. */
export function checkModelPin(
  reviewer: { id: string; engine: 'builtin' | 'llm' },
  pin: string,
  env: NodeJS.ProcessEnv,
) {
  if (reviewer.engine === 'builtin') {
    if (pin !== RULES_PIN) {
      throw new ApiError(
        'validation_failed',
        `reviewer ${reviewer.id} is a rule reviewer (engine builtin): it can only be pinned to ${RULES_PIN}, not ${pin}`,
        { field: 'model_pin', allowed: [RULES_PIN] },
      );
    }
    return;
  }
  const provider = pin.slice(0, pin.indexOf('/'));
  const allowed = pinProviders(env);
  if (!allowed.includes(provider)) {
    throw new ApiError(
      'validation_failed',
      `model pin ${pin} names provider "${provider}"; a model pin's provider must be one of ${allowed.join(', ')} (the OpenAI-compatible endpoint is named by SVC_LLM_COMPAT_NAME)`,
      { field: 'model_pin', allowed_providers: allowed },
    );
  }
}

export function toReviewerRecord(row: ReviewerRow) {
  return {
    object: 'reviewer' as const,
    id: row.id,
    name: row.name,
    description: row.description === '' ? null : row.description,
    model_pin: row.modelPin,
    skill_revision_id: row.skillRevisionId,
    builtin: row.source === 'catalog',
    popularity: row.uses,
    engine: row.engine,
    skill_id: row.skillId,
    source: row.source,
    instructions: row.instructions,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function findReviewer(tx: Tx, workspaceId: string, id: string, forUpdate = false) {
  const query = tx
    .select()
    .from(reviewers)
    .where(and(eq(reviewers.workspaceId, workspaceId), eq(reviewers.id, id)))
    .limit(1);
  const [row] = forUpdate ? await query.for('update') : await query;
  return row ?? null;
}

async function requireReviewer(ctx: OperationContext, id: string) {
  const row = await findReviewer(ctx.services.db.orm, ctx.workspaceId, id);
  if (!row) throw notFound('reviewer', id);
  return row;
}

/** A pinned skill revision must be the workspace's, and a rule reviewer's must be of its skill. */
async function checkSkillRevision(
  ctx: OperationContext,
  reviewer: { id: string; engine: 'builtin' | 'llm'; skillId: string },
  revisionId: string,
) {
  const revision = await findSkillRevision(ctx.services.db, ctx.workspaceId, revisionId);
  if (!revision) throw notFound('skill revision', revisionId);
  if (reviewer.engine === 'builtin' && revision.skillId !== reviewer.skillId) {
    throw new ApiError(
      'validation_failed',
      `skill revision ${revisionId} is of skill ${revision.skillId}; rule reviewer ${reviewer.id} runs skill ${reviewer.skillId} and can only pin a revision of it`,
      { field: 'skill_revision_id' },
    );
  }
}

/** Reviewer list cursor: the last row's (uses, id), in the list's order. */
function encodeReviewerCursor(row: ReviewerRow) {
  return Buffer.from(JSON.stringify([row.uses, row.id])).toString('base64url');
}

function decodeReviewerCursor(cursor: string | undefined): { uses: number; id: string } | null {
  if (!cursor) return null;
  try {
    const [uses, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (!Number.isInteger(uses) || typeof id !== 'string') throw new Error('bad cursor');
    return { uses: uses as number, id };
  } catch {
    throw new ApiError(
      'validation_failed',
      'cursor is not one this service issued; pass next_cursor unchanged',
    );
  }
}

const reviewerSubject: EventSubject = {
  objectType: 'reviewer',
  exists: async (ctx, id) => (await findReviewer(ctx.services.db.orm, ctx.workspaceId, id)) !== null,
};

const list = defineOperation({
  tool: 'reviewers_list',
  method: 'GET',
  path: '/api/v1/reviewers',
  summary: "List the workspace's reviewers, most popular first, with their governed model pin.",
  description:
    'Ordered by popularity (reviews that used the reviewer), then id. Reviewers are shared by the projects of the workspace.',
  scope: 'project',
  query: listQuery,
  response: listOf(reviewer),
  handler: async ({ query }, ctx) => {
    const after = decodeReviewerCursor(query.cursor);
    const rows = await ctx.services.db.orm
      .select()
      .from(reviewers)
      .where(
        and(
          eq(reviewers.workspaceId, ctx.workspaceId),
          after
            ? or(
                lt(reviewers.uses, after.uses),
                and(eq(reviewers.uses, after.uses), gt(reviewers.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(reviewers.uses), asc(reviewers.id))
      .limit(query.limit + 1);
    const data = rows.slice(0, query.limit);
    const last = data[data.length - 1];
    return {
      object: 'list' as const,
      data: data.map(toReviewerRecord),
      next_cursor: rows.length > query.limit && last ? encodeReviewerCursor(last) : null,
    };
  },
});

const get = defineOperation({
  tool: 'reviewers_get',
  method: 'GET',
  path: '/api/v1/reviewers/{reviewer_id}',
  summary: 'Read one reviewer and its pin.',
  scope: 'project',
  params: reviewerIdParams,
  response: reviewer,
  handler: async ({ params }, ctx) => toReviewerRecord(await requireReviewer(ctx, params.reviewer_id)),
});

const models = defineOperation({
  tool: 'reviewers_models',
  method: 'GET',
  path: '/api/v1/reviewers/{reviewer_id}/models',
  summary: 'Models measured for the reviewer, current pin flagged.',
  description:
    'Every model the reviewer ran on in this workspace, with what was measured, and the current governed pin (listed even before it ran). Current pin first, then most runs first.',
  scope: 'project',
  params: reviewerIdParams,
  query: listQuery,
  response: listOf(reviewerModel),
  handler: async ({ params, query }, ctx) => {
    const row = await requireReviewer(ctx, params.reviewer_id);
    const stats = await ctx.services.db.orm
      .select()
      .from(reviewerModelStats)
      .where(
        and(eq(reviewerModelStats.workspaceId, ctx.workspaceId), eq(reviewerModelStats.reviewerId, row.id)),
      );
    const entries = stats.map((s) => ({
      object: 'reviewer_model' as const,
      model: s.model,
      pinned: s.model === row.modelPin,
      runs: s.runs,
      findings: s.findings,
      failures: s.failures,
      avg_ms: s.runs > 0 ? Math.round(s.totalMs / s.runs) : null,
      cost_usd: s.costUsd,
      measured_at: s.lastUsedAt ? s.lastUsedAt.toISOString() : null,
    }));
    if (!entries.some((e) => e.pinned)) {
      entries.push({
        object: 'reviewer_model' as const,
        model: row.modelPin,
        pinned: true,
        runs: 0,
        findings: 0,
        failures: 0,
        avg_ms: null,
        cost_usd: null,
        measured_at: null,
      });
    }
    entries.sort(
      (a, b) =>
        Number(b.pinned) - Number(a.pinned) ||
        b.runs - a.runs ||
        (a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
    );
    // The list is small and built in memory; the cursor is the last model of the page.
    let start = 0;
    if (query.cursor) {
      let afterModel: unknown;
      try {
        afterModel = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
      } catch {
        afterModel = undefined;
      }
      const index = entries.findIndex((e) => e.model === afterModel);
      if (typeof afterModel !== 'string' || index < 0) {
        throw new ApiError(
          'validation_failed',
          'cursor is not one this service issued; pass next_cursor unchanged',
        );
      }
      start = index + 1;
    }
    const data = entries.slice(start, start + query.limit);
    const last = data[data.length - 1];
    const more = start + query.limit < entries.length;
    return {
      object: 'list' as const,
      data,
      next_cursor: more && last ? Buffer.from(JSON.stringify(last.model)).toString('base64url') : null,
    };
  },
});

const create = defineOperation({
  tool: 'reviewers_create',
  method: 'POST',
  path: '/api/v1/reviewers',
  summary: 'Create a reviewer.',
  description:
    'A custom model reviewer of the workspace: `instructions` say what it looks for. `model_pin` defaults to SVC_LLM_DEFAULT_MODEL (else openai/gpt-4o-mini); `skill_revision_id` pins an imported skill revision whose SKILL.md replaces the instructions. An existing id is 409 `conflict`.',
  scope: 'project',
  workspaceWrite: true,
  body: reviewerCreateBody,
  response: reviewer,
  status: 201,
  handler: async ({ body }, ctx) => {
    const env = envOf(ctx);
    const modelPin = body.model_pin ?? defaultLlmModel(env);
    const shape = { id: body.id, engine: 'llm' as const, skillId: body.id };
    checkModelPin(shape, modelPin, env);
    if (body.skill_revision_id) await checkSkillRevision(ctx, shape, body.skill_revision_id);
    const now = new Date();
    // The reviewer and its `created` event in one transaction: neither is there without the other.
    const row = await ctx.services.db.orm.transaction(async (tx) => {
      const [inserted] = await tx
        .insert(reviewers)
        .values({
          workspaceId: ctx.workspaceId,
          id: body.id,
          name: body.name,
          description: body.description ?? '',
          engine: 'llm',
          skillId: body.id,
          skillRevisionId: body.skill_revision_id ?? null,
          modelPin,
          instructions: body.instructions,
          source: 'custom',
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing()
        .returning();
      if (!inserted) {
        throw new ApiError(
          'conflict',
          `reviewer ${body.id} already exists in this workspace; choose another id or PATCH it`,
          {
            reviewer_id: body.id,
          },
        );
      }
      await appendObjectEvent(tx, {
        workspaceId: ctx.workspaceId,
        projectId: ctx.projectId,
        objectType: 'reviewer',
        objectId: inserted.id,
        kind: 'created',
        payload: { model_pin: inserted.modelPin },
        occurredAt: now,
        actor: ctx.principal.keyId,
      });
      return inserted;
    });
    return toReviewerRecord(row);
  },
});

const update = defineOperation({
  tool: 'reviewers_update',
  method: 'PATCH',
  path: '/api/v1/reviewers/{id}',
  summary: 'Update a reviewer.',
  description:
    'Changes only the fields sent. `model_pin` is the governed pin future runs use (null: back to the default); a rule reviewer stays on builtin/rules. A changed pin appends a `pin_changed` event.',
  scope: 'project',
  workspaceWrite: true,
  params: z.strictObject({ id: z.string().min(1).max(200).describe('Reviewer id.') }),
  body: reviewerUpdateBody,
  response: reviewer,
  handler: async ({ params, body }, ctx) => {
    const env = envOf(ctx);
    const current = await requireReviewer(ctx, params.id);
    const nextPin =
      body.model_pin === undefined
        ? current.modelPin
        : (body.model_pin ?? (current.engine === 'builtin' ? RULES_PIN : defaultLlmModel(env)));
    if (body.model_pin !== undefined) checkModelPin(current, nextPin, env);
    if (body.instructions !== undefined && current.engine === 'builtin') {
      throw new ApiError(
        'validation_failed',
        `reviewer ${current.id} is a rule reviewer: it runs its skill's rules, not instructions; pin a skill revision instead`,
        { field: 'instructions' },
      );
    }
    if (body.skill_revision_id) await checkSkillRevision(ctx, current, body.skill_revision_id);

    const row = await ctx.services.db.orm.transaction(async (tx) => {
      // Locked, so two concurrent pin changes each record the pin they really replaced.
      const locked = await findReviewer(tx, ctx.workspaceId, params.id, true);
      if (!locked) throw notFound('reviewer', params.id);
      const now = new Date();
      const [updated] = await tx
        .update(reviewers)
        .set({
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description ?? '' } : {}),
          ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
          ...(body.model_pin !== undefined ? { modelPin: nextPin } : {}),
          ...(body.skill_revision_id !== undefined ? { skillRevisionId: body.skill_revision_id } : {}),
          updatedAt: now,
        })
        .where(and(eq(reviewers.workspaceId, ctx.workspaceId), eq(reviewers.id, params.id)))
        .returning();
      if (!updated) throw notFound('reviewer', params.id);
      if (updated.modelPin !== locked.modelPin) {
        await appendObjectEvent(tx, {
          workspaceId: ctx.workspaceId,
          projectId: ctx.projectId,
          objectType: 'reviewer',
          objectId: updated.id,
          kind: 'pin_changed',
          payload: { from: locked.modelPin, to: updated.modelPin },
          occurredAt: now,
          actor: ctx.principal.keyId,
        });
      }
      return updated;
    });
    return toReviewerRecord(row);
  },
});

const textEntries = (value: unknown): Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : {};

function toSkillRevisionRecord(row: Awaited<ReturnType<typeof importSkillRevision>>['row']) {
  const { verified, computedHash } = verifySkillRevision(row);
  return {
    object: 'skill_revision' as const,
    id: row.id,
    skill_id: row.skillId,
    hash: row.hash,
    base_catalog_hash: row.baseCatalogHash,
    verified,
    computed_hash: computedHash,
    // A revision tampered into something that is no longer a file map shows what still is one.
    files: computedHash === null ? textEntries(row.files) : row.files,
    created_at: row.createdAt.toISOString(),
  };
}

const skillsImport = defineOperation({
  tool: 'skills_import',
  method: 'POST',
  path: '/api/v1/skill-imports',
  summary: 'Import an immutable skill revision.',
  description:
    "Content-addressed: the revision id and `hash` come from the files (SHA-256 over the sorted files). Importing the same files again answers 200 with the same revision. `base_catalog_hash`, when sent, must be the current catalog skill's hash (else 409 `conflict` naming both).",
  scope: 'project',
  workspaceWrite: true,
  body: skillImportBody,
  response: skillRevision,
  status: 201,
  alternateStatus: 200,
  handler: async ({ body }, ctx) => {
    const { row, created } = await importSkillRevision(ctx.services.db, ctx.workspaceId, body);
    if (!created) ctx.setStatus(200);
    return toSkillRevisionRecord(row);
  },
});

const skillsRevision = defineOperation({
  tool: 'skills_revision',
  method: 'GET',
  path: '/api/v1/skill-revisions/{revision_id}',
  summary: 'Read and verify an immutable skill revision.',
  description:
    'Recomputes the hash from the stored files: `verified` is false when they no longer match `hash`.',
  scope: 'project',
  params: z.strictObject({ revision_id: z.string().min(1).max(200).describe('Skill revision id.') }),
  response: skillRevision,
  handler: async ({ params }, ctx) => {
    const row = await findSkillRevision(ctx.services.db, ctx.workspaceId, params.revision_id);
    if (!row) throw notFound('skill revision', params.revision_id);
    return toSkillRevisionRecord(row);
  },
});

export const operations: Operation[] = [
  list,
  get,
  models,
  create,
  update,
  // A reviewer's events are the workspace's record of it (pin changes, notes): appending one is
  // a workspace-level write; reading them is not.
  ...eventOperations('reviewers', 'reviewers', 'id', reviewerSubject).map((op) =>
    op.method === 'GET' ? op : { ...op, workspaceWrite: true },
  ),
  skillsImport,
  skillsRevision,
];
