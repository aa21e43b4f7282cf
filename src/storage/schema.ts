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
import type { AutofixRounds } from '../core/autofix-rounds';
import type { LearningScope } from '../core/learning-scope';
import type { ApprovalStatus, PlanStatus, RepoWriteStatus } from '../core/plans';

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
    /** Merged pull requests since the last study pass; the tenth starts one. */
    mergesSinceStudy: integer('merges_since_study').notNull().default(0),
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
    /**
     * The swarm task that created (or adopted) this task as one of its children; null for a task
     * of its own. Written in the transaction that creates the child, so a swarm never loses one.
     */
    parentTaskId: text('parent_task_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('tasks_project_idx').on(t.workspaceId, t.projectId, t.kind, t.createdAt),
    index('tasks_parent_idx').on(t.parentTaskId).where(sql`parent_task_id IS NOT NULL`),
  ],
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
  (t) => [
    index('events_object_idx').on(t.objectType, t.objectId, t.createdAt),
    // The timeline and unread counts read a workspace's newest events first: without this
    // they sorted every event of the workspace (31 ms at 400k events on PostgreSQL, 0.2 ms with it).
    index('events_workspace_time_idx').on(t.workspaceId, t.createdAt, t.id),
  ],
);

/** Where a pull request stands on its code host, as the host last said. */
export type PullRequestState = 'open' | 'closed' | 'merged';

/** A pull request svc has seen, with its review state (the spec's pull request row). */
export const pullRequests = pgTable(
  'pull_requests',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    number: integer('number').notNull(),
    title: text('title').notNull().default(''),
    author: text('author'),
    draft: boolean('draft').notNull().default(false),
    state: text('state').$type<PullRequestState>().notNull().default('open'),
    baseRef: text('base_ref'),
    headRef: text('head_ref'),
    baseSha: text('base_sha'),
    headSha: text('head_sha'),
    /** trigger, planning, skipped, errored, reviewing, reviews_available, summarizing, reviewed */
    reviewStatus: text('review_status'),
    lastReviewedAt: ts('last_reviewed_at'),
    lastReviewRunId: text('last_review_run_id'),
    /** `@service review off` turns automatic review off for this pull request only. */
    autoReview: boolean('auto_review').notNull().default(true),
    autoReviewOffReason: text('auto_review_off_reason'),
    /** Merges count toward the study pass: set when a `closed` event says merged. */
    mergedAt: ts('merged_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('pull_requests_number_idx').on(t.projectId, t.number)],
);

/**
 * The findings ledger. One row per defect per ledger (a pull request, or one range review),
 * recognised again across runs by its fingerprint.
 */
export const findings = pgTable(
  'findings',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    /** `pr:<pull_request id>` or `task:<review task id>` for a commit-range review. */
    ledgerKey: text('ledger_key').notNull(),
    pullRequestId: text('pull_request_id'),
    fingerprint: text('fingerprint').notNull(),
    status: text('status').$type<'open' | 'fixed' | 'dismissed'>().notNull(),
    severity: text('severity').$type<'P0' | 'P1' | 'P2'>().notNull(),
    path: text('path').notNull(),
    line: integer('line').notNull(),
    endLine: integer('end_line').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    rule: text('rule').notNull(),
    category: text('category').notNull(),
    reviewers: jsonb('reviewers').$type<string[]>().notNull().default([]),
    suggestion: text('suggestion'),
    /** The normalized source the finding points at; gone at a later head means fixed. */
    anchorText: text('anchor_text').notNull(),
    /** The review task that produced it, and the runs that first and last reported it. */
    taskId: text('task_id').notNull(),
    firstRunId: text('first_run_id').notNull(),
    lastRunId: text('last_run_id').notNull(),
    commitSha: text('commit_sha'),
    dismissedReason: text('dismissed_reason'),
    dismissedAt: ts('dismissed_at'),
    fixedAt: ts('fixed_at'),
    fixedRunId: text('fixed_run_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('findings_identity_idx').on(t.ledgerKey, t.fingerprint),
    index('findings_project_idx').on(t.projectId, t.createdAt),
    index('findings_last_run_idx').on(t.lastRunId),
  ],
);

/**
 * Which findings each review run reported. A finding's row follows its latest report, so a
 * review's own list is kept here: a later review of the same pull request does not take it over.
 */
export const runFindings = pgTable(
  'run_findings',
  {
    runId: text('run_id').notNull(),
    findingId: text('finding_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.findingId] })],
);

/** One row per completed review pass: the spec's review-results collection. */
export const reviewResults = pgTable(
  'review_results',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    taskId: text('task_id').notNull(),
    runId: text('run_id').notNull(),
    pullRequestId: text('pull_request_id'),
    baseSha: text('base_sha').notNull(),
    headSha: text('head_sha').notNull(),
    lineup: jsonb('lineup').$type<Record<string, unknown>[]>().notNull().default([]),
    plan: jsonb('plan').$type<Record<string, unknown>>().notNull().default({}),
    counts: jsonb('counts').$type<Record<string, number>>().notNull().default({}),
    gaps: jsonb('gaps').$type<{ code: string; message: string }[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('review_results_project_idx').on(t.projectId, t.createdAt)],
);

/** Reviewers: the catalog's (workspace copies, made at start) and ones users create. */
export const reviewers = pgTable(
  'reviewers',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    /** `builtin` (rules) or `llm`. */
    engine: text('engine').$type<'builtin' | 'llm'>().notNull(),
    skillId: text('skill_id').notNull(),
    /** Pinned immutable skill revision, or null for the catalog skill. */
    skillRevisionId: text('skill_revision_id'),
    /** The governed model pin: `builtin/rules` for rule reviewers, or `<provider>/<model>`. */
    modelPin: text('model_pin').notNull(),
    instructions: text('instructions'),
    source: text('source').$type<'catalog' | 'custom'>().notNull(),
    uses: integer('uses').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('reviewers_uses_idx').on(t.workspaceId, t.uses),
  ],
);

/** What each reviewer measured on each model it ran with. */
export const reviewerModelStats = pgTable(
  'reviewer_model_stats',
  {
    workspaceId: text('workspace_id').notNull(),
    reviewerId: text('reviewer_id').notNull(),
    model: text('model').notNull(),
    runs: integer('runs').notNull().default(0),
    findings: integer('findings').notNull().default(0),
    failures: integer('failures').notNull().default(0),
    totalMs: integer('total_ms').notNull().default(0),
    costUsd: numeric('cost_usd', { precision: 14, scale: 6, mode: 'number' }),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.reviewerId, t.model] })],
);

