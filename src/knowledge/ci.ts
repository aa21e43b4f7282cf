/**
 * CI configuration: which files run on which events and the shell commands they run, and which
 * package.json scripts those commands reach (directly, through other scripts, or as npm's
 * pre/post hooks), so a tool run by `npm run lint` from CI counts as enforced.
 */
import type { CiProvider, KnowledgeCiWorkflow } from '../core/repo-knowledge';
import { basename, isObject, type Json, type Sources } from './sources';

/** A CI file as read: the public record plus what enforcement is judged from. */
export interface CiFile {
  workflow: KnowledgeCiWorkflow;
  /** Every command line (not capped like `workflow.runs`). */
  commands: string[];
  /** GitHub Actions `uses:` references (`golangci/golangci-lint-action@v6`). */
  uses: string[];
}

const MAX_RUNS = 50;

const OTHER_CI_FILES = [
  '.travis.yml',
  'azure-pipelines.yml',
  'bitbucket-pipelines.yml',
  '.drone.yml',
  'appveyor.yml',
  '.appveyor.yml',
  '.woodpecker.yml',
  '.buildkite/pipeline.yml',
  'Jenkinsfile',
];

/** The CI provider a path is configuration of, or null when it is not a CI file. */
export function ciProvider(path: string): CiProvider | null {
  if (/^\.github\/workflows\/[^/]+\.ya?ml$/.test(path)) return 'github_actions';
  if (path === '.gitlab-ci.yml') return 'gitlab_ci';
  if (path === '.circleci/config.yml') return 'circleci';
  if (OTHER_CI_FILES.includes(path)) return 'other';
  // Gitea/Forgejo Actions (GitHub's syntax), Woodpecker pipelines, and a repository's own `.ci/` scripts.
  if (/^\.(gitea|forgejo)\/workflows\/[^/]+\.ya?ml$/.test(path)) return 'other';
  if (/^\.woodpecker\/[^/]+\.ya?ml$/.test(path)) return 'other';
  if (/^\.ci\/[^/]+$/.test(path)) return 'other';
  return null;
}

