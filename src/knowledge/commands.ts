/**
 * Whether a shell command runs a tool: the tool must be the command word of one of its
 * segments (split at `&&`, `||`, `;`, `|`, parentheses, backquotes and `$(`), possibly by a path
 * (`./node_modules/.bin/eslint`), after environment assignments, or through a wrapper (`npx`,
 * `c8`, `cross-env`, `poetry run`, `python -m`, ...). A command that only mentions it does not
 * count: `mocha --reporter tap` runs mocha, not tap. Word by word rather than one regular
 * expression: nested optional flags in a pattern backtrack exponentially on long lines.
 */

export type CommandMatcher = (command: string) => boolean;

const ENV_ASSIGNMENT = /^[A-Za-z_]\w*=/;
const WRAPPERS = new Set([
  'npx',
  'bunx',
  'pnpx',
  'uvx',
  'time',
  'nice',
  'env',
  'cross-env',
  'dotenv',
  'nyc',
  'c8',
  'yarn',
  'pnpm',
]);
const TWO_WORD_WRAPPERS = new Set([
  'npm exec',
  'npm x',
  'pnpm exec',
  'pnpm dlx',
  'yarn exec',
  'yarn dlx',
  'yarn run',
  'bun x',
  'poetry run',
  'uv run',
  'pipx run',
  'pipenv run',
  'hatch run',
  'pdm run',
  'rye run',
]);

const unquote = (token: string) => token.replace(/^['"]+|['"]+$/g, '');

/** `./node_modules/.bin/tsc` → `tsc`, `prettier@3.3.0` → `prettier`, `@biomejs/biome@1.9` → `biome`. */
function commandName(token: string): string {
  const name = token.slice(token.lastIndexOf('/') + 1);
  const at = name.indexOf('@', 1);
  return at === -1 ? name : name.slice(0, at);
}

const isFlagOrAssignment = (token: string) => token.startsWith('-') || ENV_ASSIGNMENT.test(token);

/**
 * The commands a segment may run, each with the words after it. After a wrapper's flags, a word
 * following a flag may be that flag's value or the wrapped command, so both are taken.
 */
export function commandWords(segment: string): { word: string; rest: string[] }[] {
  const tokens = segment
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '')
    .map(unquote);
  const out: { word: string; rest: string[] }[] = [];
  let i = 0;
  while (i < tokens.length && ENV_ASSIGNMENT.test(tokens[i] as string)) i++;
  while (i < tokens.length) {
    const word = commandName(tokens[i] as string);
    out.push({ word, rest: tokens.slice(i + 1) });
    const next = tokens[i + 1];
    const wrapper =
      TWO_WORD_WRAPPERS.has(`${word} ${next}`) || (/^(?:python[\d.]*|py)$/.test(word) && next === '-m')
        ? 2
        : WRAPPERS.has(word)
          ? 1
          : 0;
    if (wrapper === 0) break;
    i += wrapper;
    while (i < tokens.length && isFlagOrAssignment(tokens[i] as string)) i++;
    const previous = tokens[i - 1];
    if (previous?.startsWith('-') && previous !== '--' && !previous.includes('=') && i + 1 < tokens.length) {
      out.push({ word: commandName(tokens[i] as string), rest: tokens.slice(i + 1) });
      i += 1;
      while (i < tokens.length && isFlagOrAssignment(tokens[i] as string)) i++;
    }
  }
  return out;
}

export function segments(command: string): string[] {
  return command.split(/&&|\|\||\$\(|[;|()`\n]/);
}

/** A matcher for commands running one of `names`, whose following words satisfy `rest` if given. */
export function runs(names: string | string[], rest?: (words: string[]) => boolean): CommandMatcher {
  const wanted = new Set(Array.isArray(names) ? names : [names]);
  return (command) =>
    segments(command).some((segment) =>
      commandWords(segment).some((c) => wanted.has(c.word) && (!rest || rest(c.rest))),
    );
}

/** `go test`, `cargo clippy`: a command whose first argument is the subcommand. */
export const runsSub = (name: string, ...subcommands: string[]): CommandMatcher =>
  runs(name, (words) => subcommands.includes(words[0] ?? ''));

/** For commands no word-by-word reading fits (`mvn checkstyle:check`): a linear pattern. */
export const matches =
  (pattern: RegExp): CommandMatcher =>
  (command) =>
    pattern.test(command);

export const anyOf =
  (...matchers: CommandMatcher[]): CommandMatcher =>
  (command) =>
    matchers.some((m) => m(command));
