/**
 * The spec's "Collections": get by id and list for each collection, `preferences` get only,
 * dashboards create/update and the event append/read pairs. Record fields the spec does not
 * show are open (`looseObject`): each record carries `object`, `id`, `created_at`,
 * `updated_at` and the fields the spec names. The behaviour belongs to a later issue, so every
 * handler answers 501 `not_implemented` by name.
 */
import { z } from 'zod';
import { notImplemented } from '../core/errors';
import { defineOperation, type Operation } from './registry';
import { idParam, listOf, listQuery, timestamp } from './schemas/common';

const pending = (tool: string) => async (): Promise<never> => {
  throw notImplemented(tool);
};

const record = <O extends string, S extends z.ZodRawShape>(object: O, shape: S) =>
  z.looseObject({
    object: z.literal(object),
    id: z.string(),
    ...shape,
    created_at: timestamp,
    updated_at: timestamp,
  });

const severity = z.enum(['P0', 'P1', 'P2']);

/** Records of each collection, by collection name (hyphenated as in the path). */
export const collectionRecords = {
  checks: record('check', { name: z.string(), scorecard_id: z.string().nullable() }),
  findings: record('finding', {
    severity,
    path: z.string(),
    line: z.int().nullable(),
    task_id: z.string().describe('The review task that produced the finding.'),
    status: z.enum(['open', 'fixed', 'dismissed']),
  }),
  learnings: record('learning', {
    learning: z.string().describe('One-sentence fact.'),
    why: z.string().nullable(),
    learned_at: timestamp,
    forgets_at: timestamp.nullable().describe('The learning stops being used after this date.'),
  }),
  'metric-records': record('metric_record', {
    owner: z.string(),
    key: z.string(),
    value: z.unknown(),
  }),
  plans: record('plan', {
    status: z.enum(['discovered', 'proposed', 'reviewed', 'approved', 'active', 'completed', 'superseded']),
    approval_status: z.enum(['pending', 'approved', 'rejected']),
    requires_approval: z.boolean(),
    repo_write_mode: z.literal('draft_pr'),
    repo_write_status: z.enum(['not_requested', 'draft_pr_requested', 'draft_pr_opened', 'failed']),
    source_kind: z.enum(['repo', 'svc', 'task']),
    repo_artifact_path: z.string().nullable(),
    target_outcome: z.string().nullable(),
    summary: z.string().nullable(),
  }),
  'pull-requests': record('pull_request', {
    number: z.int(),
    review_status: z
      .enum([
        'trigger',
        'planning',
        'skipped',
        'errored',
        'reviewing',
        'reviews_available',
        'summarizing',
        'reviewed',
      ])
      .nullable(),
    last_reviewed_at: timestamp.nullable(),
    last_review_run_id: z.string().nullable(),
  }),
  'quick-actions': record('quick_action', { title: z.string() }),
  'repo-knowledge': record('repo_knowledge', {
    content: z.record(z.string(), z.unknown()).describe('The repository-knowledge file `svc.json`.'),
  }),
  'review-results': record('review_result', { task_id: z.string(), pr: z.int().nullable() }),
  'scorecard-levels': record('scorecard_level', { level: z.int(), name: z.string() }),
  scorecards: record('scorecard', { score: z.number().nullable() }),
  swarms: record('swarm', { goal: z.string() }),
  'timeline-events': record('timeline_event', {
    subject_type: z.string(),
    subject_id: z.string(),
    kind: z.string(),
  }),
  dashboards: record('dashboard', { name: z.string(), description: z.string().nullable() }),
} as const;

export type CollectionName = keyof typeof collectionRecords;

export const preference = record('preference', {
  notifications_read_at: timestamp.nullable(),
  notifications_cleared_at: timestamp.nullable(),
});

/** Event append body and event record, shared by every `/events` pair (reviewers too). */
export const eventAppendBody = z.strictObject({
  kind: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z][a-z0-9_.]*$/, 'lower-case dotted or snake_case name')
    .describe('Event kind, e.g. `note.added`.'),
  payload: z.record(z.string(), z.unknown()).default({}).describe('Event payload (JSON object).'),
  occurred_at: timestamp.optional().describe('When it happened; default now.'),
});

