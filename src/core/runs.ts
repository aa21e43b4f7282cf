/** Run states and the transitions the engine is allowed to make. */
export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'canceled'];
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running'];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running', 'failed', 'canceled'],
  running: ['completed', 'failed', 'canceled'],
  completed: [],
  failed: [],
  canceled: [],
};

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

export const TASK_KINDS = [
  'review',
  'setup',
  'study',
  'plan_review',
  'plan_activate',
  'knowledge_refresh',
  'fix',
  'diagnostic',
  'webhook',
  'check_deadline',
  'scorecard',
  'quick_action',
  'swarm',
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** A named shortfall on a successful run. */
export interface Gap {
  code: string;
  message: string;
}
