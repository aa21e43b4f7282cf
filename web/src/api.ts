/**
 * The console's only way to the service: same-origin fetches to /api/v1 with the key from
 * session storage (never in a URL), the project in `Project-ID`.
 */
import { useEffect, useState } from 'preact/hooks';

const KEY_ITEM = 'svc.console.key';

export function getKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_ITEM);
  } catch {
    return null;
  }
}

export function setKey(key: string | null) {
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  else sessionStorage.removeItem(KEY_ITEM);
  for (const listener of keyListeners) listener();
}

const keyListeners = new Set<() => void>();
export function onKeyChange(listener: () => void) {
  keyListeners.add(listener);
  return () => keyListeners.delete(listener);
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
  get notAvailable() {
    return this.status === 501;
  }
}

export interface List<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

type Query = Record<string, string | number | boolean | null | undefined>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

export async function api<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: { project?: string | null; body?: unknown; query?: Query; key?: string } = {},
): Promise<T> {
  const key = options.key ?? getKey();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.project) headers['project-id'] = options.project;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(`/api/v1${path}`, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiFailure(0, 'network', `the service did not answer (${(error as Error).message})`);
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const envelope = (json as { error?: { code?: string; message?: string; request_id?: string } } | null)
      ?.error;
    const failure = new ApiFailure(
      response.status,
      envelope?.code ?? `http_${response.status}`,
      envelope?.message ?? `${response.status} ${response.statusText}`,
      envelope?.request_id ?? null,
    );
    // A key the service no longer accepts: back to the key form, saying why.
    if (response.status === 401 && !options.key) {
      lastAuthFailure = failure.message;
      setKey(null);
    }
    throw failure;
  }
  // A write may have appended timeline events: whatever counts them looks again.
  if (method !== 'GET') changes.dispatchEvent(new Event('change'));
  return json as T;
}

/** Fires after every successful write. */
export const changes = new EventTarget();

export let lastAuthFailure: string | null = null;
export const clearAuthFailure = () => {
  lastAuthFailure = null;
};

/** Every page of a list, up to `max` records. */
export async function listAll<T>(
  path: string,
  project: string | null,
  query: Query = {},
  max = 1000,
): Promise<{ data: T[]; truncated: boolean }> {
  const data: T[] = [];
  let cursor: string | null = null;
  do {
    const page: List<T> = await api<List<T>>('GET', path, {
      project,
      query: { ...query, limit: 200, cursor: cursor ?? undefined },
    });
    data.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && data.length < max);
  return { data, truncated: cursor !== null };
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | null;
  loading: boolean;
  reload: () => void;
}

/** Loads `fn()` when `deps` change; `reload()` runs it again. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiFailure | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    fn().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        live &&
        setState({
          data: undefined,
          error:
            error instanceof ApiFailure ? error : new ApiFailure(0, 'client_error', (error as Error).message),
          loading: false,
        }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

// Records -----------------------------------------------------------------------------------------

export type Severity = 'P0' | 'P1' | 'P2';
export const SEVERITIES: Severity[] = ['P0', 'P1', 'P2'];

export interface Project {
  object: 'project';
  id: string;
  name: string;
  repository: { full_name: string; installation_id: number };
  settings: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface Settings {
  object: 'settings';
  scope: 'project' | 'workspace';
  owner_id: string;
  values: Record<string, unknown>;
  defaults: Record<string, unknown>;
  docs: Record<string, string>;
}

export interface PullRequest {
  object: 'pull_request';
  id: string;
  number: number;
  title: string;
  author: string | null;
  draft: boolean;
  state: string;
  base_ref: string | null;
  head_ref: string | null;
  head_sha: string | null;
  review_status: string | null;
  last_reviewed_at: string | null;
  last_review_run_id: string | null;
  auto_review: boolean;
  created_at: string;
  updated_at: string;
}

export interface Finding {
  object: 'finding';
  id: string;
  status: 'open' | 'fixed' | 'dismissed';
  severity: Severity;
  path: string;
  line: number;
  end_line: number;
  title: string;
  body: string;
  rule: string;
  category: string;
  reviewers: string[];
  suggestion: string | null;
  task_id: string;
  pull_request_id: string | null;
  commit_sha: string | null;
  dismissed_reason: string | null;
  dismissed_at: string | null;
  fixed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RunReceipt {
  id: string;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'canceled';
  cost_usd: number | null;
  error: { code: string; message: string } | null;
  gaps: { code: string; message: string }[];
  created_at: string;
  started_at?: string | null;
  finished_at?: string | null;
  [k: string]: unknown;
}

export interface Review {
  object: 'review';
  id: string;
  pr: number | null;
  base: string | null;
  head: string | null;
  delivery: string;
  reviewers: { key: string; reviewer_id: string; model: string | null }[] | null;
  revision: number;
  run: RunReceipt | null;
  findings: Finding[] | null;
  findings_truncated: boolean;
  created_at: string;
}

export interface ReviewResult {
  object: 'review_result';
  id: string;
  task_id: string;
  run_id: string;
  pull_request_id: string | null;
  base_sha: string;
  head_sha: string;
  lineup: Record<string, unknown>[];
  plan: Record<string, unknown>;
  counts: Record<string, number>;
  created_at: string;
}

/** One file of the diff a review pass read (`GET /review-results/{id}/diff`). */
export interface DiffFile {
  object: 'diff_file';
  path: string;
  old_path: string | null;
  change: string;
  additions: number;
  deletions: number;
  skipped: { code: string; message: string } | null;
  hunks: {
    header: string;
    lines: {
      kind: 'add' | 'del' | 'context';
      old_line: number | null;
      new_line: number | null;
      text: string;
    }[];
  }[];
}

