/**
 * The one database schema, shared by PGlite (embedded default) and PostgreSQL.
 * Row types here are storage rows; the API's shapes live with the operations.
 *
 * To change it: edit this file, then `npm run db:generate` to write a migration into drizzle/.
 */
import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();
const updatedAt = () => ts('updated_at').notNull().defaultNow();

export const workspaces = pgTable('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    name: text('name').notNull(),
    repoFullName: text('repo_full_name').notNull(),
    installationId: integer('installation_id').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('projects_workspace_idx').on(t.workspaceId, t.createdAt)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    kind: text('kind').$type<'workspace' | 'project' | 'personal'>().notNull(),
    projectId: text('project_id').references(() => projects.id),
    name: text('name').notNull(),
    /** SHA-256 hex of the secret; the secret itself is never stored. */
    digest: text('digest').notNull(),
    /** First characters of the secret, so a user can tell keys apart in a list. */
    hint: text('hint').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_digest_idx').on(t.digest)],
);

export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    /** The key holder: the id of the API key that sent the request. */
    holder: text('holder').notNull(),
    key: text('key').notNull(),
    workspaceId: text('workspace_id').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state').$type<'in_progress' | 'done'>().notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.holder, t.key] }), index('idempotency_expires_idx').on(t.expiresAt)],
);

export const tasks = pgTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id'),
    kind: text('kind').notNull(),
    title: text('title').notNull().default(''),
    input: jsonb('input').$type<Record<string, unknown>>().notNull().default({}),
    /** Revision of the task's configuration (reviews); a run executes the revision it was created with. */
    revision: integer('revision').notNull().default(1),
    /** Set when the platform paused the task, e.g. `task_auto_paused_repeat_failure`. */
    pausedReason: text('paused_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('tasks_project_idx').on(t.workspaceId, t.projectId, t.kind, t.createdAt)],
);

export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    taskId: text('task_id')
      .notNull()
      .references(() => tasks.id),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id'),
    kind: text('kind').notNull(),
    status: text('status').$type<'pending' | 'running' | 'completed' | 'failed' | 'canceled'>().notNull(),
    /** The task configuration revision and input this run executes (frozen at creation). */
    taskRevision: integer('task_revision').notNull().default(1),
    input: jsonb('input').$type<Record<string, unknown>>().notNull().default({}),
    retryOf: text('retry_of'),
    retryCount: integer('retry_count').notNull().default(0),
    phase: text('phase'),
    statusText: text('status_text'),
    currentStep: text('current_step'),
    progressPct: integer('progress_pct'),
    result: jsonb('result'),
    error: jsonb('error').$type<{ code: string; message: string; [k: string]: unknown }>(),
    warnings: jsonb('warnings').$type<string[]>().notNull().default([]),
    gaps: jsonb('gaps').$type<{ code: string; message: string }[]>().notNull().default([]),
    usage: jsonb('usage').$type<Record<string, unknown>>().notNull().default({}),
    /** null when the cost is unknown; never 0 to mean unknown. */
    costUsd: numeric('cost_usd', { precision: 14, scale: 6, mode: 'number' }),
    backend: jsonb('backend').$type<Record<string, unknown>>().notNull().default({}),
    limits: jsonb('limits').$type<Record<string, unknown>>().notNull().default({}),
    skills: jsonb('skills').$type<Record<string, unknown>[]>().notNull().default([]),
    seedGraph: jsonb('seed_graph').$type<Record<string, unknown>>(),
    terminalEventCount: integer('terminal_event_count').notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: ts('lease_expires_at'),
    heartbeatAt: ts('heartbeat_at'),
    progressAt: ts('progress_at'),
    /** Earliest time the run may be claimed. */
    availableAt: ts('available_at').notNull().defaultNow(),
    createdAt: createdAt(),
    queuedAt: ts('queued_at').notNull().defaultNow(),
    dequeuedAt: ts('dequeued_at'),
    startedAt: ts('started_at'),
    firstTokenAt: ts('first_token_at'),
    finishedAt: ts('finished_at'),
    /** Timestamps as the executing worker's own clock saw them (the spec's runner_clock). */
    runnerClock: jsonb('runner_clock').$type<Record<string, string>>().notNull().default({}),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('runs_task_idx').on(t.taskId, t.createdAt),
    // The claim query's index: oldest available pending run first.
    index('runs_pending_idx').on(t.availableAt, t.createdAt).where(sql`status = 'pending'`),
    index('runs_running_lease_idx').on(t.leaseExpiresAt).where(sql`status = 'running'`),
    index('runs_project_created_idx').on(t.projectId, t.createdAt),
  ],
);

/** The transcript of a run: notes, model messages and tool calls, in order. */
export const runMessages = pgTable(
  'run_messages',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: text('id').notNull(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id),
    taskId: text('task_id').notNull(),
    role: text('role').$type<'note' | 'system' | 'user' | 'assistant' | 'tool'>().notNull(),
    content: text('content').notNull(),
    data: jsonb('data'),
    createdAt: createdAt(),
  },
  (t) => [index('run_messages_task_idx').on(t.taskId, t.seq)],
);

/** Processes that execute runs; their heartbeat says they are alive. */
export const workers = pgTable('workers', {
  id: text('id').primaryKey(),
  hostname: text('hostname').notNull(),
  pid: integer('pid').notNull(),
  startedAt: ts('started_at').notNull().defaultNow(),
  heartbeatAt: ts('heartbeat_at').notNull().defaultNow(),
  stoppedAt: ts('stopped_at'),
  draining: boolean('draining').notNull().default(false),
});

/** Append-only events on objects (timeline events, and the `…/events` operations). */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id'),
    objectType: text('object_type').notNull(),
    objectId: text('object_id').notNull(),
    kind: text('kind').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    actor: text('actor'),
    createdAt: createdAt(),
  },
  (t) => [index('events_object_idx').on(t.objectType, t.objectId, t.createdAt)],
);
