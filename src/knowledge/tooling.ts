/**
 * Linters, formatters, type checkers and test runners the repository uses, each with the
 * evidence it was found by and where CI enforces it.
 *
 * A tool is present when, in this order of evidence (the first found is its `source`): its
 * configuration file is committed (`biome.json`, `pyproject.toml#tool.ruff`, `setup.cfg#flake8`,
 * package.json's `eslintConfig`), a build file mentions it (JUnit in pom.xml), it is a declared
 * dependency (package.json dependencies/devDependencies/optionalDependencies, Python requirements
 * and dependency groups), test files of its convention exist (`*_test.go`), or a package.json
 * script or CI command runs it. A configuration that turns it off (biome's `formatter.enabled:
 * false`) removes it.
 *
 * `enforced_in`: the CI files whose commands (or GitHub `uses:` actions) run it, and the root
 * package.json's scripts that run it when CI runs them (directly or through other scripts).
 */
import type { KnowledgeTool, KnowledgeTooling, KnowledgeToolKind } from '../core/repo-knowledge';
import { type CiFile, scriptsReachedFrom } from './ci';
import { anyOf, type CommandMatcher, matches, runs, runsSub } from './commands';
import { readTaskRunners, type Target } from './runner-configs';
import { field, isObject, type Json, type Sources } from './sources';
import { followRunners, type ReachedCommand } from './task-runners';

interface Evidence {
  config: string | null;
  source: string;
}

interface Context {
  src: Sources;
  /** npm dependency name → `package.json#devDependencies.x` (first, shallowest). */
  npm: Map<string, string>;
  /** Normalised Python distribution name → where it is required. */
  py: Map<string, string>;
  /** Every package.json script: `path#scripts.name` → command. */
  scripts: [string, string][];
  ci: CiFile[];
  /** `package.json#scripts.name` of the root scripts CI reaches. */
  reached: Set<string>;
  /** Each CI file's commands as reached through the task runners (tox, pre-commit, make, ...). */
  followed: Map<string, ReachedCommand[]>;
  /** Every target of the task runners (tox envs, hooks, make targets, recipes, sessions). */
  targets: Target[];
}

interface ToolSpec {
  name: string;
  kind: KnowledgeToolKind;
  /** Configuration file names, anywhere in the repository's own directories. */
  configs?: string[];
  /** TOML tables that configure it: [file name, key path]. */
  tables?: [string, string[]][];
  /** INI sections that configure it: [file name, section]. */
  sections?: [string, string][];
  /** package.json fields that configure it. */
  fields?: string[];
  /** Build files whose text mentions it, and how. */
  mentions?: [string[], RegExp];
  npm?: string[];
  py?: string[];
  /** How a shell command runs it. */
  run?: CommandMatcher;
  /** GitHub actions that run it. */
  action?: RegExp;
  /** More evidence, checked after the configuration and dependencies. */
  detect?: (ctx: Context) => Evidence | null;
  /** Present only with this too (tsc: the typescript package). */
  requires?: (ctx: Context) => boolean;
  /** The configuration turns it off. */
  disabled?: (ctx: Context, config: string) => boolean;
  /** Also enforced wherever this other tool is (gofmt run by golangci-lint). */
  enforcedWith?: string;
}

const exts = (stem: string, list: string[]) => list.map((e) => `${stem}.${e}`);
const JS = ['js', 'cjs', 'mjs', 'ts', 'cts', 'mts'];

const biomeSwitch = (section: string) => (ctx: Context, config: string) =>
  field(ctx.src.json(config), section, 'enabled') === false;

/** golangci-lint's configuration enabling a formatter (v1 `linters.enable`, v2 `formatters.enable`). */
function golangciEnables(names: string[]) {
  return (ctx: Context): Evidence | null => {
    for (const path of ctx.src.named('.golangci.yml', '.golangci.yaml')) {
      const doc = ctx.src.yaml(path);
      for (const key of ['formatters', 'linters']) {
        const enabled = field(doc, key, 'enable');
        if (Array.isArray(enabled) && enabled.some((n) => names.includes(n))) {
          return { config: path, source: `${path}#${key}.enable` };
        }
      }
    }
    return null;
  };
}

