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
    instruction_timeout:
      'The model sent nothing for its time limit (SVC_LLM_TIMEOUT_MS), also on retry. Retry, pin a faster model, or raise SVC_LLM_TIMEOUT_MS.',
    missing_expected_tool: 'A required tool was not available. Install it where the worker runs.',
    payload_contract_violation:
      'The reviewer answered outside its output contract. Retry or pin another model.',
  },
  liveness: {
    queue_pickup_timeout:
      'No worker picked the run up in time. Start a worker (`svc worker`) or check their health.',
    run_liveness_timeout: 'The run stopped making progress and was stopped. Retry; report it if it repeats.',
    run_never_started:
      'A worker claimed the run but never started it (it died or stalled first); a replacement run was started. If it repeats, check the workers and their database connection.',
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
    stream_transport_failed:
      "The model's streamed answer broke off mid-stream, also on retry. Retry the task; if it repeats, check the network or proxy between svc and the provider.",
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

/**
 * Classes of the spec that no path in svc produces, with why: they name situations of an
 * execution platform svc is not (detached backends, runs continued across invocations, metered
 * CPU). Every other class has a producer; test/engine/failure-classes.test.ts holds both lists
 * against the source.
 */
export const RUN_FAILURES_NOT_APPLICABLE: Partial<Record<RunFailureCode, string>> = {
  run_invocation_ceiling:
    'A run is one invocation: one handler call on one worker, never resumed in another. A run that dies is replaced by a new run, and a chain that keeps dying is paused (SVC_MAX_REPLACEMENTS, task_auto_paused_repeat_failure).',
  run_cpu_ceiling:
    "svc does not meter a run's CPU time. Its ceilings are wall-clock ones: the run's SVC_WALL_CLOCK_MS (backend_wall_clock_timeout) and no progress for SVC_LIVENESS_MS (run_liveness_timeout).",
  run_continuation_limit:
    'svc never continues a run in a later invocation: a handler runs to its end in one go, so there is no continuation to count.',
  run_continuation_no_queue:
    'Without continuations there is nothing to hand to a queue mid-run; a replacement run enters the same runs table its first run did, in the transaction that ends it.',
  run_recovery_unwritable:
    'Recovery (ending a dead run and starting its replacement) is one transaction: if it cannot be written, nothing is, and the run stays running until a later sweep writes it. No state exists in which recovery failed but a code could be recorded.',
  backend_callback_never_arrived:
    'svc has no detached backends: every run executes inside a svc worker that commits its own terminal frame, so there is no callback to wait for. A worker that goes silent is run_invocation_died.',
};

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
