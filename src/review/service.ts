/**
 * Reviews as the API and the CLI see them: create (the request validated up front, so bad input
 * is a clear 4xx; the target is resolved by the run), read with findings once done, re-run, and
 * edit the configuration under its revision.
 */
import { and, asc, desc, eq, getTableColumns, isNotNull, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import type { CodeHosts } from '../codehost';
import { LocalCodeHost } from '../codehost/local/local-host';
import { CodeHostError } from '../codehost/types';
import { ApiError } from '../core/errors';
import type { Engine } from '../engine/engine';
import type { RunRow, TaskRow } from '../engine/types';
import { compatProviderName } from '../reviewers/llm/provider-config';
import type { Database } from '../storage/database';
import { findings, projects, runFindings as runFindingRows, tasks } from '../storage/schema';
import type { ReviewConfig } from './config';
import { type LineupEntry, parseLineup, type ReviewerItem, splitModel, toReviewerItem } from './lineup';
import { findReviewers, type ReviewerRow } from './reviewer-catalog';

/** Findings inlined on a review read; more than this sets `findings_truncated`. */
export const FINDINGS_PAGE = 100;

export interface ReviewDeps {
  db: Database;
  engine: Engine;
  codeHosts: CodeHosts;
  env: NodeJS.ProcessEnv;
}

/**
 * Records an acknowledgement: `write` stores it as one statement, guarded by `guard` when the
 * HTTP layer records the request's Idempotency-Key with `answer` in that same statement (see
 * OperationContext.acknowledge); it returns whether it wrote.
 */
export type Acknowledge = (answer: unknown, write: (guard: SQL | null) => Promise<boolean>) => Promise<void>;

export interface Scope {
  workspaceId: string;
  projectId: string;
}

export interface CreateReviewBody {
  pr?: number | undefined;
  base?: string | undefined;
  head?: string | undefined;
  reviewers?: ReviewerItem[] | undefined;
  delivery?: 'none' | 'codehost' | undefined;
}

const KNOWN_PROVIDERS = (env: NodeJS.ProcessEnv) => new Set(['openai', 'anthropic', compatProviderName(env)]);

/**
 * Reviewers found before, per database: a reviewer is never deleted and its engine never changes,
 * so one found once is found the same way ever after, and a lineup of known reviewers is
 * validated without a read (one on every review acknowledgement otherwise). Unknown ids are
 * looked up every time.
 */
const knownReviewers = new WeakMap<Database, Map<string, { engine: ReviewerRow['engine'] }>>();

async function lookUpReviewers(db: Database, workspaceId: string, ids: string[]) {
  let known = knownReviewers.get(db);
  if (!known) {
    known = new Map();
    knownReviewers.set(db, known);
  }
  const found = new Map<string, { engine: ReviewerRow['engine'] }>();
  const missing: string[] = [];
  for (const id of ids) {
    const hit = known.get(`${workspaceId}\u0000${id}`);
    if (hit) found.set(id, hit);
    else missing.push(id);
  }
  if (missing.length === 0) return found;
  const rows = await findReviewers(db, workspaceId, missing);
  if (known.size >= 10_000) known.clear();
  for (const [id, row] of rows) {
    known.set(`${workspaceId}\u0000${id}`, { engine: row.engine });
    found.set(id, { engine: row.engine });
  }
  return found;
}

/** Every reviewer must exist, and every model pin must name a provider svc knows. */
export async function validateLineup(deps: ReviewDeps, scope: Scope, entries: LineupEntry[]) {
  const found = await lookUpReviewers(
    deps.db,
    scope.workspaceId,
    entries.map((e) => e.reviewerId),
  );
  const unknown = entries.filter((e) => !found.has(e.reviewerId)).map((e) => e.reviewerId);
  if (unknown.length > 0) {
    throw new ApiError(
      'validation_failed',
      `unknown reviewer(s): ${unknown.join(', ')}; GET /api/v1/reviewers lists them`,
      {
        unknown_reviewers: unknown,
      },
    );
  }
  for (const entry of entries) {
    const reviewer = found.get(entry.reviewerId);
    if (!entry.model || !reviewer) continue;
    if (reviewer.engine === 'builtin') {
      if (entry.model !== 'builtin/rules') {
        throw new ApiError(
          'validation_failed',
          `reviewer ${entry.reviewerId} is rule-based and runs only on builtin/rules, not ${entry.model}`,
        );
      }
      continue;
    }
    const { provider } = splitModel(entry.model);
    if (!KNOWN_PROVIDERS(deps.env).has(provider)) {
      throw new ApiError(
        'validation_failed',
        `unknown model provider "${provider}" in ${entry.model}; use one of ${[...KNOWN_PROVIDERS(deps.env)].join(', ')}`,
      );
    }
  }
}

/**
 * Creates the review and its first run, and nothing else: the acknowledgement validates the
 * request (its shape, the lineup's reviewers and providers) and records the task and its run in
 * one transaction. The code host is not asked here: the run resolves the pull request or range,
 * writes the pull request row and, for `delivery: codehost`, queues the check before it starts
 * reviewing; a target that does not exist fails the run by name with the code host's message.
 */
export async function createReview(
  deps: ReviewDeps,
  scope: Scope,
  body: CreateReviewBody,
  acknowledge: Acknowledge = async (_answer, write) => {
    await write(null);
  },
) {
  const entries = body.reviewers ? parseLineup(body.reviewers) : null;
  if (entries) await validateLineup(deps, scope, entries);
  if (body.pr !== undefined) await refuseMissingLocalPullRequest(deps, scope, body.pr);
  const config: ReviewConfig = {
    pr: body.pr ?? null,
    base: body.pr === undefined ? (body.base ?? null) : null,
    head: body.pr === undefined ? (body.head ?? null) : null,
    reviewers: entries,
    delivery: body.delivery ?? 'none',
  };
  const title =
    config.pr !== null
      ? `Review of pull request #${config.pr}`
      : `Review of ${config.base?.slice(0, 12)}..${config.head?.slice(0, 12)}`;
  const planned = deps.engine.planTask({
    workspaceId: scope.workspaceId,
    projectId: scope.projectId,
    kind: 'review',
    title,
    input: config as unknown as Record<string, unknown>,
  });
  const answer = ack(planned.taskId, planned.runId);
  await acknowledge(answer, (guard) => deps.engine.enqueue(planned, guard ?? undefined));
  return answer;
}

/**
 * A pull request the local code host does not have is refused before a run is planned: 404, naming
 * the ref and the folder svc looked in (it was accepted and its run failed `tool_failed`, whose
 * remedy blamed tools). One local git process; a GitHub pull request is still the run's to resolve,
 * since asking GitHub first would put an API call in every acknowledgement (decision 145).
 */
async function refuseMissingLocalPullRequest(deps: ReviewDeps, scope: Scope, pr: number): Promise<void> {
  const [project] = await deps.db.orm
    .select({ repo: projects.repoFullName, installationId: projects.installationId })
    .from(projects)
    .where(and(eq(projects.id, scope.projectId), eq(projects.workspaceId, scope.workspaceId)));
  const host = project ? deps.codeHosts.forInstallation(project.installationId) : null;
  if (!project || !(host instanceof LocalCodeHost)) return;
  try {
    await host.requirePullRequest(project.repo, pr);
  } catch (error) {
    // Only "not there" is the caller's to fix; anything else is the run's to report.
    if (error instanceof CodeHostError && error.reason === 'not_found')
      throw new ApiError('not_found', error.message);
  }
}

export const ack = (taskId: string, runId: string) => ({
  id: taskId,
  run_id: runId,
  status_url: `/api/v1/tasks/${taskId}/status`,
});

export async function getReviewTask(deps: ReviewDeps, scope: Scope, reviewId: string): Promise<TaskRow> {
  const task = await deps.engine.getTask(scope.workspaceId, scope.projectId, reviewId);
  if (task.kind !== 'review') throw new ApiError('not_found', `review ${reviewId} was not found`);
  return task;
}

export type FindingRow = typeof findings.$inferSelect;

export function findingRecord(row: FindingRow) {
  return {
    object: 'finding' as const,
    id: row.id,
    status: row.status,
    severity: row.severity,
    path: row.path,
    line: row.line,
    end_line: row.endLine,
    title: row.title,
    body: row.body,
    rule: row.rule,
    category: row.category,
    reviewers: row.reviewers,
    suggestion: row.suggestion,
    fingerprint: row.fingerprint,
    task_id: row.taskId,
    pull_request_id: row.pullRequestId,
    commit_sha: row.commitSha,
    first_run_id: row.firstRunId,
    last_run_id: row.lastRunId,
    dismissed_reason: row.dismissedReason,
    dismissed_at: row.dismissedAt?.toISOString() ?? null,
    fixed_at: row.fixedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The findings a run reported, most severe first; null until the run completed. */
export async function runFindings(deps: ReviewDeps, run: RunRow | null) {
  if (run?.status !== 'completed') return { findings: null, truncated: false };
  const rows = await deps.db.orm
    .select(getTableColumns(findings))
    .from(runFindingRows)
    .innerJoin(findings, eq(findings.id, runFindingRows.findingId))
    .where(eq(runFindingRows.runId, run.id))
    .orderBy(asc(findings.severity), asc(findings.path), asc(findings.line))
    .limit(FINDINGS_PAGE + 1);
  return {
    findings: rows.slice(0, FINDINGS_PAGE).map(findingRecord),
    truncated: rows.length > FINDINGS_PAGE,
  };
}

export async function reviewRecord(deps: ReviewDeps, task: TaskRow) {
  const config = task.input as unknown as ReviewConfig;
  const run = await deps.engine.latestRun(task.id);
  const { findings: found, truncated } = await runFindings(deps, run);
  return {
    object: 'review' as const,
    id: task.id,
    pr: config.pr,
    base: config.base,
    head: config.head,
    delivery: config.delivery,
    origin: reviewOriginOf(task),
    reviewers: config.reviewers ? config.reviewers.map(toReviewerItem) : null,
    revision: task.revision,
    run: run ? deps.engine.receipt(run) : null,
    findings: found,
    findings_truncated: truncated,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

/**
 * Where a review came from: `api` (POST /reviews), `automatic` (a pull request trigger, a
 * command or a re-run on the code host: input `automatic`) or `swarm` (a swarm's child).
 */
export const REVIEW_ORIGINS = ['api', 'automatic', 'swarm'] as const;
export type ReviewOrigin = (typeof REVIEW_ORIGINS)[number];

export function reviewOriginOf(task: Pick<TaskRow, 'input' | 'parentTaskId'>): ReviewOrigin {
  if ((task.input as { automatic?: unknown }).automatic === true) return 'automatic';
  return task.parentTaskId ? 'swarm' : 'api';
}

const isAutomatic = sql`coalesce(${tasks.input}->>'automatic', 'false') = 'true'`;
const ORIGIN_FILTERS: Record<ReviewOrigin, SQL> = {
  api: and(sql`not ${isAutomatic}`, isNull(tasks.parentTaskId)) as SQL,
  automatic: isAutomatic,
  swarm: and(sql`not ${isAutomatic}`, isNotNull(tasks.parentTaskId)) as SQL,
};

export async function listReviewTasks(
  deps: ReviewDeps,
  scope: Scope,
  limit: number,
  after: { createdAt: Date; id: string } | null,
  /** Origins listed; the spec's list is the API-created reviews, so `['api']` unless asked. */
  origins: readonly ReviewOrigin[] = ['api'],
) {
  return deps.db.orm
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.workspaceId, scope.workspaceId),
        eq(tasks.projectId, scope.projectId),
        eq(tasks.kind, 'review'),
        origins.length === REVIEW_ORIGINS.length ? undefined : or(...origins.map((o) => ORIGIN_FILTERS[o])),
        after
          ? or(
              lt(tasks.createdAt, after.createdAt),
              and(eq(tasks.createdAt, after.createdAt), lt(tasks.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit(limit + 1);
}

/** `If-Match: "N"` must name the current revision: missing is 428, stale is 412. */
export function checkIfMatch(header: string | undefined, revision: number) {
  if (header === undefined) {
    throw new ApiError(
      'precondition_required',
      `send If-Match: "${revision}" (the review's current revision) to change it`,
    );
  }
  const match = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(header);
  if (!match || Number(match[1]) !== revision) {
    throw new ApiError(
      'precondition_failed',
      `If-Match ${header} is stale: the current revision is "${revision}"; read the review and retry`,
    );
  }
}

/** Saves a new configuration under the next revision, atomically against the one checked. */
export async function saveConfig(deps: ReviewDeps, task: TaskRow, config: ReviewConfig): Promise<TaskRow> {
  const [updated] = await deps.db.orm
    .update(tasks)
    .set({
      input: config as unknown as Record<string, unknown>,
      revision: task.revision + 1,
      updatedAt: new Date(),
    })
    .where(and(eq(tasks.id, task.id), eq(tasks.revision, task.revision)))
    .returning();
  if (!updated) {
    throw new ApiError(
      'precondition_failed',
      'the review changed while this edit was applied; read it and retry',
    );
  }
  return updated;
}
