/**
 * The task runners a CI command may go through before it reaches a tool (`tox -e typing`,
 * `pre-commit run`, `make test`, `just lint`, `nox -s tests`, `task lint`, `hatch run`,
 * `pdm run`), each read from its configuration file as text: which targets an invocation selects
 * and the commands each target runs. Nothing is executed, noxfile.py included (its sessions are
 * read with line patterns, not by running Python). Following the chain is task-runners.ts.
 */
import { commandLines } from './ci';
import { field, isObject, type Json, parseIni, type Sources } from './sources';

/** One thing a runner runs: a tox env, a hook, a make target, a recipe, a session, a script. */
export interface Target {
  /** Evidence as `path#name` (`tox.ini#testenv:typing`), listed in a tool's `enforced_in`. */
  at: string;
  /** How the chain names it (`tox.ini [testenv:typing]`). */
  label: string;
  /** Its shell commands; a prerequisite is a command of its runner (`make lint`). */
  commands: string[];
}

export interface TaskRunner {
  /** The targets a command runs, given its command word and the words after it; null: not this runner. */
  select(word: string, args: string[]): Target[] | null;
  /** Every target it defines. */
  all(): Target[];
}

/** Configuration files of task runners, read at the repository root only (CI runs them from there). */
export const RUNNER_FILES = [
  'tox.toml',
  '.pre-commit-config.yaml',
  '.pre-commit-config.yml',
  'noxfile.py',
  'Makefile',
  'makefile',
  'GNUmakefile',
  'justfile',
  'Justfile',
  '.justfile',
  'Taskfile.yml',
  'Taskfile.yaml',
  'taskfile.yml',
];

/** A larger configuration file is not read for targets (a generated Makefile says nothing useful). */
const MAX_TEXT = 256 * 1024;
/**
 * Lines, lists and sessions longer or more numerous than any hand-written configuration are
 * skipped: the patterns below are then linear in the file, whatever the repository committed.
 */
const MAX_LINE = 2000;
const MAX_SESSIONS = 200;

const positional = (args: string[], valueFlags: ReadonlySet<string>) => {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if (a.startsWith('-')) {
      if (valueFlags.has(a)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
};

/** The value of a flag (`-e x`, `-ex`, `--env=x`), every occurrence. */
function flagValues(args: string[], short: string[], long: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if ([...short, ...long].includes(a)) out.push(args[++i] ?? '');
    else if (long.some((l) => a.startsWith(`${l}=`))) out.push(a.slice(a.indexOf('=') + 1));
    else if (short.some((s) => a.startsWith(s) && !a.startsWith('--') && a.length > s.length))
      out.push(a.slice(2).replace(/^=/, ''));
  }
  return out;
}

/** A value only known when CI runs (`${{ matrix.env }}`, `$ENV`): it may be any target. */
const isExpression = (value: string) => value === '' || /[$%{]/.test(value);

function textOf(src: Sources, path: string): string | null {
  const text = src.has(path) ? src.text(path) : null;
  return text !== null && text.length <= MAX_TEXT ? text : null;
}

// tox ------------------------------------------------------------------------------------------

/** Drops a factor condition (`py38: pytest`, `!lint: x`) and tox substitutions it cannot know. */
function toxLine(line: string): string {
  return line
    .replace(/^-\s*/, '')
    .replace(/^!?[\w.-]+(?:,!?[\w.-]+)*:\s+/, '')
    .replace(/\{posargs(?::([^}]*))?\}/g, (_, d: string | undefined) => d ?? '')
    .trim();
}

/** `py{38,39}-lint` → `py38-lint`, `py39-lint` (one brace group, as envlists mostly use). */
function expandEnvNames(list: string): string[] {
  return list
    .slice(0, MAX_LINE)
    .split(/[\s,]+(?![^{]*\})/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .flatMap((name) => {
      const m = /^(.*?)\{([^}]*)\}(.*)$/.exec(name);
      if (!m) return [name];
      return (m[2] as string).split(',').map((part) => `${m[1]}${part.trim()}${m[3]}`);
    });
}

interface ToxConfig {
  file: string;
  envList: string[];
  /** Each env's commands by name; '' is the base env every other inherits from. */
  envs: Map<string, { at: string; label: string; commands: string[] | null }>;
}

function toxFromIni(file: string, sections: Map<string, Map<string, string>>, main: string): ToxConfig {
  const envs: ToxConfig['envs'] = new Map();
  const ref = (text: string) =>
    text.replace(/\{\[([^\]]+)\]([\w-]+)\}/g, (_, section: string, key: string) =>
      (sections.get(section)?.get(key.replace(/-/g, '_')) ?? '').trim(),
    );
  for (const [name, keys] of sections) {
    const env = name === 'testenv' ? '' : name.startsWith('testenv:') ? name.slice('testenv:'.length) : null;
    if (env === null) continue;
    const lines = ['commands_pre', 'commands', 'commands_post'].flatMap((k) => {
      const v = keys.get(k);
      return v === undefined ? [] : ref(v).split('\n').map(toxLine);
    });
    const has = ['commands_pre', 'commands', 'commands_post'].some((k) => keys.has(k));
    envs.set(env, {
      at: `${file}#${name}`,
      label: `${file} [${name}]`,
      commands: has ? lines.filter((l) => l !== '') : null,
    });
  }
  const top = sections.get(main);
  return { file, envList: expandEnvNames(top?.get('envlist') ?? top?.get('env_list') ?? ''), envs };
}

