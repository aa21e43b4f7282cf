/**
 * `svc watch`: the automation of the local code host without the HTTP API. It watches the
 * repositories of the projects on installation 1 (automation/local-watch.ts) and, unless
 * `--no-worker`, executes the runs it starts; SIGTERM/SIGINT stop the watcher after its tick and
 * drain the worker as `svc worker` does.
 *
 * `svc comment <repo> <pr> <body>`: a person's comment on a local pull request (the local host
 * has no page to write one on), which the watcher hands to the `@service` commands.
 */
import { userInfo } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { CliError, EXIT } from './exit-codes';

export async function watchCommand(config: Config, logger: Logger): Promise<void> {
  // Loaded here, so `svc comment` (same module) never loads the service.
  const { LocalWatcher, watchIntervalMs } = await import('../automation/local-watch');
  const { DeadlineTimer } = await import('../automation/deadline-timer');
  const { Worker } = await import('../engine/worker');
  const { expireLeasesOfDeadProcesses } = await import('../engine/sweeper');
  const { createEngine } = await import('../main');
  const { openDatabase } = await import('../storage/database');
  const { migrate } = await import('../storage/migrate');
  const intervalMs = watchIntervalMs(config.env);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(db);
  await expireLeasesOfDeadProcesses(db);
  const { engine, codeHosts } = createEngine(config, db, logger);
  const watcher = new LocalWatcher({ db, engine, codeHosts }, { logger, intervalMs });
  const worker = config.runWorker ? new Worker(engine, { concurrency: config.workerConcurrency }) : null;
  // Review deadlines are kept here too: svc watch is the local host's serving process.
  const deadlines = new DeadlineTimer({ db, codeHosts }, { logger });
  await worker?.start();
  watcher.start();
  deadlines.start();
  logger.info({ repos: config.reposDir, intervalMs, worker: worker?.id ?? 'none' }, 'svc watching');

  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping the watcher');
      watcher
        .stop()
        .then(() => deadlines.stop())
        .then(() => worker?.drain(config.engine.shutdownGraceMs))
        .catch((error) => logger.error({ err: error }, 'stopping failed; the sweeper ends what is left'))
        .finally(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  await db.close().catch(() => {});
  logger.info('watcher stopped');
  logger.flush?.();
  process.exit(0);
}

export async function commentCommand(
  repo: string,
  pr: string,
  body: string,
  options: { repos?: string; replyTo?: string; author?: string },
): Promise<number> {
  const number = Number(pr);
  if (!Number.isSafeInteger(number) || number < 1)
    throw new CliError(`pull request number ${JSON.stringify(pr)} is not a positive integer`, EXIT.usage);
  const { LocalCodeHost } = await import('../codehost/local/local-host');
  const { CodeHostError } = await import('../codehost/types');
  const host = new LocalCodeHost(options.repos || './repos');
  try {
    const posted = await host.addPersonComment(repo, {
      pullRequest: number,
      body,
      author: options.author || userInfo().username,
      inReplyTo: options.replyTo ?? null,
    });
    process.stdout.write(`${posted.id}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CodeHostError && (error.reason === 'not_found' || error.reason === 'invalid_input'))
      throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}
