/**
 * Wiring: builds the services a process needs from its configuration. The CLI commands call
 * this; tests call it with their own database.
 */
import pino, { type Logger } from 'pino';
import { recomputeAfterDisposition } from './automation/check';
import { checkDeadlineHandler, fixHandler, planReviewHandler, studyHandler } from './automation/kinds';
import { codeHostLifecycle } from './automation/lifecycle';
import { discoverPlanDocuments } from './automation/plans';
import { announceApiReview } from './automation/triggers';
import { type CodeHostsOptions, createCodeHosts } from './codehost';
import { LOCAL_INSTALLATION_ID } from './codehost/local/local-host';
import type { Config } from './config';
import { redactKeys, redactUrl } from './core/log-redaction';
import { Engine } from './engine/engine';
import { knowledgeRefreshHandler } from './engine/kinds/knowledge-refresh';
import { followedByScorecard, quickActionHandler, scorecardHandler } from './engine/kinds/scorecard';
import { setupHandler } from './engine/kinds/setup';
import { expireLeasesOfDeadProcesses } from './engine/sweeper';
import { registerPullRequestHandlers } from './github/pull-request-handlers';
import { webhookTaskHandler } from './github/webhooks';
import type { Services } from './operations/services';
import { planActivateHandler } from './plans/activate';
import { seedCatalogReviewers } from './review/reviewer-catalog';
import { reviewHandler } from './review/run-review';
import { swarmHandler } from './review/swarm';
import { withoutBoundValues } from './storage/bound-values';
import { type Database, openDatabase } from './storage/database';
import { projectDefaultBranch } from './storage/default-branch-setting';
import { bootstrapKey, ensureWorkspace } from './storage/keys';
import { migrate } from './storage/migrate';

export interface Started {
  services: Services;
  workspaceId: string;
  /**
   * A key minted or taken from SVC_BOOTSTRAP_KEY at this start; null when keys already existed,
   * or when the bootstrap was deferred (then `bootstrapKey()` does it).
   */
  bootstrap: { secret: string; minted: boolean } | null;
  /** Mints the first workspace key if none exists (what a non-deferred start already did). */
  bootstrapKey: () => Promise<{ secret: string; minted: boolean } | null>;
}

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { svc: true },
      serializers: {
        // A failed statement's bound values (key digests, payloads) never reach a log line.
        err: (error: unknown) => pino.stdSerializers.err(withoutBoundValues(error) as Error),
        // Fastify's request line, with a credential sent in the URL redacted (log-redaction.ts).
        req: (request: LoggedRequest) => ({
          method: request.method,
          url: redactUrl(request.url ?? ''),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        }),
      },
      // And an svc key a message quotes (a path or value echoed back) is redacted there too.
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? redactKeys(arg) : arg)) as Parameters<typeof method>,
          );
        },
      },
    },
    destination ?? pino.destination(2),
  );
}

/** The fields of a Fastify request its log line shows. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

export interface ServiceOptions {
  db?: Database;
  logger?: Logger;
  /** Code-host tuning (GitHub client spacing and retries, a test double's fetch). */
  codeHosts?: Partial<CodeHostsOptions>;
  /**
   * Leave the first key to `bootstrapKey()`: `serve` mints it only once it holds its port, so a
   * start that fails (a port in use) never prints a key nobody can use.
   */
  deferBootstrap?: boolean;
}

export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Started> {
  const logger = options.logger ?? createLogger(config);
  const db =
    options.db ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      note: (message) => logger.warn(message),
    }));
  await migrate(db);
  // A database this process opened itself, embedded: runs left running died with their process.
  if (!options.db) await expireLeasesOfDeadProcesses(db);
  const workspaceId = await ensureWorkspace(db);
  await seedCatalogReviewers(db, workspaceId, config.env);
  const mintBootstrap = () => bootstrapKey(db, workspaceId, config.bootstrapKey);
  const bootstrap = options.deferBootstrap ? null : await mintBootstrap();
  const { engine, codeHosts } = createEngine(config, db, logger, options.codeHosts);
  const recomputeCheck = (finding: Parameters<typeof recomputeAfterDisposition>[2]) =>
    recomputeAfterDisposition(db, codeHosts, finding);
  return {
    services: { config, db, engine, codeHosts, logger, recomputeCheck },
    workspaceId,
    bootstrap,
    bootstrapKey: mintBootstrap,
  };
}

/**
 * The engine with every task kind registered. `serve` and `worker` both build it here, so a run
 * one of them enqueues is always executable by the other.
 */
export function createEngine(
  config: Config,
  db: Database,
  logger: Logger,
  codeHostOptions: Partial<CodeHostsOptions> = {},
) {
  const codeHosts = createCodeHosts({
    reposDir: config.reposDir,
    env: config.env,
    // A local repository's project may name its default branch (svc.repository.default_branch).
    localDefaultBranch: projectDefaultBranch(db, LOCAL_INSTALLATION_ID),
    ...codeHostOptions,
  });
  const engine = new Engine(db, config.engine, {}, logger);
  // Setup and the study pass change what a scorecard reads: each is followed by a recompute.
  // Setup makes plans of the plan documents already on the default branch, as a push would.
  const setup = setupHandler(codeHosts, {
    discoverPlans: (project, documents, commit) =>
      discoverPlanDocuments({ db, engine }, project, documents, commit),
  });
  engine.registerHandler('setup', followedByScorecard(setup, 'setup', engine));
  engine.registerHandler(
    'review',
    reviewHandler({
      codeHosts,
      env: config.env,
      lifecycle: codeHostLifecycle(db),
      // An API review delivered to the code host queues its check as its run's first step.
      announce: (review) => announceApiReview({ db, engine, codeHosts }, review),
    }),
  );
  // Deadline runs queued before the DeadlineTimer kept deadlines (automation/deadline-timer.ts).
  engine.registerHandler('check_deadline', checkDeadlineHandler(codeHosts));
  engine.registerHandler('fix', fixHandler(codeHosts));
  engine.registerHandler('study', followedByScorecard(studyHandler, 'study', engine));
  engine.registerHandler('scorecard', scorecardHandler(codeHosts));
  engine.registerHandler('quick_action', quickActionHandler(codeHosts));
  engine.registerHandler('plan_review', planReviewHandler(codeHosts, engine));
  engine.registerHandler('plan_activate', planActivateHandler(codeHosts));
  engine.registerHandler('knowledge_refresh', knowledgeRefreshHandler(codeHosts));
  engine.registerHandler('swarm', swarmHandler(engine));
  engine.registerHandler('webhook', webhookTaskHandler({ engine, codeHosts, env: config.env, logger }));
  registerPullRequestHandlers();
  return { engine, codeHosts };
}