/** tox's native TOML (`tox.toml`, `[tool.tox]`): commands are lists of arguments. */
function toxFromToml(file: string, table: Json, prefix: string): ToxConfig {
  const line = (argv: unknown) =>
    (Array.isArray(argv) ? argv : [])
      .flatMap((a) => {
        if (typeof a === 'string') return [a];
        const d = isObject(a) ? a.default : undefined;
        return Array.isArray(d) ? d.filter((x): x is string => typeof x === 'string') : [];
      })
      .join(' ');
  const commandsOf = (env: unknown) => {
    const keys = ['commands_pre', 'commands', 'commands_post'].filter((k) => Array.isArray(field(env, k)));
    if (keys.length === 0) return null;
    return keys.flatMap((k) => (field(env, k) as unknown[]).map(line)).filter((l) => l !== '');
  };
  const envs: ToxConfig['envs'] = new Map();
  envs.set('', {
    at: `${file}#${prefix}env_run_base`,
    label: `${file} [${prefix}env_run_base]`,
    commands: commandsOf(table.env_run_base),
  });
  for (const [name, env] of Object.entries(isObject(table.env) ? table.env : {})) {
    envs.set(name, {
      at: `${file}#${prefix}env.${name}`,
      label: `${file} [${prefix}env.${name}]`,
      commands: commandsOf(env),
    });
  }
  const list = Array.isArray(table.env_list) ? table.env_list.filter((e) => typeof e === 'string') : [];
  return { file, envList: list as string[], envs };
}

/** The first tox configuration tox itself would use. */
function readTox(src: Sources): ToxConfig | null {
  if (textOf(src, 'tox.ini') !== null) {
    const ini = src.ini('tox.ini');
    if (ini) return toxFromIni('tox.ini', ini, 'tox');
  }
  const cfg = textOf(src, 'setup.cfg') !== null ? src.ini('setup.cfg') : null;
  if (cfg?.has('tox:tox')) return toxFromIni('setup.cfg', cfg, 'tox:tox');
  const pyproject = textOf(src, 'pyproject.toml') !== null ? src.toml('pyproject.toml') : null;
  const legacy = field(pyproject, 'tool', 'tox', 'legacy_tox_ini');
  if (typeof legacy === 'string') return toxFromIni('pyproject.toml', parseIni(legacy), 'tox');
  const native = field(pyproject, 'tool', 'tox');
  if (isObject(native)) return toxFromToml('pyproject.toml', native, 'tool.tox.');
  const toml = textOf(src, 'tox.toml') !== null ? src.toml('tox.toml') : null;
  return toml ? toxFromToml('tox.toml', toml, '') : null;
}

