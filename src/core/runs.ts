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
  /** On a `files_not_analyzed` gap: the file, why, and how much of it was left out. */
  file?: FileNotAnalyzed | undefined;
}

/**
 * The gap code of a file the analyzers could not read, or read only in part: a review must never
 * look complete while a file in it went unread.
 */
export const FILES_NOT_ANALYZED = 'files_not_analyzed';

export interface FileNotAnalyzed {
  path: string;
  /** Why, in words (`not parseable as typescript`). */
  reason: string;
  /** Lines the analyzers did not read, of `lines`. */
  lines_left_out: number;
  lines: number;
  /** lines_left_out / lines, rounded to two decimals (1: the whole file). */
  share: number;
}

/** The `files_not_analyzed` gap of one file. */
export function fileNotAnalyzedGap(file: Omit<FileNotAnalyzed, 'share'>, detail: string): Gap {
  const share = file.lines > 0 ? Math.round((file.lines_left_out / file.lines) * 100) / 100 : 1;
  const percent = Math.round(share * 100);
  return {
    code: FILES_NOT_ANALYZED,
    message: `${file.path}: ${file.reason}; ${file.lines_left_out} of ${file.lines} line(s) (${percent}%) not analyzed${detail ? `; ${detail}` : ''}`,
    file: { ...file, share },
  };
}
