/**
 * `svc`: serve | worker | mcp | keys | migrate (and review, arriving with the reviews work).
 * Every flag has an environment twin (see src/config.ts); flags win.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config';
import { createLogger } from '../main';

const program = new Command()
  .name('svc')
  .description('Self-hostable code review service')
  .showHelpAfterError()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

function configFrom(options: Record<string, unknown>) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.port !== undefined) env.PORT = String(options.port);
  if (options.host !== undefined) env.HOST = String(options.host);
  if (options.dataDir !== undefined) env.SVC_DATA_DIR = String(options.dataDir);
  if (options.repos !== undefined) env.SVC_REPOS_DIR = String(options.repos);
  if (options.databaseUrl !== undefined) env.DATABASE_URL = String(options.databaseUrl);
  if (options.worker === false) env.SVC_NO_WORKER = '1';
  return loadConfig(env);
}

const common = (cmd: Command) =>
  cmd
    .addOption(new Option('--database-url <url>', 'PostgreSQL connection string').env('DATABASE_URL'))
    .addOption(
      new Option('--data-dir <dir>', 'embedded database directory (default ./.svc)').env('SVC_DATA_DIR'),
    )
    .addOption(
      new Option('--repos <dir>', 'git repositories served by the local code host (default ./repos)').env(
        'SVC_REPOS_DIR',
      ),
    );

common(
  program
    .command('serve')
    .description('serve the HTTP API (and execute runs in-process unless --no-worker)')
    .addOption(new Option('--port <port>', 'port to listen on (default 8080)').env('PORT'))
    .addOption(new Option('--host <host>', 'address to listen on (default 127.0.0.1)').env('HOST'))
    .option('--no-worker', 'do not execute runs in this process (run `svc worker` elsewhere)'),
).action(async (options) => {
  const { serveCommand } = await import('./serve');
  const config = configFrom(options);
  await serveCommand(config, createLogger(config));
});

common(program.command('worker').description('claim and execute runs from the database')).action(
  async (options) => {
    const { workerCommand } = await import('./worker');
    const config = configFrom(options);
    await workerCommand(config, createLogger(config));
  },
);

common(program.command('migrate').description('apply database migrations and exit')).action(
  async (options) => {
    const { migrateCommand } = await import('./admin');
    await migrateCommand(configFrom(options));
  },
);

const keys = program.command('keys').description('manage API keys');
common(
  keys
    .command('create')
    .description('mint a key and print its secret (shown once)')
    .option('--project <id>', 'pin the key to one project')
    .option('--personal', 'mint a personal token instead of a workspace key')
    .option('--name <name>', 'a name to recognise the key by', 'cli'),
).action(async (options) => {
  const { keysCreateCommand } = await import('./admin');
  await keysCreateCommand(configFrom(options), options);
});

program
  .command('mcp')
  .description('serve the API operations as MCP tools over stdio, forwarding to a running svc')
  .addOption(
    new Option('--url <url>', 'base URL of the svc API').env('SVC_URL').default('http://127.0.0.1:8080'),
  )
  .addOption(new Option('--api-key <key>', 'API key to call with').env('SVC_API_KEY'))
  .action(async (options) => {
    if (!options.apiKey) {
      process.stderr.write('svc mcp needs an API key: set SVC_API_KEY or pass --api-key\n');
      process.exit(2);
    }
    const { mcpStdioCommand } = await import('../mcp/stdio');
    await mcpStdioCommand({ url: options.url, apiKey: options.apiKey });
  });

program
  .command('review')
  .description('review a local git range and print the findings (exit 1 when a P0 is open)')
  .option('--repo <dir>', 'the repository (default: the current directory)')
  .option('--base <ref>', 'base of the range (default: merge base with the default branch)')
  .option('--head <ref>', 'head of the range (default: HEAD)')
  .option('--reviewers <ids>', 'comma-separated lineup (default: the planner chooses)')
  .addOption(
    new Option('--format <format>', 'output format').choices(['text', 'json', 'sarif']).default('text'),
  )
  .option('--output <file>', 'write the output to a file instead of stdout')
  .option('--data-dir <dir>', 'embedded database (default: <git dir>/svc, shared by re-runs)')
  .action(async (options) => {
    const { reviewCommand, CliError } = await import('./review');
    try {
      process.exitCode = await reviewCommand(options);
    } catch (error) {
      process.stderr.write(`svc review: ${(error as Error).message}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : 3;
    }
  });

program.parseAsync().catch((error: Error) => {
  process.stderr.write(`svc: ${error.message}\n`);
  process.exit(1);
});
