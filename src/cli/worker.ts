/**
 * `svc worker`: claims and executes runs from the database until SIGTERM/SIGINT, then drains
 * (lets runs finish within SVC_SHUTDOWN_GRACE_MS, hands the rest back as
 * `run_evicted_by_deploy` with a replacement each) and exits 0.
 *
 * It does not go through createServices: a worker must never mint the bootstrap key, which
 * only `svc serve` can print to its operator.
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import { expireLeasesOfDeadProcesses } from '../engine/sweeper';
import { Worker } from '../engine/worker';
import { createEngine } from '../main';
import { openDatabase } from '../storage/database';
import { migrate } from '../storage/migrate';
import { prepareAnalysisInBackground } from './prepare-analysis';

export async function workerCommand(config: Config, logger: Logger): Promise<void> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(db);
  await expireLeasesOfDeadProcesses(db);
  const { engine } = createEngine(config, db, logger);
  const worker = new Worker(engine, { concurrency: config.workerConcurrency });
  await worker.start();
  prepareAnalysisInBackground(logger);

  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal, graceMs: config.engine.shutdownGraceMs }, 'draining worker');
      worker
        .drain(config.engine.shutdownGraceMs)
        .catch((error) => logger.error({ err: error }, 'drain failed; the sweeper ends what is left'))
        .finally(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  await db.close().catch(() => {});
  logger.info('worker stopped');
  // Flush pino before exiting; exit explicitly so no stray handle (a hung handler) keeps us alive.
  logger.flush?.();
  process.exit(0);
}
