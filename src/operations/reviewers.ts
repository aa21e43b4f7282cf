/**
 * Reviewers and skills: reviewers with their governed model pin, their measured models and
 * events, and immutable skill revisions. Declared per the spec's "Reviewers and skills"
 * endpoints; the behaviour belongs to a later issue, so every handler answers 501 by name.
 */
import { z } from 'zod';
import { notImplemented } from '../core/errors';
import { eventOperations } from './collections';
import { defineOperation, type Operation } from './registry';
import { idParam, listOf, listQuery, timestamp } from './schemas/common';

const pending = (tool: string) => async (): Promise<never> => {
  throw notImplemented(tool);
};

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
  created_at: timestamp,
  updated_at: timestamp,
});

export const reviewerModel = z.looseObject({
  object: z.literal('reviewer_model'),
  model: modelRef,
  pinned: z.boolean().describe('True for the current governed pin.'),
  runs: z.int().min(0).describe('Measured runs of the reviewer on this model.'),
  measured_at: timestamp.nullable(),
});

export const skillRevision = z.looseObject({
  object: z.literal('skill_revision'),
  id: z.string(),
  skill_id: z.string(),
  hash: sha256.describe('SHA-256 of the revision bytes; immutable.'),
  base_catalog_hash: sha256.nullable().describe('The catalog skill this revision overrides, when any.'),
  verified: z.boolean().describe('True when the stored bytes still hash to `hash`.'),
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

export const skillImportBody = z.strictObject({
  skill_id: reviewerSlug.describe('Skill id (the catalog skill it overrides, or a new one).'),
  files: z
    .record(z.string().min(1).max(300), z.string().max(500_000))
    .refine((f) => 'SKILL.md' in f, { message: 'files must include SKILL.md' })
    .describe('Path → content; must include SKILL.md.'),
  base_catalog_hash: sha256.optional().describe('Catalog hash the override is written against.'),
});

export const operations: Operation[] = [
  defineOperation({
    tool: 'reviewers_list',
    method: 'GET',
    path: '/api/v1/reviewers',
    summary: 'List reviewers, most popular first, with their governed model pin.',
    scope: 'project',
    query: listQuery,
    response: listOf(reviewer),
    notImplemented: true,
    handler: pending('reviewers_list'),
  }),
  defineOperation({
    tool: 'reviewers_get',
    method: 'GET',
    path: '/api/v1/reviewers/{reviewer_id}',
    summary: 'Read one reviewer and its pin.',
    scope: 'project',
    params: idParam('reviewer_id', 'Reviewer id.'),
    response: reviewer,
    notImplemented: true,
    handler: pending('reviewers_get'),
  }),
  defineOperation({
    tool: 'reviewers_models',
    method: 'GET',
    path: '/api/v1/reviewers/{reviewer_id}/models',
    summary: 'Models measured for the reviewer, current pin flagged.',
    scope: 'project',
    params: idParam('reviewer_id', 'Reviewer id.'),
    query: listQuery,
    response: listOf(reviewerModel),
    notImplemented: true,
    handler: pending('reviewers_models'),
  }),
  defineOperation({
    tool: 'reviewers_create',
    method: 'POST',
    path: '/api/v1/reviewers',
    summary: 'Create a reviewer.',
    scope: 'project',
    body: reviewerCreateBody,
    response: reviewer,
    status: 201,
    notImplemented: true,
    handler: pending('reviewers_create'),
  }),
  defineOperation({
    tool: 'reviewers_update',
    method: 'PATCH',
    path: '/api/v1/reviewers/{id}',
    summary: 'Update a reviewer.',
    scope: 'project',
    params: idParam('id', 'Reviewer id.'),
    body: reviewerUpdateBody,
    response: reviewer,
    notImplemented: true,
    handler: pending('reviewers_update'),
  }),
  ...eventOperations('reviewers', 'reviewers', 'id'),
  defineOperation({
    tool: 'skills_import',
    method: 'POST',
    path: '/api/v1/skill-imports',
    summary: 'Import an immutable skill revision.',
    scope: 'project',
    body: skillImportBody,
    response: skillRevision,
    status: 201,
    notImplemented: true,
    handler: pending('skills_import'),
  }),
  defineOperation({
    tool: 'skills_revision',
    method: 'GET',
    path: '/api/v1/skill-revisions/{revision_id}',
    summary: 'Read and verify an immutable skill revision.',
    scope: 'project',
    params: idParam('revision_id', 'Skill revision id.'),
    response: skillRevision,
    notImplemented: true,
    handler: pending('skills_revision'),
  }),
];
