/**
 * `svc` (also installed as `svc-review`): serve | worker | watch | mcp | keys | migrate | review |
 * findings | comment.
 * Every service flag has an environment twin (see src/config.ts); flags win.
 *
 * Each command loads its modules when it runs, so `svc review` never loads the service (HTTP
 * server, database, GitHub client). A usage error exits 2, never 1: for `svc review`, 1 means
 * "a P0 is open".
 */
import { Command, Option } from 'commander';
import type { Config } from '../config';
import { CliError, EXIT } from './exit-codes';
import { packageVersion } from './version';

const program = new Command()
  .name('svc')
  .description('Self-hostable code review service, and a code reviewer for your branch (`svc review`)')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) })
  // Commander exits 1 on a usage error; help and --version exit 0. Set before the commands are
  // added, so every subcommand inherits it.
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
  });

async function createLogger(config: Config) {
  return (await import('../main')).createLogger(config);
}

async function configFrom(options: Record<string, unknown>) {
  const { loadConfig } = await import('../config');
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.port !== undefined) env.PORT = String(options.port);
  if (options.host !== undefined) env.HOST = String(options.host);
  if (options.dataDir !== undefined) env.SVC_DATA_DIR = String(options.dataDir);
  if (options.repos !== undefined) env.SVC_REPOS_DIR = String(options.repos);
  if (options.databaseUrl !== undefined) env.DATABASE_URL = String(options.databaseUrl);
  if (options.worker === false) env.SVC_NO_WORKER = '1';
  if (options.watch === true) env.SVC_WATCH = '1';
  if (options.interval !== undefined) env.SVC_WATCH_INTERVAL_MS = String(options.interval);
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
    .option('--no-worker', 'do not execute runs in this process (run `svc worker` elsewhere)')
    .option(
      '--watch',
      'also watch the local repositories for pull requests, pushes and comments (SVC_WATCH=1)',
    )
    .addOption(
      new Option('--interval <ms>', 'with --watch: how often to look, in milliseconds (default 2000)').env(
        'SVC_WATCH_INTERVAL_MS',
      ),
    ),
).action(async (options) => {
  const { serveCommand } = await import('./serve');
  const config = await configFrom(options);
  await serveCommand(config, await createLogger(config));
});

common(program.command('worker').description('claim and execute runs from the database')).action(
  async (options) => {
    const { workerCommand } = await import('./worker');
    const config = await configFrom(options);
    await workerCommand(config, await createLogger(config));
  },
);

common(
  program
    .command('watch')
    .description(
      'run the automation on the local repositories: review new and updated pull requests, count ' +
        'merges, turn plan documents pushed to the default branch into plans, answer `svc comment`s',
    )
    .addOption(
      new Option('--interval <ms>', 'how often to look, in milliseconds (default 2000)').env(
        'SVC_WATCH_INTERVAL_MS',
      ),
    )
    .option('--no-worker', 'only start runs; execute them elsewhere (`svc worker`, `svc serve`)'),
).action(async (options) => {
  const { watchCommand } = await import('./watch');
  const config = await configFrom(options);
  await watchCommand(config, await createLogger(config));
});

common(program.command('migrate').description('apply database migrations and exit')).action(
  async (options) => {
    const { migrateCommand } = await import('./admin');
    await migrateCommand(await configFrom(options));
  },
);

const keys = program
  .command('keys')
  .description(
    'manage API keys: through a running svc with --url (SVC_URL) and a workspace key (SVC_API_KEY), ' +
      'else directly in the database (when no svc holds it)',
  );
/** The key commands' shared options: where the database is, or which running svc to ask. */
const keysCommand = (cmd: Command) =>
  common(cmd)
    .addOption(new Option('--url <url>', 'a running svc to manage keys through').env('SVC_URL'))
    .addOption(new Option('--api-key <key>', 'a workspace key of that svc').env('SVC_API_KEY'));
const keysTarget = (options: { url?: string; apiKey?: string }) => ({
  url: options.url,
  apiKey: options.apiKey,
});

keysCommand(
  keys
    .command('create')
    .description('mint a key and print its secret (shown once)')
    .option('--project <id>', 'pin the key to one project')
    .option('--personal', 'mint a personal token instead of a workspace key')
    .option('--name <name>', 'a name to recognise the key by', 'cli'),
).action((options) =>
  exitWith(async () => {
    const { keysCreate } = await import('./keys');
    await keysCreate(await configFrom(options), keysTarget(options), options);
    return EXIT.ok;
  }),
);

keysCommand(keys.command('list').description("list the workspace's keys (never their secrets)")).action(
  (options) =>
    exitWith(async () => {
      const { keysList } = await import('./keys');
      await keysList(await configFrom(options), keysTarget(options));
      return EXIT.ok;
    }),
);

keysCommand(keys.command('revoke <key_id>').description('revoke a key; requests with it get 401')).action(
  (keyId: string, options) =>
    exitWith(async () => {
      const { keysRevoke } = await import('./keys');
      await keysRevoke(await configFrom(options), keysTarget(options), keyId);
      return EXIT.ok;
    }),
);