export interface Task {
  object: 'task';
  id: string;
  kind: string;
  title: string;
  revision: number;
  paused_reason: string | null;
  run: RunReceipt | null;
  created_at: string;
  updated_at: string;
}

export interface Reviewer {
  object: 'reviewer';
  id: string;
  name: string;
  description: string | null;
  model_pin: string | null;
  builtin: boolean;
  popularity: number;
  engine: 'builtin' | 'llm';
  source: 'catalog' | 'custom';
  skill_revision_id: string | null;
}

export interface ReviewerModel {
  object: 'reviewer_model';
  model: string;
  pinned: boolean;
  runs: number;
  findings: number;
  failures: number;
  avg_ms: number | null;
  cost_usd: number | null;
  measured_at: string | null;
}

export interface Scorecard {
  object: 'scorecard';
  id: string;
  score: number | null;
  level: { level: number; name: string };
  next_level: { level: number; name: string; needs: string[] } | null;
  counts: { pass: number; fail: number; unknown: number };
  commit_sha: string | null;
  trigger: string;
  task_id: string | null;
  gaps: { code: string; message: string }[];
  computed_at: string;
}

export interface Check {
  object: 'check';
  id: string;
  check: string;
  title: string;
  category: string;
  weight: number;
  result: 'pass' | 'fail' | 'unknown';
  evidence: { paths?: string[]; numbers?: Record<string, number>; note: string };
  remedy: string;
}

export interface Level {
  object: 'scorecard_level';
  id: string;
  level: number;
  name: string;
  description: string;
  requires: string[];
  reached: boolean | null;
}

export interface QuickAction {
  object: 'quick_action';
  id: string;
  kind: string;
  check: string;
  title: string;
  does: string;
  operation: { tool: string; method: string; path: string } | null;
  why_no_operation: string | null;
  status: string;
  task_id: string | null;
  result: Record<string, unknown> | null;
}

export interface TimelineEvent {
  object: 'timeline_event';
  id: string;
  subject_type: string;
  subject_id: string;
  kind: string;
  actor: string | null;
  payload: Record<string, unknown>;
  occurred_at: string;
  created_at: string;
}

export type Chart = 'line' | 'bar' | 'number' | 'table';
export type Unit = 'count' | 'ratio' | 'ms' | 'usd' | 'value';

export interface Panel {
  title: string;
  metric: string;
  group_by: string | null;
  range_days: number;
  chart: Chart;
  owner?: string;
  key?: string;
  unit: Unit;
  summary: number | null;
  series: { name: string; points: { day: string; value: number | null }[] }[];
}

export interface Dashboard {
  object: 'dashboard';
  id: string;
  name: string;
  description: string | null;
  is_default: boolean;
  panels?: Panel[];
  created_at: string;
  updated_at: string;
}

export interface Plan {
  object: 'plan';
  id: string;
  status: 'discovered' | 'proposed' | 'reviewed' | 'approved' | 'active' | 'completed' | 'superseded';
  approval_status: 'pending' | 'approved' | 'rejected';
  requires_approval: boolean;
  repo_write_status: 'not_requested' | 'draft_pr_requested' | 'draft_pr_opened' | 'failed';
  repo_artifact_path: string | null;
  target_outcome: string | null;
  summary: string | null;
  review_task_id: string | null;
  score: Record<string, unknown> | null;
  draft_pull_request: { number: number; url: string | null } | null;
  repo_write_error: string | null;
  superseded_by: string | null;
  created_at: string;
  updated_at: string;
}

/** What a person may be notified of (src/core/notifications.ts), in the words the console uses. */
export const NOTIFICATION_KINDS = {
  new_p0: 'A new P0 finding on a pull request',
  run_failed: 'A run failed',
  plan_awaiting_approval: 'A plan awaits approval',
  quick_action_result: "A quick action's result",
} as const;
export type NotificationKind = keyof typeof NOTIFICATION_KINDS;

export interface Preference {
  object: 'preference';
  id: string;
  notifications_read_at: string | null;
  notifications_cleared_at: string | null;
  dashboard_id?: string | null;
  notify?: NotificationKind[];
  unread_notifications?: number;
}

export interface ApiKey {
  object: 'api_key';
  id: string;
  name: string;
  kind: 'workspace' | 'project' | 'personal';
}

let keyNamesCache: Promise<Map<string, string>> | null = null;
/**
 * Key ids to key names, for showing who did what. Only a workspace key may list keys; for any
 * other the map is empty and actors show as their ids.
 */
export function keyNames(): Promise<Map<string, string>> {
  keyNamesCache ??= listAll<ApiKey>('/keys', null, {}, 1000).then(
    (keys) => new Map(keys.data.map((k) => [k.id, k.name])),
    () => new Map(),
  );
  return keyNamesCache;
}
onKeyChange(() => {
  keyNamesCache = null;
});
