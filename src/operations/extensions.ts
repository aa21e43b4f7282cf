/**
 * Documented extensions: operations the declaration carries that the spec's Endpoints section
 * does not list (the key-management area, settings, project reads, and `learnings_create`: the
 * spec has learnings but no way to record one), and the findings' event pair
 * (`findings_append_event`, `findings_events`: dismiss or reopen a finding without the code host,
 * the spec's `wontfix:` reply as an API call), and `scorecards_compute` (recompute a scorecard on
 * request) with `quick_actions_run` (do a quick action as a task), and `plans_approve` /
 * `plans_reject` (the spec names a plan's approval but not its operation), and `swarms_create` with
 * `swarms_cancel` (the spec has swarms to read but no way to start or stop one), and `metric_records_write` with
 * `preferences_update` (the spec lets callers own metric records and keep preferences, but
 * shows no write for either), and `review_results_diff` (findings name their lines, but the spec
 * has no way to read the code they point at), and `pull_requests_check` (the `Service / Review`
 * check with its fix prompt, which the autofix contract starts from, was readable only on the code
 * host), and `tasks_events` (the spec says runs stream, but names no stream: a task's run events
 * as Server-Sent Events or a JSON page). The contract test proves
 * that the declared tools are exactly the spec's tools plus these. The spec's `POST /projects`
 * has no tool name; it is `projects_create` here, and so it is listed as an extension.
 */
export const EXTENSION_TOOLS: readonly string[] = [
  'keys_create',
  'keys_list',
  'keys_delete',
  'projects_create',
  'projects_get',
  'projects_list',
  'projects_settings_get',
  'projects_settings_update',
  'workspace_settings_get',
  'workspace_settings_update',
  'installations_list',
  'learnings_create',
  'findings_append_event',
  'findings_events',
  'scorecards_compute',
  'quick_actions_run',
  'plans_approve',
  'plans_reject',
  'swarms_create',
  'swarms_cancel',
  'metric_records_write',
  'preferences_update',
  'review_results_diff',
  'pull_requests_check',
  'tasks_events',
];
