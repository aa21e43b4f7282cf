/**
 * tox: the envs an invocation selects (`-e`, the envlist, every env for a value CI decides) and
 * their commands, from tox.ini, setup.cfg `[tox:tox]`, pyproject.toml `[tool.tox]` (legacy or
 * native) or tox.toml.
 */
import { field, isObject, type Json, parseIni, type Sources } from '../sources';
import { flagValues, isExpression, MAX_LINE, type Target, type TaskRunner, textOf } from './shared';

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

/** The runner of the tox configuration tox itself would use, or null when there is none. */
export function toxRunnerOf(src: Sources): TaskRunner | null {
  const tox = readTox(src);
  return tox ? toxRunner(tox) : null;
}
