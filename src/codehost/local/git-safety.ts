/**
 * What makes a git call run nothing a repository configured. Whoever can write a served
 * repository's `.git` (its config, an included config file, `info/attributes`, `hooks/`) could
 * otherwise name programs git starts as svc's user: hooks, an fsmonitor, a pager, external diff
 * and textconv commands, clean/smudge filters, merge drivers, credential helpers, signing and
 * verification programs, an ssh command, a remote's upload-pack. svc needs none of them, so:
 *
 * - `-c` pairs (command-line config outranks every config file, includes too) switch off each
 *   program-running key whose name is fixed, whoever set it: svc never wants a hook or a pager.
 * - the environment drops or empties variables that name a program and outrank their config key
 *   (GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EDITOR...), and allows no transport at
 *   all (GIT_ALLOW_PROTOCOL empty), which covers every remote-side key by any remote's name.
 * - diff-producing commands always get `--no-ext-diff --no-textconv`, whatever the driver names.
 * - filter, diff and merge drivers have names chosen by the repository (`.gitattributes` picks
 *   them), so a call that could start one first lists the config keys the repository set and
 *   empties each driver command it finds (through GIT_CONFIG_KEY_n: a `-c` key cannot hold the
 *   `=` a driver name may contain). Calls that only read or write objects and refs cannot start
 *   a driver and skip that listing (one git process fewer on every hot path).
 *
 * System and global config (and the environment svc is started with) belong to the operator and
 * are trusted: their drivers (git-lfs, say) keep working, only the fixed keys above are off.
 */

/** Config that outranks the repository's on every call; an empty value means "no program" to git. */
export const NEUTRAL_CONFIG: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  // Hooks are looked up as /dev/null/<name>, which never exists; this also hides .git/hooks.
  ['core.hooksPath', '/dev/null'],
  ['core.sshCommand', ''],
  ['core.askPass', ''],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  ['core.alternateRefsCommand', ''],
  ['diff.external', ''],
  // An empty helper clears the list, URL-specific helpers included (command line is read last).
  ['credential.helper', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['push.gpgSign', 'false'],
  // `show`/`log` would otherwise verify a signed commit with gpg.program.
  ['log.showSignature', 'false'],
  ['gpg.program', ''],
  ['gpg.openpgp.program', ''],
  ['gpg.x509.program', ''],
  ['gpg.ssh.program', ''],
  ['gpg.ssh.defaultKeyCommand', ''],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['protocol.allow', 'never'],
  // Commands that recurse start git in submodules, whose own drivers the listing does not see.
  ['submodule.recurse', 'false'],
];

/**
 * Variables that name a program and outrank its config key, or would let git talk to a remote
 * (a partial clone fetches a missing object from its promisor remote on any read).
 */
const NEUTRAL_ENV: Readonly<Record<string, string | undefined>> = {
  GIT_EXTERNAL_DIFF: undefined,
  GIT_PAGER: undefined,
  PAGER: undefined,
  GIT_SSH: undefined,
  GIT_SSH_COMMAND: undefined,
  GIT_PROXY_COMMAND: undefined,
  SSH_ASKPASS: undefined,
  // Empty, not unset: unset would fall through to core.askPass and SSH_ASKPASS.
  GIT_ASKPASS: '',
  GIT_EDITOR: ':',
  GIT_SEQUENCE_EDITOR: ':',
  GIT_TERMINAL_PROMPT: '0',
  // A list of allowed protocols that names none: no transport, whatever a remote's URL or helper.
  GIT_ALLOW_PROTOCOL: '',
  GIT_PROTOCOL_FROM_USER: '0',
  // git 2.45+ refuses lazy fetches with it; older gits are held back by GIT_ALLOW_PROTOCOL.
  GIT_NO_LAZY_FETCH: '1',
};

/** Commands that print diffs: each gets `--no-ext-diff --no-textconv` right after its name. */
const DIFF_COMMANDS = new Set(['diff', 'diff-tree', 'diff-index', 'diff-files', 'log', 'show']);

/**
 * Commands that only read or write objects, refs and config: they never convert work-tree
 * content (filters), print a patch with a diff driver (`log` and `show` always get
 * `--no-ext-diff --no-textconv`) or merge (merge drivers). None writes an index: writing one
 * re-reads each racily clean file through its clean filter (so `write-tree`, `read-tree` and
 * `update-index` are not here), and `diff` is not either: it can compare with the work tree.
 */