/** Test files of a language's convention (`*_test.go`), as evidence of its built-in runner. */
function testFiles(pattern: RegExp) {
  return (ctx: Context): Evidence | null => {
    const file = ctx.src.paths.find((p) => pattern.test(p) && ctx.src.roleOf(p) === 'test');
    return file ? { config: null, source: file } : null;
  };
}

/** Maven and Gradle runs that include the test phase or task. */
const MAVEN_BUILD = runs(['mvn', 'mvnw'], (w) =>
  w.some((t) => /^(?:test|verify|install|package|deploy)$/.test(t)),
);
const GRADLE_BUILD = runs(['gradle', 'gradlew'], (w) =>
  w.some((t) => /^(?:\S*:)?(?:test|check|build)$/.test(t)),
);

const TOOLS: ToolSpec[] = [
  // Linters
  {
    name: 'eslint',
    kind: 'linters',
    configs: [
      ...exts('eslint.config', JS),
      '.eslintrc',
      ...exts('.eslintrc', ['js', 'cjs', 'json', 'yml', 'yaml']),
    ],
    fields: ['eslintConfig'],
    npm: ['eslint'],
    run: runs('eslint'),
  },
  {
    name: 'biome',
    kind: 'linters',
    configs: ['biome.json', 'biome.jsonc'],
    npm: ['@biomejs/biome'],
    run: runs('biome', (w) => ['check', 'lint', 'ci'].includes(w[0] ?? '')),
    action: /^biomejs\/setup-biome@/,
    disabled: biomeSwitch('linter'),
  },
  { name: 'oxlint', kind: 'linters', configs: ['.oxlintrc.json'], npm: ['oxlint'], run: runs('oxlint') },
  { name: 'xo', kind: 'linters', fields: ['xo'], npm: ['xo'], run: runs('xo') },
  { name: 'standard', kind: 'linters', fields: ['standard'], npm: ['standard'], run: runs('standard') },
  {
    name: 'ruff',
    kind: 'linters',
    configs: ['ruff.toml', '.ruff.toml'],
    tables: [['pyproject.toml', ['tool', 'ruff']]],
    py: ['ruff'],
    run: runs('ruff', (w) => w[0] !== 'format'),
    action: /^(?:astral-sh|chartboost)\/ruff-action@/,
  },
  {
    name: 'flake8',
    kind: 'linters',
    configs: ['.flake8'],
    sections: [
      ['setup.cfg', 'flake8'],
      ['tox.ini', 'flake8'],
    ],
    py: ['flake8'],
    run: runs('flake8'),
  },
  {
    name: 'pylint',
    kind: 'linters',
    configs: ['.pylintrc', 'pylintrc'],
    tables: [['pyproject.toml', ['tool', 'pylint']]],
    py: ['pylint'],
    run: runs('pylint'),
  },
  {
    name: 'golangci-lint',
    kind: 'linters',
    configs: exts('.golangci', ['yml', 'yaml', 'toml', 'json']),
    run: runs('golangci-lint'),
    action: /^golangci\/golangci-lint-action@/,
  },
  { name: 'go vet', kind: 'linters', run: runsSub('go', 'vet') },
  { name: 'staticcheck', kind: 'linters', configs: ['staticcheck.conf'], run: runs('staticcheck') },
  {
    name: 'checkstyle',
    kind: 'linters',
    configs: ['checkstyle.xml'],
    mentions: [['pom.xml', 'build.gradle', 'build.gradle.kts'], /maven-checkstyle-plugin|\bcheckstyle\b/],
    run: matches(/checkstyle:check|\bcheckstyle(?:Main|Test)\b/),
  },
  {
    name: 'pmd',
    kind: 'linters',
    mentions: [
      ['pom.xml', 'build.gradle', 'build.gradle.kts'],
      /maven-pmd-plugin|^\s*(?:id\s*\(?\s*['"]pmd['"]|pmd\s*\{)/m,
    ],
    run: matches(/\bpmd:check\b|\bpmd(?:Main|Test)\b/),
  },
  {
    name: 'spotbugs',
    kind: 'linters',
    mentions: [['pom.xml', 'build.gradle', 'build.gradle.kts'], /spotbugs/],
    run: matches(/spotbugs:check|\bspotbugs(?:Main|Test)\b/),
  },
  {
    name: 'clippy',
    kind: 'linters',
    configs: ['clippy.toml', '.clippy.toml'],
    run: runsSub('cargo', 'clippy'),
  },
  // Formatters
  {
    name: 'prettier',
    kind: 'formatters',
    configs: [
      '.prettierrc',
      ...exts('.prettierrc', ['json', 'yml', 'yaml', 'json5', 'toml', ...JS]),
      ...exts('prettier.config', JS),
    ],
    fields: ['prettier'],
    npm: ['prettier'],
    run: runs('prettier'),
  },
  {
    name: 'biome',
    kind: 'formatters',
    configs: ['biome.json', 'biome.jsonc'],
    npm: ['@biomejs/biome'],
    run: runs('biome', (w) => ['check', 'format', 'ci'].includes(w[0] ?? '')),
    action: /^biomejs\/setup-biome@/,
    disabled: biomeSwitch('formatter'),
  },
  {
    name: 'dprint',
    kind: 'formatters',
    configs: ['dprint.json', '.dprint.json'],
    npm: ['dprint'],
    run: runs('dprint'),
  },
  {
    name: 'black',
    kind: 'formatters',
    tables: [['pyproject.toml', ['tool', 'black']]],
    py: ['black'],
    run: runs('black'),
    action: /^psf\/black@/,
  },
  {
    name: 'ruff format',
    kind: 'formatters',
    tables: [
      ['pyproject.toml', ['tool', 'ruff', 'format']],
      ['ruff.toml', ['format']],
      ['.ruff.toml', ['format']],
    ],
    run: runsSub('ruff', 'format'),
  },
  {
    name: 'gofmt',
    kind: 'formatters',
    run: anyOf(runs('gofmt'), runsSub('go', 'fmt')),
    detect: golangciEnables(['gofmt', 'gofumpt', 'goimports']),
    enforcedWith: 'golangci-lint',
  },
  {
    name: 'spotless',
    kind: 'formatters',
    mentions: [['pom.xml', 'build.gradle', 'build.gradle.kts'], /spotless/],
    run: matches(/spotless(?::check|Check)\b/),
  },
  {
    name: 'rustfmt',
    kind: 'formatters',
    configs: ['rustfmt.toml', '.rustfmt.toml'],
    run: anyOf(runsSub('cargo', 'fmt'), runs('rustfmt')),
  },
  // Type checkers
  {
    name: 'tsc',
    kind: 'type_checkers',
    configs: ['tsconfig.json'],
    run: runs('tsc'),
    requires: (ctx) => ctx.npm.has('typescript'),
  },
  { name: 'flow', kind: 'type_checkers', configs: ['.flowconfig'], npm: ['flow-bin'], run: runs('flow') },
  {
    name: 'mypy',
    kind: 'type_checkers',
    configs: ['mypy.ini', '.mypy.ini'],
    tables: [['pyproject.toml', ['tool', 'mypy']]],
    sections: [['setup.cfg', 'mypy']],
    py: ['mypy'],
    run: runs('mypy'),
  },
  {
    name: 'pyright',
    kind: 'type_checkers',
    configs: ['pyrightconfig.json'],
    tables: [['pyproject.toml', ['tool', 'pyright']]],
    npm: ['pyright'],
    py: ['pyright'],
    run: runs('pyright'),
  },
  // Test runners
  {
    name: 'vitest',
    kind: 'test_runners',
    configs: [...exts('vitest.config', JS), ...exts('vitest.workspace', [...JS, 'json'])],
    npm: ['vitest'],
    run: runs('vitest'),
  },
  {
    name: 'jest',
    kind: 'test_runners',
    configs: exts('jest.config', [...JS, 'json']),
    fields: ['jest'],
    npm: ['jest'],
    run: runs('jest'),
  },
  {
    name: 'mocha',
    kind: 'test_runners',
    configs: exts('.mocharc', ['js', 'cjs', 'mjs', 'json', 'jsonc', 'yml', 'yaml']),
    fields: ['mocha'],
    npm: ['mocha'],
    run: runs('mocha'),
  },
  {
    name: 'ava',
    kind: 'test_runners',
    configs: exts('ava.config', ['js', 'cjs', 'mjs']),
    fields: ['ava'],
    npm: ['ava'],
    run: runs('ava'),
  },
  { name: 'tap', kind: 'test_runners', npm: ['tap'], run: runs('tap') },
  { name: 'tape', kind: 'test_runners', npm: ['tape'], run: runs('tape') },
  {
    name: 'playwright',
    kind: 'test_runners',
    configs: exts('playwright.config', JS),
    npm: ['@playwright/test'],
    run: runsSub('playwright', 'test'),
  },
  { name: 'node:test', kind: 'test_runners', run: runs('node', (w) => w.includes('--test')) },
  {
    name: 'pytest',
    kind: 'test_runners',
    configs: ['pytest.ini', 'conftest.py'],
    tables: [['pyproject.toml', ['tool', 'pytest']]],
    sections: [
      ['setup.cfg', 'tool:pytest'],
      ['tox.ini', 'pytest'],
    ],
    py: ['pytest'],
    run: runs(['pytest', 'py.test']),
  },
  { name: 'unittest', kind: 'test_runners', run: runs('unittest') },
  {
    name: 'go test',
    kind: 'test_runners',
    run: runsSub('go', 'test'),
    detect: testFiles(/(?:^|\/)[^/]+_test\.go$/),
  },
  {
    name: 'junit',
    kind: 'test_runners',
    mentions: [['pom.xml', 'build.gradle', 'build.gradle.kts'], /junit/i],
    run: anyOf(MAVEN_BUILD, GRADLE_BUILD),
  },
  {
    name: 'cargo test',
    kind: 'test_runners',
    run: runsSub('cargo', 'test', 'nextest'),
    detect: testFiles(/^(?:.*\/)?tests\/.*\.rs$/),
  },
];

/** PEP 503 names: `Flake8`, `flake_8` and `flake-8` are one package. */
const normalisePy = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');
const requirementName = (spec: string) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(spec)?.[1];

function npmDependencies(src: Sources): Map<string, string> {
  const out = new Map<string, string>();
  for (const path of src.named('package.json')) {
    const pkg = src.json(path);
    for (const group of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      const deps = field(pkg, group);
      if (!isObject(deps)) continue;
      for (const name of Object.keys(deps)) if (!out.has(name)) out.set(name, `${path}#${group}.${name}`);
    }
  }
  return out;
}

function pythonDependencies(src: Sources): Map<string, string> {
  const out = new Map<string, string>();
  const add = (names: Iterable<string>, source: string) => {
    for (const n of names) if (!out.has(normalisePy(n))) out.set(normalisePy(n), source);
  };
  const fromList = (list: unknown) =>
    (Array.isArray(list) ? list : []).flatMap((s) =>
      typeof s === 'string' ? (requirementName(s) ?? []) : [],
    );
  for (const path of src.named('pyproject.toml')) {
    const doc = src.toml(path);
    add(fromList(field(doc, 'project', 'dependencies')), `${path}#project.dependencies`);
    for (const table of [['project', 'optional-dependencies'], ['dependency-groups']]) {
      const groups = field(doc, ...table);
      for (const [group, list] of Object.entries(isObject(groups) ? groups : {})) {
        add(fromList(list), `${path}#${table.join('.')}.${group}`);
      }
    }
    add(fromList(field(doc, 'tool', 'uv', 'dev-dependencies')), `${path}#tool.uv.dev-dependencies`);
    for (const key of ['dependencies', 'dev-dependencies']) {
      const table = field(doc, 'tool', 'poetry', key);
      add(Object.keys(isObject(table) ? table : {}), `${path}#tool.poetry.${key}`);
    }
    const groups = field(doc, 'tool', 'poetry', 'group');
    for (const [group, body] of Object.entries(isObject(groups) ? groups : {})) {
      const table = field(body, 'dependencies');
      add(Object.keys(isObject(table) ? table : {}), `${path}#tool.poetry.group.${group}.dependencies`);
    }
  }
  for (const path of src.named('Pipfile')) {
    const doc = src.toml(path);
    for (const key of ['packages', 'dev-packages']) {
      const table = field(doc, key);
      add(Object.keys(isObject(table) ? table : {}), `${path}#${key}`);
    }
  }
  for (const path of src.files.filter(isRequirementsFile)) {
    const names = (src.text(path) ?? '')
      .split(/\r?\n/)
      .flatMap((l) => (/^\s*[-#]/.test(l) ? [] : (requirementName(l) ?? [])));
    add(names, path);
  }
  return out;
}

export const isRequirementsFile = (path: string) =>
  /(?:^|\/)requirements[^/]*\.txt$/.test(path) || /(?:^|\/)requirements\/[^/]+\.txt$/.test(path);

function firstEvidence(spec: ToolSpec, ctx: Context): Evidence | null {
  const { src } = ctx;
  const config = spec.configs && src.ownFilesNamed(spec.configs)[0];
  if (config) return { config, source: config };
  for (const [file, keys] of spec.tables ?? []) {
    for (const path of src.named(file)) {
      if (isObject(field(src.toml(path), ...keys))) {
        const at = `${path}#${keys.join('.')}`;
        return { config: at, source: at };
      }
    }
  }
  for (const [file, section] of spec.sections ?? []) {
    for (const path of src.named(file)) {
      if (src.ini(path)?.has(section)) return { config: `${path}#${section}`, source: `${path}#${section}` };
    }
  }
  for (const name of spec.fields ?? []) {
    for (const path of src.named('package.json')) {
      if (field(src.json(path), name) !== undefined)
        return { config: `${path}#${name}`, source: `${path}#${name}` };
    }
  }
  if (spec.mentions) {
    const [files, re] = spec.mentions;
    const path = src.named(...files).find((p) => re.test(src.text(p) ?? ''));
    if (path) return { config: path, source: path };
  }
  const npm = spec.npm?.map((n) => ctx.npm.get(n)).find((s) => s !== undefined);
  if (npm) return { config: null, source: npm };
  const py = spec.py?.map((n) => ctx.py.get(n)).find((s) => s !== undefined);
  if (py) return { config: null, source: py };
  const detected = spec.detect?.(ctx);
  if (detected) return detected;
  const run = spec.run;
  if (run) {
    const script = ctx.scripts.find(([, command]) => run(command));
    if (script) return { config: null, source: script[0] };
    const ci = ctx.ci.find((f) => f.commands.some((c) => run(c)));
    if (ci) return { config: null, source: ci.workflow.path };
    const target = ctx.targets.find((t) => t.commands.some((c) => run(c)));
    if (target) return { config: null, source: target.at };
  }
  const action = spec.action;
  const ci = action && ctx.ci.find((f) => f.uses.some((u) => action.test(u)));
  return ci ? { config: null, source: ci.workflow.path } : null;
}

/**
 * Where CI runs the tool: the CI files running it directly, or through a task runner (then the
 * target that runs it is listed too, and the chain is returned as `via`), and the package.json
 * scripts CI reaches that run it.
 */
function enforcedIn(spec: ToolSpec, ctx: Context): { at: string[]; via: string[] } {
  const at: string[] = [];
  const via: string[] = [];
  const { run, action } = spec;
  for (const f of ctx.ci) {
    if ((run && f.commands.some((c) => run(c))) || (action && f.uses.some((u) => action.test(u)))) {
      at.push(f.workflow.path);
      continue;
    }
    const hits = run ? (ctx.followed.get(f.workflow.path) ?? []).filter((r) => run(r.command)) : [];
    if (hits.length === 0) continue;
    at.push(f.workflow.path, ...hits.map((h) => h.via[h.via.length - 1] as string));
    via.push(...hits.map((h) => h.chain));
  }
  for (const [script, command] of ctx.scripts) if (ctx.reached.has(script) && run?.(command)) at.push(script);
  // Chains whose every step is written out come first: they show how more plainly than one
  // through a value CI decides when it runs (`tox -e ${{ matrix.env }}`).
  const decidedLate = (chain: string) => Number(/\$\{\{|\$[A-Za-z_{]/.test(chain));
  const chains = [...new Set(via)].sort((a, b) => decidedLate(a) - decidedLate(b));
  return { at: [...new Set(at)], via: chains.slice(0, MAX_CHAINS) };
}

/** Chains kept per tool: enough to show how, not every matrix entry. */
const MAX_CHAINS = 5;

/** The commands `pre-commit/action` runs, as a CI step would write them. */
const PRE_COMMIT_ACTION = /^pre-commit\/action@/;

export function deriveTooling(src: Sources, ci: CiFile[]): KnowledgeTooling {
  const scripts: [string, string][] = src.named('package.json').flatMap((path) => {
    const table = field(src.json(path), 'scripts');
    return Object.entries(isObject(table) ? (table as Json) : {}).flatMap(([name, command]) =>
      typeof command === 'string' ? [[`${path}#scripts.${name}`, command] as [string, string]] : [],
    );
  });
  const rootScripts = Object.fromEntries(
    scripts
      .filter(([at]) => at.startsWith('package.json#'))
      .map(([at, c]) => [at.slice('package.json#scripts.'.length), c]),
  );
  const runners = readTaskRunners(src);
  const followed = new Map(
    ci.map((f) => [
      f.workflow.path,
      followRunners(
        f.workflow.path,
        [
          ...f.commands,
          ...f.uses.filter((u) => PRE_COMMIT_ACTION.test(u)).map(() => 'pre-commit run --all-files'),
        ],
        runners,
      ),
    ]),
  );
  // A task runner may run an npm script too (`make lint` → `npm run lint`).
  const reachedNames = scriptsReachedFrom(
    [...ci.flatMap((f) => f.commands), ...[...followed.values()].flat().map((r) => r.command)],
    rootScripts,
  );
  const ctx: Context = {
    src,
    npm: npmDependencies(src),
    py: pythonDependencies(src),
    scripts,
    ci,
    reached: new Set([...reachedNames].map((n) => `package.json#scripts.${n}`)),
    followed,
    targets: runners.flatMap((r) => r.all()),
  };
  const tooling: KnowledgeTooling = { linters: [], formatters: [], type_checkers: [], test_runners: [] };
  const enforcedByName = new Map<string, string[]>();
  const found: [ToolSpec, KnowledgeTool][] = [];
  for (const spec of TOOLS) {
    if (spec.requires && !spec.requires(ctx)) continue;
    const evidence = firstEvidence(spec, ctx);
    if (!evidence) continue;
    if (spec.disabled && evidence.config && spec.disabled(ctx, evidence.config)) continue;
    const enforced = enforcedIn(spec, ctx);
    enforcedByName.set(spec.name, [...(enforcedByName.get(spec.name) ?? []), ...enforced.at]);
    const tool: KnowledgeTool = {
      name: spec.name,
      config: evidence.config,
      source: evidence.source,
      enforced_in: enforced.at,
    };
    if (enforced.via.length > 0) tool.enforced_via = enforced.via;
    found.push([spec, tool]);
  }
  for (const [spec, tool] of found) {
    const also = spec.enforcedWith ? (enforcedByName.get(spec.enforcedWith) ?? []) : [];
    tool.enforced_in = [...new Set([...tool.enforced_in, ...also])];
    tooling[spec.kind].push(tool);
  }
  return tooling;
}