export const eventRecord = z.object({
  object: z.literal('event'),
  id: z.string(),
  subject_type: z.string(),
  subject_id: z.string(),
  kind: z.string(),
  payload: z.record(z.string(), z.unknown()),
  occurred_at: timestamp,
  created_at: timestamp,
});

/** The append-event and read-events operations on `/<collection>/{id}/events`. */
export function eventOperations(collection: string, tool: string, paramName: string): Operation[] {
  const params = idParam(paramName, `Id of the ${collection} record.`);
  return [
    defineOperation({
      tool: `${tool}_append_event`,
      method: 'POST',
      path: `/api/v1/${collection}/{${paramName}}/events`,
      summary: `Append an event to a ${collection} record.`,
      scope: 'project',
      params,
      body: eventAppendBody,
      response: eventRecord,
      status: 201,
      notImplemented: true,
      handler: pending(`${tool}_append_event`),
    }),
    defineOperation({
      tool: `${tool}_events`,
      method: 'GET',
      path: `/api/v1/${collection}/{${paramName}}/events`,
      summary: `Read the events of a ${collection} record, oldest first.`,
      scope: 'project',
      params,
      query: listQuery,
      response: listOf(eventRecord),
      notImplemented: true,
      handler: pending(`${tool}_events`),
    }),
  ];
}

const toolBase = (collection: string) => collection.replaceAll('-', '_');

function collectionOperations(collection: CollectionName): Operation[] {
  const item = collectionRecords[collection];
  const base = toolBase(collection);
  return [
    defineOperation({
      tool: `${base}_get`,
      method: 'GET',
      path: `/api/v1/${collection}/{id}`,
      summary: `Read one ${collection} record.`,
      scope: 'project',
      params: idParam('id', `Id of the ${collection} record.`),
      response: item,
      notImplemented: true,
      handler: pending(`${base}_get`),
    }),
    defineOperation({
      tool: `${base}_list`,
      method: 'GET',
      path: `/api/v1/${collection}`,
      summary: `List the project's ${collection} records, newest first.`,
      scope: 'project',
      query: listQuery,
      response: listOf(item),
      notImplemented: true,
      handler: pending(`${base}_list`),
    }),
  ];
}

const dashboardPanel = z.strictObject({
  title: z.string().min(1).max(200),
  metric_key: z.string().min(1).max(200).describe('Key of the metric records to plot.'),
  kind: z.enum(['number', 'line', 'bar', 'table']).default('number'),
});

export const dashboardCreateBody = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  panels: z.array(dashboardPanel).max(50).default([]),
});

export const dashboardUpdateBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(2000).nullable().optional(),
    panels: z.array(dashboardPanel).max(50).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one field to change' });

export const operations: Operation[] = [
  ...(Object.keys(collectionRecords) as CollectionName[]).flatMap(collectionOperations),
  defineOperation({
    tool: 'preferences_get',
    method: 'GET',
    path: '/api/v1/preferences/{id}',
    summary: 'Read per-project dashboard state (notification read and cleared markers).',
    scope: 'project',
    params: idParam('id', 'Id of the preferences record.'),
    response: preference,
    notImplemented: true,
    handler: pending('preferences_get'),
  }),
  defineOperation({
    tool: 'dashboards_create',
    method: 'POST',
    path: '/api/v1/dashboards',
    summary: "Create a metric board over the repository's review history.",
    scope: 'project',
    body: dashboardCreateBody,
    response: collectionRecords.dashboards,
    status: 201,
    notImplemented: true,
    handler: pending('dashboards_create'),
  }),
  defineOperation({
    tool: 'dashboards_update',
    method: 'PATCH',
    path: '/api/v1/dashboards/{id}',
    summary: 'Update a dashboard.',
    scope: 'project',
    params: idParam('id', 'Dashboard id.'),
    body: dashboardUpdateBody,
    response: collectionRecords.dashboards,
    notImplemented: true,
    handler: pending('dashboards_update'),
  }),
  ...eventOperations('learnings', 'learnings', 'id'),
  ...eventOperations('plans', 'plans', 'id'),
  ...eventOperations('pull-requests', 'pull_requests', 'id'),
  ...eventOperations('scorecards', 'scorecards', 'id'),
];