const DRIVERLESS_COMMANDS = new Set([
  'rev-parse',
  'rev-list',
  'merge-base',
  'for-each-ref',
  'show-ref',
  'symbolic-ref',
  'update-ref',
  'check-ref-format',
  'commit-tree',
  'ls-tree',
  'config',
  'cat-file',
  'log',
  'show',
]);

/** Options that make a driverless command run a driver after all (a later option wins over ours). */
const DRIVER_OPTIONS = new Set(['--textconv', '--filters', '--ext-diff']);

/** Where the command name is in `args`: after any leading `-c key=value` pairs the caller set. */
function commandIndex(args: readonly string[]): number {
  let i = 0;
  while (args[i] === '-c') i += 2;
  const name = args[i];
  // Any other global option could change what the command does; refuse rather than guess.
  if (name === undefined || name.startsWith('-'))
    throw new Error(`git call without a command after its -c options: ${JSON.stringify(args.slice(0, 4))}`);
  return i;
}

/** The argv svc runs for `args`: the neutral config first, diff commands with drivers off. */
export function neutralArgv(args: readonly string[]): string[] {
  const at = commandIndex(args);
  const command = args[at] as string;
  const forced = DIFF_COMMANDS.has(command) ? ['--no-ext-diff', '--no-textconv'] : [];
  return [
    '--no-pager',
    ...NEUTRAL_CONFIG.flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    ...args.slice(0, at + 1),
    ...forced,
    ...args.slice(at + 1),
  ];
}

/** Whether `args` could start a filter, diff or merge driver named by the repository. */
export function mayStartDriver(args: readonly string[]): boolean {
  const at = commandIndex(args);
  if (!DRIVERLESS_COMMANDS.has(args[at] as string)) return true;
  const options = args.slice(at + 1);
  const end = options.indexOf('--end-of-options');
  return (end < 0 ? options : options.slice(0, end)).some((arg) => DRIVER_OPTIONS.has(arg));
}

/** The git call that lists every config key with its scope, NUL-separated, for `driverOverrides`. */
export const CONFIG_KEYS_LISTING = ['config', '--null', '--show-scope', '--name-only', '--list'];

/** Scopes that are the operator's: system, global, and the command line / environment svc was given. */
const OPERATOR_SCOPES = new Set(['system', 'global', 'command']);

/** A driver key that names a program, and what replaces it. */
const DRIVER_KEYS: readonly (readonly [RegExp, string])[] = [
  [/^filter\..+\.(clean|smudge|process)$/, ''],
  [/^diff\..+\.(command|textconv)$/, ''],
  [/^merge\..+\.driver$/, ''],
];

/**
 * Config overrides for every driver command the repository set (scope local or worktree,
 * included files too), from CONFIG_KEYS_LISTING's output. A filter also loses `required`, so
 * git reads the file as it is instead of failing for want of the filter.
 */
export function driverOverrides(listing: string): Map<string, string> {
  const fields = listing.split('\0');
  const overrides = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i] as string;
    const key = fields[i + 1] as string;
    if (OPERATOR_SCOPES.has(scope)) continue;
    for (const [pattern, value] of DRIVER_KEYS) {
      if (!pattern.test(key)) continue;
      overrides.set(key, value);
      if (key.startsWith('filter.')) overrides.set(key.replace(/\.[a-z]+$/, '.required'), 'false');
    }
  }
  return overrides;
}

/**
 * The environment for a git call: svc's own, with `extra` (an identity, a temporary index),
 * stable messages, no optional index locks, the neutral variables, and `overrides` appended to
 * any GIT_CONFIG_COUNT entries the operator set.
 */
export function neutralEnv(
  extra: NodeJS.ProcessEnv = {},
  overrides: ReadonlyMap<string, string> = new Map(),
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LC_ALL: 'C',
    GIT_OPTIONAL_LOCKS: '0',
    ...extra,
  };
  for (const [name, value] of Object.entries(NEUTRAL_ENV)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  if (overrides.size > 0) {
    const given = Number(env.GIT_CONFIG_COUNT);
    let count = Number.isInteger(given) && given > 0 ? given : 0;
    for (const [key, value] of overrides) {
      env[`GIT_CONFIG_KEY_${count}`] = key;
      env[`GIT_CONFIG_VALUE_${count}`] = value;
      count++;
    }
    env.GIT_CONFIG_COUNT = String(count);
  }
  return env;
}
