/**
 * `svc serve`: the HTTP API on the configured host and port, with an in-process worker unless
 * `--no-worker`, and the local repositories' watcher with `--watch` (SVC_WATCH=1). SIGTERM/SIGINT
 * stop accepting requests, stop the watcher after its tick, let held runs finish within the grace
 * period and hand the rest back as replacement runs.
 */
import type { Logger } from 'pino';
import { DeadlineTimer } from '../automation/deadline-timer';
import { LocalWatcher, watchEnabled, watchIntervalMs } from '../automation/local-watch';
import type { Config } from '../config';
import { Worker } from '../engine/worker';
import { buildApp } from '../http/app';
import { createServices } from '../main';
import { prepareAnalysisInBackground } from './prepare-analysis';

export async function serveCommand(config: Config, logger: Logger): Promise<void> {
  // Where a start's time goes, in the 'svc serving' line (process start → each phase's end).
  const startup: Record<string, number> = { modules: Math.round(performance.now()) };
  const mark = (phase: string) => {
    startup[phase] = Math.round(performance.now());
  };
  const started = await createServices(config, { logger, deferBootstrap: true });
  mark('database');
  const { services } = started;
  const watcher = watchEnabled(config.env)
    ? new LocalWatcher(services, { logger, intervalMs: watchIntervalMs(config.env) })
    : null;
  const app = await buildApp(services);
  mark('app');
  const worker = config.runWorker
    ? new Worker(services.engine, { concurrency: config.workerConcurrency })
    : null;
  // With or without a worker: a review deadline is kept by the serving process, not a queue.
  const deadlines = new DeadlineTimer(services, { logger });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await services.db.close().catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(
        `${config.host}:${config.port} is already in use (another svc?); choose another with --port or PORT. No key was created.`,
      );
    throw error;
  }
  mark('listening');
  // Only now that the port is ours: a start that failed never mints (or prints) a key.
  const bootstrap = await started.bootstrapKey();
  if (bootstrap?.minted) {
    process.stderr.write(
      `svc: first start — your workspace key (shown once, store it now):\n${bootstrap.secret}\n`,
    );
  } else if (bootstrap) {
    logger.info('SVC_BOOTSTRAP_KEY registered as the first workspace key');
  }
  await worker?.start();
  if (worker) prepareAnalysisInBackground(logger);
  watcher?.start();
  deadlines.start();
  logger.info(
    {
      url: `http://${config.host}:${config.port}`,
      database: services.db.label,
      worker: worker?.id ?? 'none',
      watch: watcher ? { repos: config.reposDir, intervalMs: watcher.intervalMs } : 'off',
      startup_ms: startup,
    },
    'svc serving',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await app.close();
    await watcher?.stop();
    await deadlines.stop();
    await worker?.drain(config.engine.shutdownGraceMs);
    await services.db.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
