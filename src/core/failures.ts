/**
 * Run failure classes (`error_json.code`). Stable strings from the spec, each with the remedy a
 * user or agent should follow; the transcript's note names both.
 */
export const RUN_FAILURE_GROUPS = {
  provider: {
    provider_transient: 'The model provider failed temporarily. Retry the task; it usually passes.',
    provider_terminal: 'The model provider rejected the request. Check the request size and provider status.',
    provider_rate_limited:
      'The model provider rate-limited svc. Wait, lower concurrency, or raise the quota.',
    provider_auth_failed: "The provider's credentials were refused. Fix the API key in the environment.",
    model_not_available: 'The pinned model does not exist at the provider. Pin a model the provider serves.',
  },
  tools: {
    tool_timeout: 'A tool call took too long. Retry; if it repeats, narrow the diff or raise the timeout.',
    tool_failed: 'A tool (git, analyzer) failed. The message names it; fix its input or installation.',
    instruction_timeout: 'The reviewer did not answer in time. Retry or pin a faster model.',
    missing_expected_tool: 'A required tool was not available. Install it where the worker runs.',
    payload_contract_violation:
      'The reviewer answered outside its output contract. Retry or pin another model.',
  },
  liveness: {
    queue_pickup_timeout:
      'No worker picked the run up in time. Start a worker (`svc worker`) or check their health.',
    run_liveness_timeout: 'The run stopped making progress and was stopped. Retry; report it if it repeats.',
    run_never_started: 'The run was claimed but never started. Retry the task.',
    run_evicted_by_deploy: 'The worker shut down during the run; a replacement run was started.',
    run_invocation_died:
      'The worker running this stopped answering (crash or kill); a replacement run was started.',
    run_invocation_ceiling: 'The run reached its invocation ceiling. Split the work or raise the limit.',
    run_cpu_ceiling: 'The run reached its CPU ceiling. Split the work or raise the limit.',
    run_continuation_limit: 'The run reached its continuation limit. Split the work.',
    run_continuation_no_queue: 'The run could not be continued: no queue accepted it. Check the workers.',
    run_recovery_unwritable:
      'The run could not be recovered because its state could not be written. Check the database.',
  },
  backend: {
    backend_unavailable: 'The execution backend is unavailable. Check the database and workers.',
    backend_callback_never_arrived: "A detached backend's terminal callback never arrived. Retry the task.",
    backend_wall_clock_timeout:
      "The run exceeded its wall-clock limit. Split the work or raise the run's time limit.",
    stream_transport_failed: 'The stream to the backend broke. Retry the task.',
  },
  control_plane: {
    project_paused:
      'The project is paused or outside its approval window. Resume it in the project settings.',
    project_run_mode_unreadable: "The project's settings could not be read. Check the project record.",
    spend_cap_reached:
      "The project's spend cap is reached. Raise `svc.brakes.spend_cap_usd` or wait for the next period.",
    budget_exceeded:
      "The project's run budget is spent. Raise `svc.brakes.run_budget` or wait for the next day.",
  },
  setup_safety: {
    skill_instance_not_found:
      'A skill the run needs was not found. Check the reviewer pin and skill revision.',
    task_auto_paused_repeat_failure:
      'The task failed repeatedly and was paused. Read the earlier runs, fix the cause, then run it again.',
    unknown: 'An unexpected error ended the run. The message says what; report it if it repeats.',
  },
} as const;

type Groups = typeof RUN_FAILURE_GROUPS;
export type RunFailureCode = { [G in keyof Groups]: keyof Groups[G] }[keyof Groups];

export const RUN_FAILURE_REMEDY: Record<RunFailureCode, string> = Object.assign(
  {},
  ...Object.values(RUN_FAILURE_GROUPS),
) as Record<RunFailureCode, string>;

export const RUN_FAILURE_CODES = Object.keys(RUN_FAILURE_REMEDY) as RunFailureCode[];

export function isRunFailureCode(value: string): value is RunFailureCode {
  return Object.hasOwn(RUN_FAILURE_REMEDY, value);
}

/** Thrown by task handlers (and the engine) to fail a run with a named class. */
export class RunFailure extends Error {
  constructor(
    readonly code: RunFailureCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RunFailure';
  }
}