program
  .command('mcp')
  .description('serve the API operations as MCP tools over stdio, forwarding to a running svc')
  .addOption(
    new Option('--url <url>', 'base URL of the svc API').env('SVC_URL').default('http://127.0.0.1:8080'),
  )
  .addOption(new Option('--api-key <key>', 'API key to call with').env('SVC_API_KEY'))
  .option('--profile <name>', 'serve a named tool set: reviewer-agent, admin or all (default all)')
  .option('--tools <areas>', 'serve these areas and tools, comma-separated (e.g. reviews,findings)')
  .action(async (options) => {
    if (!options.apiKey) {
      process.stderr.write('svc mcp needs an API key: set SVC_API_KEY or pass --api-key\n');
      process.exit(2);
    }
    const [{ mcpStdioCommand }, { selectionList, UnknownToolSelection }] = await Promise.all([
      import('../mcp/stdio'),
      import('../mcp/tool-subsets'),
    ]);
    const selection = { profile: options.profile ?? null, tools: selectionList(options.tools) };
    try {
      await mcpStdioCommand({ url: options.url, apiKey: options.apiKey, selection });
    } catch (error) {
      if (!(error instanceof UnknownToolSelection)) throw error;
      process.stderr.write(`svc mcp: ${error.message}\n`);
      process.exit(2);
    }
  });

/** Runs a review or findings command and sets the exit code from what it returned or threw. */
async function exitWith(work: () => Promise<number>) {
  try {
    process.exitCode = await work();
  } catch (error) {
    process.stderr.write(`svc: ${(error as Error).message}\n`);
    process.exitCode = error instanceof CliError ? error.exitCode : EXIT.failed;
  }
}

program
  .command('review')
  .description(
    'review the current branch against the default branch (or a range) and print the findings; ' +
      'exit 0: no open P0, 1: a P0 is open, 2: usage error, 3: the review failed',
  )
  .option('--repo <dir>', 'the repository (default: the current directory)')
  .option(
    '--base <ref>',
    'compare with this ref, from its merge base with the head (default: the default branch)',
  )
  .option('--head <ref>', 'the head of the range (default: HEAD)')
  .option(
    '--include-uncommitted',
    'also review uncommitted changes in the work tree (staged, unstaged, untracked)',
  )
  .option(
    '--reviewers <ids>',
    'comma-separated lineup, e.g. security,secrets or general@anthropic/<model> (default: the planner chooses)',
  )
  .addOption(
    new Option('--format <format>', 'output format').choices(['text', 'json', 'sarif']).default('text'),
  )
  .option('--output <file>', 'write the output to a file instead of stdout')
  .option('--all', `show every finding in the text output (JSON and SARIF always have every one)`)
  .action((options) =>
    exitWith(async () => {
      const { reviewCommand } = await import('./review');
      return reviewCommand(options);
    }),
  );

const findings = program
  .command('findings')
  .description("the findings in this branch's ledger (kept by svc review in the git dir)");
const ledgerOptions = (cmd: Command) =>
  cmd
    .option('--repo <dir>', 'the repository (default: the current directory)')
    .option('--branch <name>', 'the branch whose ledger to use (default: the current branch)');

ledgerOptions(findings.command('list').description('list the findings in the ledger'))
  .addOption(
    new Option('--status <status>', 'which findings')
      .choices(['open', 'dismissed', 'fixed', 'all'])
      .default('all'),
  )
  .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
  .action((options) => exitWith(async () => (await import('./findings')).findingsList(options)));

ledgerOptions(
  findings
    .command('dismiss')
    .description('dismiss a finding: later reviews keep it dismissed and it does not fail the review')
    .argument('<id>', 'the finding id (or the first characters of it) shown by svc review')
    .requiredOption('--reason <text>', 'why it is not a defect here (kept in the ledger)'),
).action((id: string, options) =>
  exitWith(async () => (await import('./findings')).findingsDismiss(id, options)),
);

ledgerOptions(
  findings
    .command('reopen')
    .description('take a dismissal back: the finding is open again')
    .argument('<id>', 'the finding id (or the first characters of it)'),
).action((id: string, options) =>
  exitWith(async () => (await import('./findings')).findingsReopen(id, options)),
);

program
  .command('comment')
  .description(
    'write a comment on a local pull request as a person (`@service …` commands; with --reply-to, ' +
      '`wontfix: <reason>` or `fix this` on a finding); `svc watch` or `serve --watch` acts on it',
  )
  .argument('<repo>', 'the repository, owner/name under the repos directory')
  .argument('<pr>', 'the pull request number')
  .argument('<body>', 'the comment')
  .option('--reply-to <id>', "the comment to answer (a finding's comment id in .git/svc/comments.jsonl)")
  .option('--author <name>', 'who writes it (default: the user name)')
  .addOption(
    new Option('--repos <dir>', 'git repositories served by the local code host (default ./repos)').env(
      'SVC_REPOS_DIR',
    ),
  )
  .action((repo: string, pr: string, body: string, options) =>
    exitWith(async () => (await import('./watch')).commentCommand(repo, pr, body, options)),
  );

program.parseAsync().catch((error: Error) => {
  process.stderr.write(`svc: ${error.message}\n`);
  process.exit(1);
});