const TOX_SUBCOMMANDS = new Set(['run', 'r', 'run-parallel', 'p', 'legacy', 'le']);

function toxRunner(tox: ToxConfig): TaskRunner {
  const base = tox.envs.get('');
  const envTarget = (name: string): Target | null => {
    const own = tox.envs.get(name);
    // An env without its own commands runs the base env's (tox's inheritance).
    const commands = own?.commands ?? base?.commands ?? null;
    if (!commands) return null;
    const from = own?.commands ? own : base;
    return { at: from?.at ?? tox.file, label: from?.label ?? tox.file, commands };
  };
  const every = () => [...new Set([...tox.envList, ...[...tox.envs.keys()].filter((e) => e !== '')])];
  return {
    select(word, args) {
      if (word !== 'tox') return null;
      if (args[0] && !args[0].startsWith('-') && !TOX_SUBCOMMANDS.has(args[0])) return [];
      const named = flagValues(args, ['-e'], ['--env']);
      let envs: string[];
      if (named.some(isExpression) || named.some((v) => v.split(',').includes('ALL'))) envs = every();
      else if (named.length > 0) envs = named.flatMap((v) => v.split(','));
      else if (flagValues(args, ['-m'], ['--labels']).length > 0) envs = every();
      else envs = tox.envList.length > 0 ? tox.envList : ['py'];
      const out = new Map<string, Target>();
      for (const env of envs) {
        const t = envTarget(env.trim());
        if (t) out.set(t.at, t);
      }
      return [...out.values()];
    },
    all: () => [...tox.envs.keys()].flatMap((e) => envTarget(e) ?? []),
  };
}

// pre-commit -----------------------------------------------------------------------------------

/** What the hooks of the usual mirrors run, by hook id (a hook's own `entry` wins when it has one). */
const HOOK_COMMANDS: Record<string, string> = {
  ruff: 'ruff check',
  'ruff-check': 'ruff check',
  'ruff-format': 'ruff format',
  flake8: 'flake8',
  pylint: 'pylint',
  mypy: 'mypy',
  pyright: 'pyright',
  basedpyright: 'pyright',
  black: 'black',
  'black-jupyter': 'black',
  eslint: 'eslint',
  prettier: 'prettier',
  oxlint: 'oxlint',
  'biome-check': 'biome check',
  'biome-ci': 'biome ci',
  'biome-format': 'biome format',
  'biome-lint': 'biome lint',
  dprint: 'dprint check',
  'golangci-lint': 'golangci-lint run',
  'golangci-lint-full': 'golangci-lint run',
  'go-fmt': 'gofmt',
  'go-vet': 'go vet',
  'go-vet-mod': 'go vet',
  'go-staticcheck-mod': 'staticcheck',
  'go-unit-tests': 'go test',
  'go-test-mod': 'go test',
  fmt: 'cargo fmt',
  clippy: 'cargo clippy',
};

function preCommitRunner(src: Sources): TaskRunner | null {
  const file = ['.pre-commit-config.yaml', '.pre-commit-config.yml'].find((f) => textOf(src, f) !== null);
  const doc = file ? src.yaml(file) : null;
  if (!file || !isObject(doc)) return null;
  const hooks: (Target & { id: string; alias: string | null; manual: boolean })[] = [];
  for (const repo of Array.isArray(doc.repos) ? doc.repos : []) {
    for (const hook of Array.isArray(field(repo, 'hooks')) ? (field(repo, 'hooks') as unknown[]) : []) {
      if (!isObject(hook) || typeof hook.id !== 'string') continue;
      const args = Array.isArray(hook.args) ? hook.args.filter((a) => typeof a === 'string').join(' ') : '';
      const entry = typeof hook.entry === 'string' ? `${hook.entry} ${args}`.trim() : HOOK_COMMANDS[hook.id];
      const stages = Array.isArray(hook.stages) ? hook.stages : [];
      hooks.push({
        id: hook.id,
        alias: typeof hook.alias === 'string' ? hook.alias : null,
        manual: stages.length > 0 && stages.every((s) => s === 'manual'),
        at: `${file}#hooks.${hook.id}`,
        label: `${file} hook ${hook.id}`,
        commands: entry ? [entry] : [],
      });
    }
  }
  return {
    select(word, args) {
      if (!['pre-commit', 'prek'].includes(word)) return null;
      if (args[0] !== 'run') return [];
      const [hookId] = positional(
        args.slice(1),
        new Set(['--hook-stage', '--files', '--from-ref', '--to-ref']),
      );
      const manual = flagValues(args, [], ['--hook-stage']).includes('manual');
      return hooks.filter((h) => (hookId ? h.id === hookId || h.alias === hookId : !h.manual || manual));
    },
    all: () => hooks,
  };
}

