/**
 * The context an `abandoned` hook gets for a run the sweeper ended: the run is already terminal,
 * so nothing may be written to it (progress, transcript, gaps and usage are dropped); warnings
 * go to the log. It carries what the hook reads: the run, its task and the database.
 */
import type { Logger } from 'pino';
import type { Database } from '../storage/database';
import type { RunContext, RunRow, TaskRow } from './types';

export function settlementContext(db: Database, run: RunRow, task: TaskRow, logger: Logger): RunContext {
  const ignore = async () => {};
  return {
    run,
    task,
    db,
    signal: AbortSignal.abort(new Error(`run ${run.id} already ended`)),
    progress: ignore,
    message: ignore,
    firstToken: ignore,
    gap: () => {},
    warn: (line) => logger.warn({ run: run.id, task: task.id }, line),
    usage: () => {},
    setBackend: () => {},
    setSkills: () => {},
    setSeedGraph: () => {},
  };
}
