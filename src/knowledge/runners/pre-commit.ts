/**
 * pre-commit: the hooks `pre-commit run` runs (all but manual ones, or the one named) and the tool
 * each runs, by its entry or the id of the usual mirrors.
 */
import { field, isObject, type Sources } from '../sources';
import { flagValues, positional, type Target, type TaskRunner, textOf } from './shared';

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

export function preCommitRunner(src: Sources): TaskRunner | null {
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