/** Immutable, content-addressed skill revisions (imports and project overrides). */
export const skillRevisions = pgTable(
  'skill_revisions',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    skillId: text('skill_id').notNull(),
    /** SHA-256 over the sorted files, as computed at import. */
    hash: text('hash').notNull(),
    baseCatalogHash: text('base_catalog_hash'),
    files: jsonb('files').$type<Record<string, string>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('skill_revisions_hash_idx').on(t.workspaceId, t.hash)],
);

/** Learnings: one-sentence facts later reviews are told, until they are forgotten. */
export const learnings = pgTable(
  'learnings',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    learning: text('learning').notNull(),
    why: text('why').notNull().default(''),
    learnedAt: ts('learned_at').notNull().defaultNow(),
    forgetsAt: ts('forgets_at'),
    /** What rule reviewers do with it (`LearningScope`); null: a sentence for models only. */
    scope: jsonb('scope').$type<LearningScope>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('learnings_project_idx').on(t.projectId, t.forgetsAt)],
);

/**
 * Repository knowledge (the spec's `svc.json`): one record per project, replaced by each refresh
 * (setup, planner passes). `content` is the derived record with the repository's declared
 * overrides applied; `gaps` name what could not be read.
 */
export const repoKnowledge = pgTable(
  'repo_knowledge',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    content: jsonb('content').$type<Record<string, unknown>>().notNull(),
    gaps: jsonb('gaps').$type<{ code: string; message: string }[]>().notNull().default([]),
    commitSha: text('commit_sha').notNull(),
    /** What refreshed it last: `setup`, `review`, … */
    refreshedBy: text('refreshed_by').notNull(),
    refreshedAt: ts('refreshed_at').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('repo_knowledge_project_idx').on(t.projectId)],
);