// make -----------------------------------------------------------------------------------------

/** `targets: prerequisites ; recipe`, read by index rather than by a pattern that could backtrack. */
function makeRule(line: string): { targets: string[]; prereqs: string[]; recipe: string | null } | null {
  const colon = line.indexOf(':');
  if (colon <= 0 || line[colon + 1] === '=' || /^[\s%]/.test(line)) return null;
  const head = line.slice(0, colon);
  if (/[=#]/.test(head)) return null;
  let rest = line.slice(line[colon + 1] === ':' ? colon + 2 : colon + 1);
  const hash = rest.indexOf('#');
  const semicolon = rest.indexOf(';');
  const recipe =
    semicolon !== -1 && (hash === -1 || semicolon < hash) ? rest.slice(semicolon + 1).trim() : null;
  rest = rest.slice(
    0,
    semicolon !== -1 && (hash === -1 || semicolon < hash) ? semicolon : hash === -1 ? undefined : hash,
  );
  return {
    targets: head.trim().split(/\s+/),
    prereqs: rest.trim().split(/\s+/).filter(Boolean),
    recipe: recipe || null,
  };
}

function makeRunner(src: Sources): TaskRunner | null {
  const file = ['GNUmakefile', 'makefile', 'Makefile'].find((f) => textOf(src, f) !== null);
  if (!file) return null;
  const lines = (textOf(src, file) as string).replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  const vars = new Map<string, string>([['MAKE', 'make']]);
  const rules = new Map<string, { prereqs: string[]; recipe: string[] }>();
  let order: string[] = [];
  let current: { prereqs: string[]; recipe: string[] }[] = [];
  for (const line of lines) {
    if (line.length > MAX_LINE) continue;
    if (line.startsWith('\t')) {
      for (const r of current) r.recipe.push(line.trim());
      continue;
    }
    if (/^\s*(#|$)/.test(line)) continue;
    const assign = /^(?:export\s+|override\s+)?([A-Za-z_][\w.-]*)\s*(?:\?|::?|\+|!)?=\s*(.*)$/.exec(line);
    if (assign) {
      vars.set(assign[1] as string, (assign[2] as string).trim());
      current = [];
      continue;
    }
    const rule = makeRule(line);
    if (!rule) {
      current = [];
      continue;
    }
    const body = { prereqs: rule.prereqs, recipe: rule.recipe ? [rule.recipe] : [] };
    current = [];
    for (const target of rule.targets) {
      if (target.startsWith('.') || target.includes('$')) continue;
      const known = rules.get(target);
      // A target named again adds prerequisites (its recipe comes from where it has one).
      if (known) {
        known.prereqs.push(...body.prereqs);
        if (known.recipe.length === 0) current.push(known);
      } else {
        const own = { prereqs: [...body.prereqs], recipe: [...body.recipe] };
        rules.set(target, own);
        current.push(own);
        order = [...order, target];
      }
    }
  }
  const expand = (text: string) =>
    text.replace(/\$[({]([A-Za-z_][\w.-]*)[)}]/g, (m, name: string) => vars.get(name) ?? m);
  const target = (name: string): Target | null => {
    const rule = rules.get(name);
    if (!rule) return null;
    return {
      at: `${file}#${name}`,
      label: `${file} ${name}`,
      commands: [
        ...rule.prereqs.filter((p) => rules.has(p)).map((p) => `make ${p}`),
        ...rule.recipe
          .map((l) =>
            expand(l)
              .replace(/^[@+-]+/, '')
              .trim(),
          )
          .filter((l) => l !== ''),
      ],
    };
  };
  return {
    select(word, args) {
      if (!['make', 'gmake'].includes(word)) return null;
      // Another directory or makefile is not this one.
      if (flagValues(args, ['-C', '-f'], ['--directory', '--file', '--makefile']).length > 0) return [];
      const names = positional(args, new Set(['-j', '--jobs', '-l', '-o', '-W'])).filter(
        (a) => !a.includes('=') && !/^\d+$/.test(a),
      );
      const wanted = names.length > 0 ? names : order.slice(0, 1);
      return wanted.flatMap((n) => target(n) ?? []);
    },
    all: () => [...rules.keys()].flatMap((n) => target(n) ?? []),
  };
}

// just -----------------------------------------------------------------------------------------

function justRunner(src: Sources): TaskRunner | null {
  const file = ['justfile', 'Justfile', '.justfile'].find((f) => textOf(src, f) !== null);
  if (!file) return null;
  const recipes = new Map<string, { deps: string[]; body: string[] }>();
  const aliases = new Map<string, string>();
  let first: string | null = null;
  let current: { deps: string[]; body: string[] } | null = null;
  for (const line of (textOf(src, file) as string).split(/\r?\n/)) {
    if (line.length > MAX_LINE) continue;
    if (/^\s+\S/.test(line)) {
      current?.body.push(line.trim());
      continue;
    }
    if (/^\s*(#|$)/.test(line)) continue;
    const alias = /^alias\s+([\w-]+)\s*:=\s*([\w-]+)/.exec(line);
    if (alias) {
      aliases.set(alias[1] as string, alias[2] as string);
      current = null;
      continue;
    }
    // `[attribute] @name params: deps`: the name, then the first colon that is not `:=`.
    const head = /^(?:\[[^\]]*\]\s*)*@?([A-Za-z_][\w-]*)/.exec(line);
    const colon = head ? line.indexOf(':', head[0].length) : -1;
    if (!head || colon === -1 || line[colon + 1] === '=' || /^(set|export|import|mod)\b/.test(line)) {
      current = null;
      continue;
    }
    const name = head[1] as string;
    const deps = [...line.slice(colon + 1).matchAll(/\(?\s*([A-Za-z_][\w-]*)/g)].map((m) => m[1] as string);
    current = { deps, body: [] };
    recipes.set(name, current);
    first ??= name;
  }
  const target = (name: string): Target | null => {
    const r = recipes.get(aliases.get(name) ?? name);
    if (!r) return null;
    const own = aliases.get(name) ?? name;
    return {
      at: `${file}#${own}`,
      label: `${file} ${own}`,
      commands: [
        ...r.deps.filter((d) => recipes.has(d)).map((d) => `just ${d}`),
        ...commandLines(r.body.join('\n')).map((l) => l.replace(/^[@-]+/, '').trim()),
      ],
    };
  };
  return {
    select(word, args) {
      if (word !== 'just') return null;
      if (flagValues(args, ['-f', '-d'], ['--justfile', '--working-directory']).length > 0) return [];
      const names = positional(args, new Set(['--set'])).filter((a) => recipes.has(aliases.get(a) ?? a));
      const wanted =
        names.length > 0 ? names : positional(args, new Set()).length === 0 && first ? [first] : [];
      return wanted.flatMap((n) => target(n) ?? []);
    },
    all: () => [...recipes.keys()].flatMap((n) => target(n) ?? []),
  };
}

// Taskfile -------------------------------------------------------------------------------------

function taskfileRunner(src: Sources): TaskRunner | null {
  const file = ['Taskfile.yml', 'Taskfile.yaml', 'taskfile.yml'].find((f) => textOf(src, f) !== null);
  const tasks = file ? field(src.yaml(file), 'tasks') : null;
  if (!file || !isObject(tasks)) return null;
  const asCommand = (entry: unknown): string | null => {
    if (typeof entry === 'string') return entry;
    if (isObject(entry) && typeof entry.cmd === 'string') return entry.cmd;
    if (isObject(entry) && typeof entry.task === 'string') return `task ${entry.task}`;
    return null;
  };
  const target = (name: string): Target | null => {
    const t = tasks[name];
    if (t === undefined) return null;
    const cmds = Array.isArray(t) ? t : isObject(t) ? (Array.isArray(t.cmds) ? t.cmds : [t.cmd]) : [];
    const deps = isObject(t) && Array.isArray(t.deps) ? t.deps : [];
    return {
      at: `${file}#tasks.${name}`,
      label: `${file} task ${name}`,
      commands: [
        ...deps.flatMap((d) => {
          const n = typeof d === 'string' ? d : field(d, 'task');
          return typeof n === 'string' ? [`task ${n}`] : [];
        }),
        ...cmds.flatMap((c) => commandLines(asCommand(c))),
      ],
    };
  };
  return {
    select(word, args) {
      if (!['task', 'go-task'].includes(word)) return null;
      if (flagValues(args, ['-d', '-t'], ['--dir', '--taskfile']).length > 0) return [];
      const names = positional(args, new Set());
      return (names.length > 0 ? names : ['default']).flatMap((n) => target(n) ?? []);
    },
    all: () => Object.keys(tasks).flatMap((n) => target(n) ?? []),
  };
}

// nox ------------------------------------------------------------------------------------------

/** The string literals of a call's arguments, up to the first one that is not a plain literal. */
function literalArgs(call: string): string[] {
  const out: string[] = [];
  for (const arg of call.split(/,(?![^([{]*[)\]}])/)) {
    const m = /^\s*(?:[rb]?)(["'])((?:\\.|(?!\1).)*)\1\s*$/s.exec(arg);
    if (!m) break;
    out.push(m[2] as string);
  }
  return out;
}

/** The text between the parenthesis at `open` and its match. */
function callBody(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 4000; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return '';
}

function noxRunner(src: Sources): TaskRunner | null {
  const text = textOf(src, 'noxfile.py');
  if (text === null) return null;
  const sessions = new Map<string, Target>();
  // A session: `@nox.session(...)` (or `@session`) then `def name(...)`, its body the indented lines after.
  const re = /^@(?:nox\.)?session\b([\s\S]{0,2000}?)^def\s+([A-Za-z_]\w*)\s*\(/gm;
  for (const m of text.matchAll(re)) {
    if (sessions.size >= MAX_SESSIONS) break;
    const decorator = m[1] as string;
    const name = /\bname\s*=\s*["']([^"']+)["']/.exec(decorator)?.[1] ?? (m[2] as string);
    const start = (m.index ?? 0) + m[0].length;
    const end = text.slice(start).search(/\n(?=[^\s#)])/);
    const body = end === -1 ? text.slice(start) : text.slice(start, start + end);
    const commands: string[] = [];
    for (const call of body.matchAll(/\bsession\.(run|run_always|notify)\s*\(/g)) {
      const args = literalArgs(callBody(body, (call.index ?? 0) + call[0].length - 1));
      if (args.length === 0) continue;
      commands.push(call[1] === 'notify' ? `nox -s ${args[0]}` : args.join(' '));
    }
    sessions.set(name, { at: `noxfile.py#${name}`, label: `noxfile.py session ${name}`, commands });
  }
  const defaults = /nox\.options\.sessions\s*=\s*\[([^\]]{0,2000})\]/.exec(text);
  const defaultNames = defaults ? literalArgs(defaults[1] as string) : [];
  const bySession = (wanted: string) =>
    [...sessions].filter(([n]) => wanted === n || wanted.startsWith(`${n}-`) || wanted.startsWith(`${n}(`));
  return {
    select(word, args) {
      if (word !== 'nox') return null;
      const named = flagValues(args, ['-s', '-e'], ['--session', '--sessions']);
      // `-s a b`: the words after a session flag are more sessions.
      const i = args.findIndex((a) => ['-s', '-e', '--session', '--sessions'].includes(a));
      if (i !== -1) {
        for (const a of args.slice(i + 2)) {
          if (a.startsWith('-')) break;
          named.push(a);
        }
      }
      if (
        named.length === 0 ||
        named.some(isExpression) ||
        flagValues(args, ['-t', '-k'], ['--tags']).length > 0
      ) {
        const chosen = named.length === 0 && defaultNames.length > 0 ? defaultNames : [...sessions.keys()];
        return chosen.flatMap((n) => bySession(n).map(([, t]) => t));
      }
      return [...new Map(named.flatMap(bySession)).values()];
    },
    all: () => [...sessions.values()],
  };
}

// hatch and pdm scripts (pyproject.toml) -------------------------------------------------------

function pyprojectScriptsRunner(src: Sources): TaskRunner | null {
  const doc = textOf(src, 'pyproject.toml') !== null ? src.toml('pyproject.toml') : null;
  if (!doc) return null;
  const hatch = new Map<string, Target>();
  for (const [env, body] of Object.entries(
    isObject(field(doc, 'tool', 'hatch', 'envs')) ? (field(doc, 'tool', 'hatch', 'envs') as Json) : {},
  )) {
    const scripts = field(body, 'scripts');
    for (const [name, value] of Object.entries(isObject(scripts) ? scripts : {})) {
      const list = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
      hatch.set(`${env}:${name}`, {
        at: `pyproject.toml#tool.hatch.envs.${env}.scripts.${name}`,
        label: `pyproject.toml [tool.hatch.envs.${env}.scripts] ${name}`,
        commands: list,
      });
    }
  }
  const pdm = new Map<string, Target>();
  const pdmScripts = field(doc, 'tool', 'pdm', 'scripts');
  const strings = (list: unknown[]) => list.filter((v): v is string => typeof v === 'string');
  for (const [name, value] of Object.entries(isObject(pdmScripts) ? pdmScripts : {})) {
    let commands: string[] = [];
    if (typeof value === 'string') commands = [value];
    else if (isObject(value) && typeof value.cmd === 'string') commands = [value.cmd];
    else if (isObject(value) && Array.isArray(value.cmd)) commands = [strings(value.cmd).join(' ')];
    else if (isObject(value) && typeof value.shell === 'string') commands = [value.shell];
    // A composite's entries are scripts (or commands) pdm runs in turn.
    else if (isObject(value) && Array.isArray(value.composite))
      commands = strings(value.composite).map((c) => `pdm run ${c}`);
    if (commands.length === 0) continue;
    pdm.set(name, {
      at: `pyproject.toml#tool.pdm.scripts.${name}`,
      label: `pyproject.toml [tool.pdm.scripts] ${name}`,
      commands,
    });
  }
  const builtin = (word: string, commands: string[]): Target => ({
    at: 'pyproject.toml',
    label: `hatch ${word} (hatch's own command)`,
    commands,
  });
  return {
    select(word, args) {
      const words = positional(args, new Set(['-e', '--env']));
      if (word === 'hatch') {
        if (words[0] === 'test') return [builtin('test', ['pytest'])];
        if (words[0] === 'fmt') return [builtin('fmt', ['ruff check', 'ruff format'])];
        if (words[0] !== 'run') return [];
        const name = words.find((w, i) => i > 0 && !w.startsWith('+')) ?? '';
        const t = hatch.get(name.includes(':') ? name : `default:${name}`);
        return t ? [t] : [];
      }
      if (word === 'pdm') {
        const name = words[0] === 'run' ? words[1] : words[0];
        const t = name ? pdm.get(name) : undefined;
        return t ? [t] : [];
      }
      return null;
    },
    all: () => [...hatch.values(), ...pdm.values()],
  };
}

/** Every task runner the repository configures at its root. */
export function readTaskRunners(src: Sources): TaskRunner[] {
  const tox = readTox(src);
  return [
    tox ? toxRunner(tox) : null,
    preCommitRunner(src),
    makeRunner(src),
    justRunner(src),
    taskfileRunner(src),
    noxRunner(src),
    pyprojectScriptsRunner(src),
  ].filter((r): r is TaskRunner => r !== null);
}
