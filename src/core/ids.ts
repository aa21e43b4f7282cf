/** Id prefixes: every record id says what it is (`prj_…`, `tsk_…`). */
export const ID_PREFIX = {
  workspace: 'ws',
  project: 'prj',
  task: 'tsk',
  run: 'run',
  message: 'msg',
  key: 'key',
  finding: 'fnd',
  pullRequest: 'pr',
  reviewResult: 'rvr',
  skillRevision: 'skr',
  learning: 'lrn',
  /** `Service / Review` check runs (internal rows); `chk` names a scorecard's checks. */
  checkRun: 'ckr',
  comment: 'cmt',
  delivery: 'dlv',
  plan: 'pln',
  event: 'evt',
  worker: 'wrk',
  installation: 'ins',
  repoKnowledge: 'rkn',
  scorecard: 'scd',
  scorecardCheck: 'chk',
  quickAction: 'qac',
  metricRecord: 'met',
  dashboard: 'dsh',
  preference: 'prf',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(`${ID_PREFIX[kind]}_`);
}