/** Code-host installations (GitHub App installations, from `installation` webhooks). */
export const installations = pgTable('installations', {
  /** GitHub's installation id: the value for `repository.installation_id`. */
  id: integer('id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  kind: text('kind').$type<'github'>().notNull().default('github'),
  accountLogin: text('account_login').notNull(),
  accountType: text('account_type'),
  /** Repositories the installation was granted, as `owner/repo`. */
  repositories: jsonb('repositories').$type<string[]>().notNull().default([]),
  suspendedAt: ts('suspended_at'),
  deletedAt: ts('deleted_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Every webhook delivery received, deduplicated by `X-GitHub-Delivery`, processed as a run. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    event: text('event').notNull(),
    action: text('action'),
    installationId: integer('installation_id'),
    repository: text('repository'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** received → processed | ignored | failed; `reason` says why when not processed. */
    status: text('status').$type<'received' | 'processed' | 'ignored' | 'failed'>().notNull(),
    reason: text('reason'),
    taskId: text('task_id'),
    receivedAt: ts('received_at').notNull().defaultNow(),
    processedAt: ts('processed_at'),
  },
  (t) => [index('webhook_deliveries_received_idx').on(t.receivedAt)],
);

/**
 * Refused webhook requests (bad signature, unreadable body), counted per reason and hour: never
 * stored as deliveries, and an unauthenticated flood adds at most one row per reason per hour.
 */
export const webhookRejections = pgTable(
  'webhook_rejections',
  {
    reason: text('reason').notNull(),
    hour: ts('hour').notNull(),
    count: integer('count').notNull(),
    /** The headers of the latest refused request of the hour, cut short: they are untrusted. */
    lastDeliveryId: text('last_delivery_id'),
    lastEvent: text('last_event'),
    lastAt: ts('last_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.reason, t.hour] })],
);

/** The `Service / Review` check run of a pull request head. */
export const checkRuns = pgTable(
  'check_runs',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    pullRequestId: text('pull_request_id').notNull(),
    headSha: text('head_sha').notNull(),
    /** The code host's id of the check run, once created there. */
    externalId: text('external_id'),
    status: text('status').$type<'queued' | 'in_progress' | 'completed'>().notNull(),
    conclusion: text('conclusion'),
    title: text('title').notNull().default(''),
    /** The check's output as last posted: its summary, and its text (a verdict's fix prompt). */
    summary: text('summary'),
    outputText: text('output_text'),
    /** The autofix rounds counted when a verdict was posted (core/autofix-rounds.ts); null before. */
    autofix: jsonb('autofix').$type<AutofixRounds>(),
    reviewTaskId: text('review_task_id'),
    reviewRunId: text('review_run_id'),
    /** When the check completes `neutral` with "still reviewing" if the review has not landed. */
    deadlineAt: ts('deadline_at'),
    deadlinePassed: boolean('deadline_passed').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('check_runs_head_idx').on(t.pullRequestId, t.headSha)],
);

/** What svc posted on a pull request: inline finding comments (with their thread) and the summary. */
export const postedComments = pgTable(
  'posted_comments',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    pullRequestId: text('pull_request_id').notNull(),
    kind: text('kind').$type<'inline' | 'summary' | 'reply'>().notNull(),
    /** The finding an inline comment is about (its thread dismisses or fixes it). */
    findingId: text('finding_id'),
    /** The code host's comment id. */
    externalId: text('external_id').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('posted_comments_finding_idx').on(t.pullRequestId, t.findingId),
    index('posted_comments_external_idx').on(t.externalId),
  ],
);

/** Plans: markdown documents found in the repository (or proposed), each reviewed once. */
export const plans = pgTable(
  'plans',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    status: text('status').$type<PlanStatus>().notNull().default('discovered'),
    approvalStatus: text('approval_status').$type<ApprovalStatus>().notNull().default('pending'),
    requiresApproval: boolean('requires_approval').notNull().default(true),
    repoWriteMode: text('repo_write_mode').notNull().default('draft_pr'),
    repoWriteStatus: text('repo_write_status').$type<RepoWriteStatus>().notNull().default('not_requested'),
    sourceKind: text('source_kind').$type<'repo' | 'svc' | 'task'>().notNull(),
    repoArtifactPath: text('repo_artifact_path'),
    targetOutcome: text('target_outcome'),
    summary: text('summary'),
    /** The plan-review task started for this document. */
    reviewTaskId: text('review_task_id'),
    score: jsonb('score').$type<Record<string, unknown>>(),
    /** The draft pull request svc opened once the plan was approved. */
    draftPullRequestNumber: integer('draft_pull_request_number'),
    draftPullRequestUrl: text('draft_pull_request_url'),
    /** Why the code host refused the draft pull request (`repo_write_status` failed). */
    repoWriteError: text('repo_write_error'),
    /** The plan whose document declared it replaces this one. */
    supersededBy: text('superseded_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('plans_artifact_idx').on(t.projectId, t.repoArtifactPath)],
);

/**
 * Scorecards: a project's readiness score at one commit and how it was earned (src/scorecards/).
 * Each recompute writes a new scorecard with its checks and quick actions; the previous one stays
 * as history (`previous_scorecard_id`), and a `computed` event on the new one says what changed.
 */
export const scorecards = pgTable(
  'scorecards',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    /** The default-branch commit the facts were read from; null when nothing of the tree was read. */
    commitSha: text('commit_sha'),
    /** The repository knowledge record the checks read (`rkn_…`). */
    knowledgeId: text('knowledge_id'),
    /** 0–100, the weighted share of decided checks that pass; null when no check could be decided. */
    score: integer('score'),
    level: integer('level').notNull(),
    /** `{level, name, needs: [check ids]}`; null at the top of the ladder. */
    nextLevel: jsonb('next_level').$type<{ level: number; name: string; needs: string[] } | null>(),
    counts: jsonb('counts').$type<{ pass: number; fail: number; unknown: number }>().notNull(),
    gaps: jsonb('gaps').$type<{ code: string; message: string }[]>().notNull().default([]),
    /** What asked for it: `setup`, `study`, `request`. */
    trigger: text('trigger').notNull(),
    /** The scorecard task that computed it. */
    taskId: text('task_id'),
    previousScorecardId: text('previous_scorecard_id'),
    computedAt: ts('computed_at').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('scorecards_project_idx').on(t.projectId, t.computedAt)],
);

/** One measured check of a scorecard: its result, the evidence it was judged from, the remedy. */
export const scorecardChecks = pgTable(
  'scorecard_checks',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    scorecardId: text('scorecard_id').notNull(),
    /** The catalogue's check id (`lockfile_committed`). */
    check: text('check').notNull(),
    title: text('title').notNull(),
    category: text('category').notNull(),
    weight: integer('weight').notNull(),
    result: text('result').$type<'pass' | 'fail' | 'unknown'>().notNull(),
    /** `{paths?, numbers?, note}`: what the result was judged from. */
    evidence: jsonb('evidence').$type<Record<string, unknown>>().notNull(),
    remedy: text('remedy').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('scorecard_checks_check_idx').on(t.scorecardId, t.check)],
);

/** A next step a scorecard suggests; with an operation, svc can do it as a `quick_action` task. */
export const quickActions = pgTable(
  'quick_actions',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    scorecardId: text('scorecard_id').notNull(),
    kind: text('kind').notNull(),
    /** The check it would make pass. */
    check: text('check').notNull(),
    title: text('title').notNull(),
    /** One sentence: what it will do. */
    does: text('does').notNull(),
    /** `{tool, method, path}` that does it; null when svc cannot (`why_no_operation` says why). */
    operation: jsonb('operation').$type<{ tool: string; method: string; path: string } | null>(),
    whyNoOperation: text('why_no_operation'),
    /** The files a draft pull request would add, and its title and body (null: no pull request). */
    change: jsonb('change').$type<Record<string, unknown> | null>(),
    status: text('status')
      .$type<'available' | 'running' | 'done' | 'failed'>()
      .notNull()
      .default('available'),
    taskId: text('task_id'),
    /** What running it did: the pull request opened, or the code host's reason for refusing. */
    result: jsonb('result').$type<Record<string, unknown> | null>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('quick_actions_scorecard_idx').on(t.scorecardId, t.createdAt)],
);

/**
 * Stored metric values, one row per (project, owner, key); the newest write wins. svc writes
 * its daily figures under owner `svc` (keys `<metric>/<YYYY-MM-DD>`); callers write their own.
 */
export const metricRecords = pgTable(
  'metric_records',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    owner: text('owner').notNull(),
    key: text('key').notNull(),
    value: jsonb('value').$type<unknown>().notNull(),
    /** The API key that wrote it; null for svc's own figures. */
    writtenBy: text('written_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('metric_records_identity_idx').on(t.projectId, t.owner, t.key)],
);

/** A board of panels over the review history; one default board per project. */
export const dashboards = pgTable(
  'dashboards',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    isDefault: boolean('is_default').notNull().default(false),
    panels: jsonb('panels').$type<Record<string, unknown>[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('dashboards_project_idx').on(t.projectId, t.createdAt),
    uniqueIndex('dashboards_default_idx').on(t.projectId).where(sql`is_default`),
  ],
);

/** Per-project dashboard state of one caller (API key): notification markers, last board. */
export const preferences = pgTable(
  'preferences',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    projectId: text('project_id').notNull(),
    keyId: text('key_id').notNull(),
    notificationsReadAt: ts('notifications_read_at'),
    notificationsClearedAt: ts('notifications_cleared_at'),
    dashboardId: text('dashboard_id'),
    /** What the caller is notified of (src/core/notifications.ts); null: every kind. */
    notify: jsonb('notify').$type<string[]>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('preferences_owner_idx').on(t.projectId, t.keyId)],
);
