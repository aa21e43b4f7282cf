/** Task, run receipt, run status block and transcript shapes (spec: "Task read", "Run status block"). */
import { z } from 'zod';
import { RUN_STATUSES } from '../../core/runs';
import { nullableTimestamp, timestamp } from './common';

const ms = z.number().int().nullable();
const gap = z.object({ code: z.string(), message: z.string() });

export const runErrorJson = z
  .looseObject({
    code: z.string().describe('The failure class (spec: Run failure classes).'),
    message: z.string(),
    run_id: z.string(),
    remedy: z.string().nullable().describe('What to do about it.'),
  })
  .describe('Failure envelope `{code, message, run_id, ...}`; null unless the run failed.');

export const retryInfo = z
  .object({ retry_of: z.string().nullable(), retry_count: z.number().int() })
  .describe('Set when this run replaces an earlier one (worker died or was evicted).');

const durations = z.object({
  queue_ms: ms,
  startup_ms: ms,
  first_token_ms: ms,
  run_ms: ms,
  total_ms: ms,
});

const clock = z.object({
  created_at: nullableTimestamp,
  queued_at: nullableTimestamp,
  dequeued_at: nullableTimestamp,
  started_at: nullableTimestamp,
  first_token_at: nullableTimestamp,
  finished_at: nullableTimestamp,
  durations_ms: durations,
});

export const runReceipt = z
  .object({
    object: z.literal('run'),
    id: z.string(),
    task_id: z.string(),
    status: z.enum(RUN_STATUSES),
    result: z.record(z.string(), z.unknown()).nullable(),
    usage: z.record(z.string(), z.unknown()),
    cost_usd: z.number().nullable().describe('null when unknown, never 0 for unknown.'),
    error: runErrorJson.nullable(),
    gaps: z.array(gap).describe('Named shortfalls of a run that still succeeded.'),
    warnings: z.array(z.string()),
    retry: retryInfo,
    terminal_event_count: z.number().int(),
    timings: clock,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .describe("A run's receipt: status, result, usage, cost, a named error on failure, gaps on success.");

export const taskRecord = z.object({
  object: z.literal('task'),
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  project_id: z.string().nullable(),
  revision: z.number().int(),
  paused_reason: z
    .string()
    .nullable()
    .describe('Set when the platform paused the task (task_auto_paused_repeat_failure).'),
  run: runReceipt.nullable().describe("The latest run's receipt."),
  created_at: timestamp,
  updated_at: timestamp,
});

const usageLineItem = z.object({
  kind: z.string(),
  description: z.string(),
  quantity: z.number(),
  unit: z.string(),
  cost_usd: z.number().nullable(),
});

export const runStatusBlock = z.object({
  object: z.literal('run_status'),
  id: z.string(),
  run_id: z.string(),
  task_id: z.string(),
  status: z.enum(RUN_STATUSES),
  state: z.string(),
  phase: z.string().nullable(),
  status_text: z.string().nullable(),
  current_step: z.string().nullable(),
  progress_pct: z.number().int().nullable(),
  terminal_event_count: z.number().int().describe('1 once the run committed its terminal frame, 0 before.'),
  error_json: runErrorJson.nullable(),
  warnings: z.array(z.string()).describe('Warning lines; the error message when there are none.'),
  gaps: z.array(gap),
  retry: retryInfo,
  lifecycle: clock.extend({ stage: z.string() }),
  row_clock: clock.describe('Timestamps on the database clock.'),
  runner_clock: clock
    .extend({ worker_id: z.string().nullable() })
    .describe("Timestamps on the executing worker's clock."),
  queue_ahead: z
    .number()
    .int()
    .nullable()
    .describe('Pending runs in front of this one; null unless pending.'),
  backend: z.object({
    platform: z.string(),
    worker_id: z.string().nullable(),
    harness: z.string(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    preset: z.string(),
  }),
  limits: z.object({
    lease_ms: ms,
    heartbeat_ms: ms,
    max_replacements: ms,
    budget_fired: z.string().nullable(),
  }),
  timeouts: z.object({
    liveness_ms: ms,
    wall_clock_ms: ms,
    pickup_timeout_ms: ms,
    fired: z.string().nullable(),
  }),
  harness: z.object({
    name: z.string(),
    kind: z.string(),
    task_revision: z.number().int(),
    budget_fired: z.boolean(),
  }),
  seed_graph: z.object({ counts: z.record(z.string(), z.number()), gaps: z.array(z.unknown()) }).nullable(),
  skills: z.array(z.record(z.string(), z.unknown())),
  usage_json: z.record(z.string(), z.unknown()),
  usage_line_items: z.array(usageLineItem).optional().describe('Itemized usage; only with include=cost.'),
  cost_usd: z.number().nullable(),
  live: z
    .object({
      phase: z.string().nullable(),
      current_step: z.string().nullable(),
      progress_pct: z.number().int().nullable(),
      heartbeat_at: nullableTimestamp,
      progress_at: nullableTimestamp,
      lease_expires_at: nullableTimestamp,
    })
    .nullable(),
  live_warning: z.string().nullable(),
  sweep: z
    .object({
      reason: z.string(),
      lease_owner: z.string().nullable(),
      lease_expires_at: nullableTimestamp,
      pickup_deadline: nullableTimestamp,
    })
    .nullable()
    .describe('Why an active run is still spinning; null once terminal.'),
  callback: z.object({ detached: z.boolean(), expected: z.boolean(), arrived: z.boolean().nullable() }),
  created_at: timestamp,
  updated_at: timestamp,
});

export const runMessage = z.object({
  object: z.literal('message'),
  id: z.string(),
  run_id: z.string(),
  task_id: z.string(),
  role: z.enum(['note', 'system', 'user', 'assistant', 'tool']),
  content: z.string(),
  data: z.unknown().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const transcript = z.object({
  object: z.literal('list'),
  task_id: z.string(),
  run_id: z.string().nullable().describe('The run whose transcript this is; null when all runs are shown.'),
  data: z.array(runMessage),
  next_cursor: z.string().nullable(),
});