/** The lines of a shell command block: trimmed, without blanks and comments. */
export function commandLines(block: unknown): string[] {
  if (typeof block !== 'string') return [];
  return block
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Script entries of GitLab and others: a string or a (nested) list of strings. */
function scriptLines(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(scriptLines);
  return commandLines(value);
}

function githubActions(doc: Json): { triggers: string[]; commands: string[]; uses: string[] } {
  const on = doc.on;
  const triggers =
    typeof on === 'string'
      ? [on]
      : Array.isArray(on)
        ? on.filter((t): t is string => typeof t === 'string')
        : isObject(on)
          ? Object.keys(on)
          : [];
  const commands: string[] = [];
  const uses: string[] = [];
  for (const job of Object.values(isObject(doc.jobs) ? doc.jobs : {})) {
    if (!isObject(job)) continue;
    if (typeof job.uses === 'string') uses.push(job.uses);
    for (const step of Array.isArray(job.steps) ? job.steps : []) {
      if (!isObject(step)) continue;
      commands.push(...commandLines(step.run));
      if (typeof step.uses === 'string') uses.push(step.uses);
    }
  }
  return { triggers, commands, uses };
}

const GITLAB_KEYWORDS = new Set([
  'default',
  'include',
  'stages',
  'variables',
  'workflow',
  'image',
  'services',
  'cache',
  'before_script',
  'after_script',
  'types',
  'spec',
]);

const GITLAB_ONLY_KEYWORDS = new Set([
  'api',
  'branches',
  'chat',
  'external',
  'external_pull_requests',
  'merge_requests',
  'pipelines',
  'pushes',
  'schedules',
  'tags',
  'triggers',
  'web',
]);

function gitlab(doc: Json, text: string): { triggers: string[]; commands: string[] } {
  const commands = [
    ...scriptLines(doc.before_script),
    ...scriptLines(isObject(doc.default) ? doc.default.before_script : undefined),
  ];
  const triggers = new Set<string>();
  for (const m of text.matchAll(/\$CI_PIPELINE_SOURCE\s*==\s*["']?([\w-]+)/g)) triggers.add(m[1] as string);
  for (const [name, job] of Object.entries(doc)) {
    if (GITLAB_KEYWORDS.has(name) || !isObject(job)) continue;
    commands.push(
      ...scriptLines(job.before_script),
      ...scriptLines(job.script),
      ...scriptLines(job.after_script),
    );
    const only = isObject(job.only) ? job.only.refs : job.only;
    for (const ref of Array.isArray(only) ? only : []) {
      if (typeof ref === 'string' && GITLAB_ONLY_KEYWORDS.has(ref)) triggers.add(ref);
    }
  }
  commands.push(...scriptLines(isObject(doc.default) ? doc.default.after_script : undefined));
  commands.push(...scriptLines(doc.after_script));
  return { triggers: [...triggers], commands };
}

function circleci(doc: Json): { triggers: string[]; commands: string[] } {
  const commands: string[] = [];
  for (const job of Object.values(isObject(doc.jobs) ? doc.jobs : {})) {
    if (!isObject(job)) continue;
    for (const step of Array.isArray(job.steps) ? job.steps : []) {
      const run = isObject(step) ? step.run : undefined;
      commands.push(...commandLines(isObject(run) ? run.command : run));
    }
  }
  const scheduled = Object.values(isObject(doc.workflows) ? doc.workflows : {}).some(
    (w) => isObject(w) && Array.isArray(w.triggers) && w.triggers.some((t) => isObject(t) && 'schedule' in t),
  );
  return { triggers: scheduled ? ['schedule'] : [], commands };
}

/** Keys whose values are shell commands in the other YAML CI formats (Travis, Azure, Bitbucket, Drone, ...). */
const COMMAND_KEYS = new Set([
  'run',
  'script',
  'before_script',
  'after_script',
  'before_install',
  'install',
  'test_script',
  'build_script',
  'command',
  'commands',
  'cmd',
  'bash',
  'sh',
  'pwsh',
  'powershell',
]);

function otherYaml(value: unknown, commands: string[]): void {
  if (Array.isArray(value)) for (const v of value) otherYaml(v, commands);
  else if (isObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      if (COMMAND_KEYS.has(key) && (typeof v === 'string' || Array.isArray(v))) {
        const strings = scriptLines(v);
        commands.push(...strings);
        if (strings.length === 0) otherYaml(v, commands);
      } else otherYaml(v, commands);
    }
  }
}

/** The shell steps of a Jenkinsfile: `sh '...'`, `sh """..."""`, `bat`, `powershell`. */
function jenkins(text: string): string[] {
  const re = /\b(?:sh|bat|powershell)\s*\(?\s*(?:script\s*:\s*)?('''|"""|'|")([\s\S]*?)\1/g;
  return [...text.matchAll(re)].flatMap((m) => commandLines(m[2]));
}

/** Reads one CI file; null when it was not read or does not parse (the gap is recorded). */
export function readCiFile(src: Sources, path: string): CiFile | null {
  const provider = ciProvider(path);
  const text = src.text(path);
  if (!provider || text === null) return null;
  let triggers: string[] = [];
  let commands: string[] = [];
  let uses: string[] = [];
  const isYaml = /\.ya?ml$/.test(path);
  if (isYaml) {
    const doc = src.yaml(path, 'ci_workflow_unreadable');
    if (doc === null) return null;
    if (!isObject(doc)) {
      src.gaps.push({
        code: 'ci_workflow_unreadable',
        message: `${path} is not a mapping of CI configuration; nothing was read from it`,
      });
      return null;
    }
    if (provider === 'github_actions' || /^\.(gitea|forgejo)\//.test(path))
      ({ triggers, commands, uses } = githubActions(doc));
    else if (provider === 'gitlab_ci') ({ triggers, commands } = gitlab(doc, text));
    else if (provider === 'circleci') ({ triggers, commands } = circleci(doc));
    else otherYaml(doc, commands);
  } else if (basename(path) === 'Jenkinsfile') {
    commands = jenkins(text);
  } else {
    // A shell script (`.ci/run`): its lines, without the shebang.
    commands = commandLines(text);
  }
  const workflow: KnowledgeCiWorkflow = { path, provider, triggers, runs: commands.slice(0, MAX_RUNS) };
  if (uses.length > 0) workflow.uses = [...new Set(uses)].slice(0, MAX_RUNS);
  return { workflow, commands, uses };
}

export function readCi(src: Sources): CiFile[] {
  return src.files.filter((p) => ciProvider(p) !== null).flatMap((p) => readCiFile(src, p) ?? []);
}

const VALUE_FLAGS = new Set(['-w', '--workspace', '--prefix', '-C', '--dir', '--filter', '-F', '--cwd']);
const NPM_SHORTHANDS: Record<string, string> = {
  test: 'test',
  t: 'test',
  tst: 'test',
  it: 'test',
  'install-test': 'test',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
};
const NPM_RUN = new Set(['run', 'run-script', 'rum', 'urn']);

/** Script names (`lint`, or an npm-run-all glob `lint:*`) matched against the scripts. */
function matching(pattern: string, scripts: Readonly<Record<string, string>>): string[] {
  if (!pattern.includes('*')) return pattern in scripts ? [pattern] : [];
  const part = (p: string) => p.replace(/[.+^$()|[\]\\{}?]/g, '\\$&').replace(/\*/g, '[^:]*');
  const re = new RegExp(`^${pattern.split('**').map(part).join('.*')}$`);
  return Object.keys(scripts).filter((s) => re.test(s));
}

/**
 * The scripts of `scripts` a shell command runs: `npm test`, `npm run x`, `yarn x`, `pnpm x`,
 * `bun run x`, `run-s`/`run-p`/`npm-run-all` arguments; npm adds the `pre`/`post` hooks. A command
 * with a workspace or directory flag runs another package's scripts and is not counted.
 */
export function scriptsRunBy(command: string, scripts: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const segment of command.split(/&&|\|\||[;|\n]/)) {
    const tokens = segment
      .trim()
      .split(/\s+/)
      .filter((t) => t !== '')
      .map((t) => t.replace(/^['"]|['"]$/g, ''));
    if (tokens.some((t) => VALUE_FLAGS.has(t.split('=')[0] as string) || t === '--workspaces' || t === '-ws'))
      continue;
    const i = tokens.findIndex((t) => /^(npm|yarn|pnpm|bun|run-s|run-p|npm-run-all)$/.test(t));
    if (i === -1) continue;
    const tool = tokens[i] as string;
    const args = tokens.slice(i + 1).filter((t) => !t.startsWith('-'));
    const [first, second] = args;
    if (tool === 'run-s' || tool === 'run-p' || tool === 'npm-run-all') {
      out.push(...args.flatMap((a) => matching(a, scripts)));
    } else if (tool === 'npm') {
      const name = first && NPM_RUN.has(first) ? second : first ? NPM_SHORTHANDS[first] : undefined;
      if (name && name in scripts) {
        for (const hook of [`pre${name}`, name, `post${name}`]) if (hook in scripts) out.push(hook);
      }
    } else if (tool === 'bun') {
      if (first === 'run' && second && second in scripts) out.push(second);
    } else if (first === 'run' ? second && second in scripts : first && first in scripts) {
      out.push((first === 'run' ? second : first) as string);
    }
  }
  return out;
}

/** The scripts CI runs, directly or through other scripts. */
export function scriptsReachedFrom(
  commands: readonly string[],
  scripts: Readonly<Record<string, string>>,
): Set<string> {
  const reached = new Set<string>();
  const queue = commands.flatMap((c) => scriptsRunBy(c, scripts));
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (reached.has(name)) continue;
    reached.add(name);
    queue.push(...scriptsRunBy(scripts[name] ?? '', scripts));
  }
  return reached;
}
