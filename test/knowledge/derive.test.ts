/**
 * Repository knowledge derivation: this repository itself, real published packages (the eval's
 * pinned corpora, fetched once into its cache), and one snippet per source of a fact.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpusPackage } from '../../eval/shared/corpus-cache';
import type { RepoKnowledge } from '../../src/core/repo-knowledge';
import { deriveKnowledge, knowledgeFilesWanted } from '../../src/knowledge/derive';

const ROOT = join(import.meta.dirname, '..', '..');

/** Derives from a directory on disk: the wanted files are read, the others never are. */
function fromDisk(dir: string, paths: string[]) {
  const wanted = knowledgeFilesWanted(paths);
  const texts = new Map<string, string | null>(
    wanted.map((p) => {
      try {
        return [p, readFileSync(join(dir, p), 'utf8')];
      } catch {
        return [p, null];
      }
    }),
  );
  return { wanted, ...deriveKnowledge({ commit: 'c0ffee', paths, texts }) };
}

/** Every file under `dir` except its own node_modules, as repository paths. */
function walk(dir: string, at = dir): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
    const full = join(at, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(dir, full);
    return [relative(dir, full)];
  });
}

async function published(spec: string) {
  const { dir } = await corpusPackage(spec);
  return fromDisk(dir, walk(dir));
}

/** Derives from snippets: `files` maps each path to its text (null: unreadable, undefined: a path only). */
function derive(files: Record<string, string | null | undefined>) {
  const paths = Object.keys(files);
  const texts = new Map<string, string | null>();
  for (const p of knowledgeFilesWanted(paths)) {
    const text = files[p];
    if (text !== undefined) texts.set(p, text);
  }
  return deriveKnowledge({ commit: 'abc123', paths, texts });
}

const names = (tools: { name: string }[]) => tools.map((t) => t.name);
const tool = (k: RepoKnowledge, kind: keyof RepoKnowledge['tooling'], name: string) =>
  k.tooling[kind].find((t) => t.name === name);

describe('this repository', () => {
  const paths = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  const { content, gaps, wanted } = fromDisk(ROOT, paths);

  it('reads only configuration files', () => {
    expect(wanted).toEqual(expect.arrayContaining(['package.json', 'biome.json', '.ci/run']));
    expect(wanted.every((p) => !p.startsWith('src/') && !p.startsWith('test/'))).toBe(true);
  });

  it('knows its runtime and package manager', () => {
    expect(content.version).toBe(1);
    expect(content.commit).toBe('c0ffee');
    expect(content.runtimes).toEqual([
      {
        name: 'node',
        version: '^20.19.0 || ^22.12.0 || >=24.0.0',
        source: 'package.json#engines.node',
        declared: false,
      },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'npm', manifest: 'package.json', lockfile: 'package-lock.json', source: 'package-lock.json' },
    ]);
    expect(content.languages[0]?.name).toBe('typescript');
  });

  it('knows its tools and where CI enforces them (.ci/run → npm test → lint, typecheck)', () => {
    const biome = {
      name: 'biome',
      config: 'biome.json',
      source: 'biome.json',
      enforced_in: ['package.json#scripts.lint'],
    };
    // ESLint is a devDependency for eval part 4's peer, which CI does not run.
    expect(content.tooling.linters).toEqual([
      { name: 'eslint', config: null, source: 'package.json#devDependencies.eslint', enforced_in: [] },
      biome,
    ]);
    expect(content.tooling.formatters).toEqual([biome]);
    expect(content.tooling.type_checkers).toEqual([
      {
        name: 'tsc',
        config: 'tsconfig.json',
        source: 'tsconfig.json',
        enforced_in: ['package.json#scripts.typecheck'],
      },
    ]);
    expect(content.tooling.test_runners).toEqual([
      {
        name: 'vitest',
        config: 'vitest.config.ts',
        source: 'vitest.config.ts',
        enforced_in: ['package.json#scripts.test'],
      },
    ]);
    expect(content.ci).toEqual([
      {
        path: '.ci/run',
        provider: 'other',
        triggers: [],
        runs: ['set -euo pipefail', 'cd "$(dirname "$0")/.."', 'npm ci', 'npm install && npm test'],
      },
    ]);
  });

  it('knows where tests and source live', () => {
    expect(content.conventions.test_locations).toContain('test/');
    expect(content.conventions.source_roots[0]).toBe('src/');
    expect(content.conventions.generated_paths).toContain('package-lock.json');
    expect(content.declared).toBeNull();
    expect(gaps).toEqual([]);
  });
});

describe('published packages', () => {
  it('express 4.21.2: engines, eslint and mocha from package.json, no lockfile', async () => {
    const { content, gaps } = await published('express@4.21.2');
    expect(content.runtimes).toEqual([
      { name: 'node', version: '>= 0.10.0', source: 'package.json#engines.node', declared: false },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'npm', manifest: 'package.json', lockfile: null, source: 'package.json' },
    ]);
    expect(content.tooling.linters).toEqual([
      { name: 'eslint', config: null, source: 'package.json#devDependencies.eslint', enforced_in: [] },
    ]);
    // `mocha --reporter tap` runs mocha, not tap.
    expect(names(content.tooling.test_runners)).toEqual(['mocha']);
    expect(content.languages).toEqual([{ name: 'javascript', files: 12 }]);
    expect(content.conventions.source_roots).toEqual(['lib/', './']);
    expect(content.ci).toEqual([]);
    expect(gaps).toEqual([]);
  });

  it('knex 3.1.0: eslint, prettier, tsc, mocha and tape', async () => {
    const { content, gaps } = await published('knex@3.1.0');
    expect(content.runtimes).toEqual([
      { name: 'node', version: '>=16', source: 'package.json#engines.node', declared: false },
    ]);
    expect(names(content.tooling.linters)).toEqual(['eslint']);
    expect(tool(content, 'formatters', 'prettier')?.source).toBe('package.json#devDependencies.prettier');
    expect(content.tooling.type_checkers).toEqual([
      { name: 'tsc', config: null, source: 'package.json#scripts.build:ts', enforced_in: [] },
    ]);
    expect(names(content.tooling.test_runners)).toEqual(['mocha', 'tape']);
    expect(gaps).toEqual([]);
  });

  it('node-gyp 10.2.0: node from engines, python from the bundled gyp pyproject.toml, ruff and pytest', async () => {
    const { content, wanted, gaps } = await published('node-gyp@10.2.0');
    expect(wanted).toEqual(['package.json', 'gyp/pyproject.toml']);
    expect(content.runtimes).toEqual([
      { name: 'node', version: '^16.14.0 || >=18.0.0', source: 'package.json#engines.node', declared: false },
      {
        name: 'python',
        version: '>=3.8',
        source: 'gyp/pyproject.toml#project.requires-python',
        declared: false,
      },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'npm', manifest: 'package.json', lockfile: null, source: 'package.json' },
      { name: 'pip', manifest: 'gyp/pyproject.toml', lockfile: null, source: 'gyp/pyproject.toml' },
    ]);
    expect(content.tooling.linters).toEqual([
      { name: 'standard', config: null, source: 'package.json#devDependencies.standard', enforced_in: [] },
      {
        name: 'ruff',
        config: 'gyp/pyproject.toml#tool.ruff',
        source: 'gyp/pyproject.toml#tool.ruff',
        enforced_in: [],
      },
    ]);
    // [tool.ruff] has no format table and nothing runs `ruff format`.
    expect(content.tooling.formatters).toEqual([]);
    expect(tool(content, 'test_runners', 'pytest')?.source).toBe(
      'gyp/pyproject.toml#project.optional-dependencies.dev',
    );
    expect(content.languages[0]).toEqual({ name: 'python', files: 58 });
    expect(content.conventions.test_locations).toEqual(['gyp/**/*_test.py', 'gyp/**/test_*.py']);
    expect(gaps).toEqual([]);
  });

  it('execa 9.5.2: xo and ava configured in package.json, tsc run by a script', async () => {
    const { content } = await published('execa@9.5.2');
    expect(content.runtimes).toEqual([
      { name: 'node', version: '^18.19.0 || >=20.5.0', source: 'package.json#engines.node', declared: false },
    ]);
    expect(content.tooling.linters).toEqual([
      { name: 'xo', config: 'package.json#xo', source: 'package.json#xo', enforced_in: [] },
    ]);
    expect(content.tooling.test_runners).toEqual([
      { name: 'ava', config: 'package.json#ava', source: 'package.json#ava', enforced_in: [] },
    ]);
    expect(tool(content, 'type_checkers', 'tsc')?.source).toBe('package.json#scripts.type');
  });

  it('cordova-plugin-inappbrowser 6.0.0: no node engine and Java without a build file are gaps', async () => {
    const { content, gaps } = await published('cordova-plugin-inappbrowser@6.0.0');
    expect(content.runtimes).toEqual([]);
    expect(gaps.map((g) => g.code)).toEqual(['runtime_version_unknown', 'runtime_version_unknown']);
    expect(gaps[0]?.message).toContain('node');
    expect(gaps[0]?.message).toContain('package.json#engines.node');
    expect(gaps[1]?.message).toContain('java');
    expect(gaps[1]?.message).toContain('pom.xml');
    expect(content.languages.find((l) => l.name === 'java')).toEqual({ name: 'java', files: 3 });
    expect(content.tooling.linters).toEqual([
      { name: 'eslint', config: null, source: 'package.json#scripts.lint', enforced_in: [] },
    ]);
  });
});

describe('runtimes from each source', () => {
  it('.nvmrc beside package.json engines: both, version file first', () => {
    const { content, gaps } = derive({
      'package.json': '{"name":"a","engines":{"node":">=18"}}',
      '.nvmrc': '# pinned\nv20.11.1\n',
      'src/index.js': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'node', version: 'v20.11.1', source: '.nvmrc', declared: false },
      { name: 'node', version: '>=18', source: 'package.json#engines.node', declared: false },
    ]);
    expect(gaps).toEqual([]);
  });

  it('.node-version, .tool-versions and volta', () => {
    const { content } = derive({
      'package.json': '{"volta":{"node":"20.10.0"}}',
      '.node-version': '20.9.0\n',
      '.tool-versions': 'nodejs 20.8.1\npython 3.12.1 3.11.7\n',
      'app.py': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'node', version: '20.9.0', source: '.node-version', declared: false },
      { name: 'node', version: '20.8.1', source: '.tool-versions#nodejs', declared: false },
      { name: 'node', version: '20.10.0', source: 'package.json#volta.node', declared: false },
      { name: 'python', version: '3.12.1', source: '.tool-versions#python', declared: false },
    ]);
  });

  it('.python-version and pyproject PEP 621 requires-python', () => {
    const { content, gaps } = derive({
      '.python-version': '3.11.6\n',
      'pyproject.toml': '[project]\nname = "svc"\nrequires-python = ">=3.10"\n[tool.mypy]\nstrict = true\n',
      'src/app/main.py': undefined,
      'tests/test_main.py': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'python', version: '3.11.6', source: '.python-version', declared: false },
      {
        name: 'python',
        version: '>=3.10',
        source: 'pyproject.toml#project.requires-python',
        declared: false,
      },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'pip', manifest: 'pyproject.toml', lockfile: null, source: 'pyproject.toml' },
    ]);
    expect(content.tooling.type_checkers).toEqual([
      {
        name: 'mypy',
        config: 'pyproject.toml#tool.mypy',
        source: 'pyproject.toml#tool.mypy',
        enforced_in: [],
      },
    ]);
    expect(content.conventions).toMatchObject({ test_locations: ['tests/'], source_roots: ['src/'] });
    expect(gaps).toEqual([]);
  });

  it('poetry: tool.poetry.dependencies.python, poetry.lock, dev tools from the group', () => {
    const { content } = derive({
      'pyproject.toml': [
        '[tool.poetry]',
        'name = "svc"',
        '[tool.poetry.dependencies]',
        'python = "^3.9"',
        '[tool.poetry.group.dev.dependencies]',
        'pytest = "^8.0"',
        'black = "^24.1"',
        '[tool.ruff.format]',
        'quote-style = "single"',
      ].join('\n'),
      'poetry.lock': undefined,
      'svc/__init__.py': undefined,
    });
    expect(content.runtimes).toEqual([
      {
        name: 'python',
        version: '^3.9',
        source: 'pyproject.toml#tool.poetry.dependencies.python',
        declared: false,
      },
    ]);
    expect(content.package_managers).toEqual([
      {
        name: 'poetry',
        manifest: 'pyproject.toml',
        lockfile: 'poetry.lock',
        source: 'pyproject.toml#tool.poetry',
      },
    ]);
    expect(tool(content, 'test_runners', 'pytest')?.source).toBe(
      'pyproject.toml#tool.poetry.group.dev.dependencies',
    );
    expect(names(content.tooling.formatters)).toEqual(['black', 'ruff format']);
    expect(names(content.tooling.linters)).toEqual(['ruff']);
  });

  it('setup.cfg python_requires and flake8 section; runtime.txt', () => {
    const { content } = derive({
      'setup.cfg':
        '[metadata]\nname = x\n\n[options]\npython_requires = >=3.8\n\n[flake8]\nmax-line-length = 100\n',
      'runtime.txt': 'python-3.12.2\n',
      'x/__init__.py': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'python', version: '3.12.2', source: 'runtime.txt', declared: false },
      { name: 'python', version: '>=3.8', source: 'setup.cfg#options.python_requires', declared: false },
    ]);
    expect(content.tooling.linters).toEqual([
      { name: 'flake8', config: 'setup.cfg#flake8', source: 'setup.cfg#flake8', enforced_in: [] },
    ]);
  });

  it('go.mod go and toolchain; go.sum; go test from *_test.go files', () => {
    const { content, gaps } = derive({
      'go.mod':
        'module example.com/svc\n\ngo 1.21\n\ntoolchain go1.22.1\n\nrequire golang.org/x/mod v0.14.0\n',
      'go.sum': undefined,
      'cmd/svc/main.go': undefined,
      'internal/store/store.go': undefined,
      'internal/store/store_test.go': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'go', version: '1.21', source: 'go.mod#go', declared: false },
      { name: 'go', version: '1.22.1', source: 'go.mod#toolchain', declared: false },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'go', manifest: 'go.mod', lockfile: 'go.sum', source: 'go.mod' },
    ]);
    expect(content.tooling.test_runners).toEqual([
      { name: 'go test', config: null, source: 'internal/store/store_test.go', enforced_in: [] },
    ]);
    expect(content.conventions.test_locations).toEqual(['internal/**/*_test.go']);
    expect(content.conventions.source_roots).toEqual(['cmd/', 'internal/']);
    expect(gaps).toEqual([]);
  });

  it('pom.xml: maven.compiler.release resolved from a property; junit and checkstyle', () => {
    const pom = `<?xml version="1.0"?>
<project>
  <!-- <maven.compiler.release>8</maven.compiler.release> -->
  <properties>
    <java.version>21</java.version>
    <maven.compiler.release>\${java.version}</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId></dependency>
  </dependencies>
  <build><plugins><plugin><artifactId>maven-checkstyle-plugin</artifactId></plugin></plugins></build>
</project>`;
    const { content } = derive({
      'pom.xml': pom,
      'src/main/java/a/App.java': undefined,
      'src/test/java/a/AppTest.java': undefined,
    });
    expect(content.runtimes).toEqual([
      { name: 'java', version: '21', source: 'pom.xml#maven.compiler.release', declared: false },
    ]);
    expect(content.package_managers).toEqual([
      { name: 'maven', manifest: 'pom.xml', lockfile: null, source: 'pom.xml' },
    ]);
    expect(content.tooling.test_runners).toEqual([
      { name: 'junit', config: 'pom.xml', source: 'pom.xml', enforced_in: [] },
    ]);
    expect(names(content.tooling.linters)).toEqual(['checkstyle']);
    expect(content.conventions).toMatchObject({ test_locations: ['src/test/'], source_roots: ['src/'] });
  });

  it('pom.xml with only the compiler plugin source', () => {
    const { content } = derive({
      'pom.xml':
        '<project><build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId><configuration><source>11</source></configuration></plugin></plugins></build></project>',
    });
    expect(content.runtimes).toEqual([
      { name: 'java', version: '11', source: 'pom.xml#maven-compiler-plugin.source', declared: false },
    ]);
  });

  it('gradle: Kotlin DSL toolchain, Groovy sourceCompatibility, .java-version', () => {
    const kts = derive({
      'build.gradle.kts':
        'plugins { java }\njava {\n  toolchain {\n    languageVersion.set(JavaLanguageVersion.of(17))\n  }\n}\ntasks.test { useJUnitPlatform() }\n',
      'settings.gradle.kts': undefined,
    });
    expect(kts.content.runtimes).toEqual([
      {
        name: 'java',
        version: '17',
        source: 'build.gradle.kts#java.toolchain.languageVersion',
        declared: false,
      },
    ]);
    expect(kts.content.package_managers).toEqual([
      { name: 'gradle', manifest: 'settings.gradle.kts', lockfile: null, source: 'settings.gradle.kts' },
    ]);
    expect(names(kts.content.tooling.test_runners)).toEqual(['junit']);
    const groovy = derive({
      'build.gradle': "apply plugin: 'java'\nsourceCompatibility = JavaVersion.VERSION_1_8\n",
      '.java-version': '1.8\n',
    });
    expect(groovy.content.runtimes).toEqual([
      { name: 'java', version: '1.8', source: '.java-version', declared: false },
      { name: 'java', version: '1.8', source: 'build.gradle#sourceCompatibility', declared: false },
    ]);
  });

  it('a runtime used without a version is a gap naming where it looked, not a guess', () => {
    const { content, gaps } = derive({
      'pyproject.toml': '[project]\nname = "x"\n',
      'x/main.py': undefined,
    });
    expect(content.runtimes).toEqual([]);
    expect(gaps).toEqual([
      {
        code: 'runtime_version_unknown',
        message: expect.stringMatching(
          /python \(it has pyproject\.toml\).*project\.requires-python.*\.python-version/,
        ),
      },
    ]);
  });
});

describe('package managers', () => {
  it('the packageManager field wins over a stray lockfile', () => {
    const { content } = derive({
      'package.json': '{"packageManager":"pnpm@9.1.0","engines":{"node":"20"}}',
      'pnpm-lock.yaml': undefined,
      'package-lock.json': undefined,
    });
    expect(content.package_managers).toEqual([
      {
        name: 'pnpm',
        manifest: 'package.json',
        lockfile: 'pnpm-lock.yaml',
        source: 'package.json#packageManager',
      },
    ]);
  });

  it('yarn by its lockfile; workspace members belong to the root', () => {
    const { content } = derive({
      'package.json': '{"private":true,"workspaces":["packages/*"],"engines":{"node":">=18"}}',
      'yarn.lock': undefined,
      'packages/a/package.json': '{"name":"a"}',
      'packages/b/package.json': '{"name":"b","devDependencies":{"jest":"29"}}',
      'packages/a/test/a.test.js': undefined,
      'packages/b/test/b.test.js': undefined,
      'packages/a/src/index.ts': undefined,
      'packages/b/src/index.ts': undefined,
    });
    expect(content.package_managers).toEqual([
      { name: 'yarn', manifest: 'package.json', lockfile: 'yarn.lock', source: 'yarn.lock' },
    ]);
    expect(tool(content, 'test_runners', 'jest')?.source).toBe(
      'packages/b/package.json#devDependencies.jest',
    );
    expect(content.conventions.test_locations).toEqual(['packages/*/test/']);
    expect(content.conventions.source_roots).toEqual(['packages/*/src/']);
  });

  it('no manifest at all is a gap', () => {
    const { content, gaps } = derive({
      'README.md': undefined,
      'main.c': undefined,
      'docs/package.json': '{}',
    });
    expect(content.package_managers).toEqual([]);
    expect(gaps.map((g) => g.code)).toEqual(['no_manifest_found']);
  });
});

describe('CI', () => {
  const pkg = JSON.stringify({
    engines: { node: '>=20' },
    scripts: { lint: 'eslint .', pretest: 'tsc -p .', test: 'vitest run', format: 'prettier --check .' },
    devDependencies: { eslint: '9', typescript: '5', vitest: '3', prettier: '3' },
  });

  it('GitHub Actions: `on` as a list, every run line, scripts reached through npm', () => {
    const workflow = `name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci
      - name: checks
        run: |
          npm run lint

          npm test
      - run: npx prettier --check src
`;
    const { content, gaps } = derive({
      'package.json': pkg,
      '.github/workflows/ci.yml': workflow,
      'eslint.config.js': undefined,
      'tsconfig.json': undefined,
    });
    expect(content.ci).toEqual([
      {
        path: '.github/workflows/ci.yml',
        provider: 'github_actions',
        triggers: ['push', 'pull_request'],
        runs: ['npm ci', 'npm run lint', 'npm test', 'npx prettier --check src'],
        uses: ['actions/checkout@v4'],
      },
    ]);
    expect(content.tooling.linters).toEqual([
      {
        name: 'eslint',
        config: 'eslint.config.js',
        source: 'eslint.config.js',
        enforced_in: ['package.json#scripts.lint'],
      },
    ]);
    // `npm test` runs the pretest hook too.
    expect(tool(content, 'type_checkers', 'tsc')?.enforced_in).toEqual(['package.json#scripts.pretest']);
    expect(tool(content, 'test_runners', 'vitest')?.enforced_in).toEqual(['package.json#scripts.test']);
    // Run by the workflow itself; the `format` script is not reached.
    expect(tool(content, 'formatters', 'prettier')?.enforced_in).toEqual(['.github/workflows/ci.yml']);
    expect(gaps).toEqual([]);
  });

  it('GitHub Actions: `on` as a map; an action that runs a tool', () => {
    const { content } = derive({
      'go.mod': 'module x\ngo 1.22\n',
      '.golangci.yml': 'linters:\n  enable: [gofmt, govet]\n',
      '.github/workflows/lint.yaml':
        'on:\n  push:\n    branches: [main]\n  pull_request: {}\njobs:\n  lint:\n    steps:\n      - uses: golangci/golangci-lint-action@v6\n      - run: go test ./...\n',
    });
    expect(content.ci[0]?.triggers).toEqual(['push', 'pull_request']);
    expect(content.tooling.linters).toEqual([
      {
        name: 'golangci-lint',
        config: '.golangci.yml',
        source: '.golangci.yml',
        enforced_in: ['.github/workflows/lint.yaml'],
      },
    ]);
    expect(content.tooling.formatters).toEqual([
      {
        name: 'gofmt',
        config: '.golangci.yml',
        source: '.golangci.yml#linters.enable',
        enforced_in: ['.github/workflows/lint.yaml'],
      },
    ]);
    expect(content.tooling.test_runners).toEqual([
      {
        name: 'go test',
        config: null,
        source: '.github/workflows/lint.yaml',
        enforced_in: ['.github/workflows/lint.yaml'],
      },
    ]);
  });

  it('a workflow that does not parse is a gap naming it; the others are still read', () => {
    const { content, gaps } = derive({
      'package.json': pkg,
      '.github/workflows/broken.yml': 'on: [push\njobs:\n  x: {\n',
      '.github/workflows/ok.yml': 'on: push\njobs:\n  a:\n    steps:\n      - run: npm run lint\n',
    });
    expect(content.ci.map((c) => c.path)).toEqual(['.github/workflows/ok.yml']);
    expect(gaps).toHaveLength(1);
    expect(gaps[0]?.code).toBe('ci_workflow_unreadable');
    expect(gaps[0]?.message).toContain('.github/workflows/broken.yml');
  });

  it('GitLab CI: script lines of every job, pipeline sources as triggers', () => {
    const { content } = derive({
      'pyproject.toml':
        '[project]\nrequires-python = ">=3.11"\n[dependency-groups]\ndev = ["pytest>=8", "ruff"]\n',
      '.gitlab-ci.yml': `stages: [test]
workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
default:
  before_script:
    - pip install -e .
lint:
  script:
    - ruff check .
    - ruff format --check .
test:
  script: python -m pytest -q
`,
    });
    expect(content.ci).toEqual([
      {
        path: '.gitlab-ci.yml',
        provider: 'gitlab_ci',
        triggers: ['merge_request_event'],
        runs: ['pip install -e .', 'ruff check .', 'ruff format --check .', 'python -m pytest -q'],
      },
    ]);
    expect(tool(content, 'linters', 'ruff')).toEqual({
      name: 'ruff',
      config: null,
      source: 'pyproject.toml#dependency-groups.dev',
      enforced_in: ['.gitlab-ci.yml'],
    });
    expect(tool(content, 'formatters', 'ruff format')?.enforced_in).toEqual(['.gitlab-ci.yml']);
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual(['.gitlab-ci.yml']);
  });
});

describe('commands that run a tool', () => {
  it('through wrappers and paths, not by mention; node --test; biome turned off by its config', () => {
    const { content } = derive({
      'package.json': JSON.stringify({
        engines: { node: '>=22' },
        scripts: {
          test: 'c8 --reporter=lcov node --test test/',
          lint: 'NODE_OPTIONS=--max-old-space-size=4096 ./node_modules/.bin/eslint . --format tap',
          check: 'npx --yes --package typescript@5.6 tsc --noEmit',
        },
        devDependencies: { typescript: '5.6.3', '@biomejs/biome': '1.9.4' },
      }),
      'biome.jsonc': '{\n  // lint only\n  "formatter": { "enabled": false },\n}\n',
      '.ci/check.sh': '#!/bin/sh\nnpm run lint && npm test\n',
    });
    expect(content.tooling.test_runners).toEqual([
      {
        name: 'node:test',
        config: null,
        source: 'package.json#scripts.test',
        enforced_in: ['package.json#scripts.test'],
      },
    ]);
    expect(content.tooling.linters).toEqual([
      {
        name: 'eslint',
        config: null,
        source: 'package.json#scripts.lint',
        enforced_in: ['package.json#scripts.lint'],
      },
      { name: 'biome', config: 'biome.jsonc', source: 'biome.jsonc', enforced_in: [] },
    ]);
    expect(content.tooling.formatters).toEqual([]);
    // `check` runs tsc through npx, but CI never runs `check`.
    expect(content.tooling.type_checkers).toEqual([
      { name: 'tsc', config: null, source: 'package.json#scripts.check', enforced_in: [] },
    ]);
  });

  it('a long command line is read in linear time', () => {
    const line = `${'nyc --a --b '.repeat(400)}x`;
    const started = performance.now();
    derive({ 'package.json': JSON.stringify({ scripts: { test: line } }), '.ci/run': line });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('svc.json', () => {
  const base = {
    'package.json': '{"engines":{"node":">=18"},"devDependencies":{"mocha":"10"}}',
    '.nvmrc': '20\n',
    'test/a.js': undefined,
  };

  it('declared fields override derived ones (declared: true wins)', () => {
    const declared = {
      runtimes: [{ name: 'node', version: '22.3.0' }],
      tooling: { test_runners: [{ name: 'node:test', source: 'docs/testing.md' }] },
      conventions: { test_locations: ['spec/'] },
      notes: 'kept as declared',
    };
    const { content, gaps } = derive({ ...base, 'svc.json': JSON.stringify(declared) });
    expect(content.runtimes).toEqual([
      { name: 'node', version: '22.3.0', source: 'svc.json#runtimes[0]', declared: true },
    ]);
    expect(content.tooling.test_runners).toEqual([
      { name: 'node:test', config: null, source: 'docs/testing.md', enforced_in: [] },
      { name: 'mocha', config: null, source: 'package.json#devDependencies.mocha', enforced_in: [] },
    ]);
    expect(content.conventions.test_locations).toEqual(['spec/']);
    expect(content.declared).toEqual(declared);
    expect(gaps).toEqual([]);
  });

  it('svc.json that is not JSON: a gap, declared null, the derived facts stand', () => {
    const { content, gaps } = derive({ ...base, 'svc.json': '{"runtimes": [' });
    expect(content.declared).toBeNull();
    expect(content.runtimes.map((r) => r.source)).toEqual(['.nvmrc', 'package.json#engines.node']);
    expect(gaps.map((g) => g.code)).toEqual(['repo_knowledge_file_invalid']);
  });

  it('svc.json with a field of the wrong shape: a gap naming the field', () => {
    const { content, gaps } = derive({ ...base, 'svc.json': '{"runtimes": {"node": "20"}}' });
    expect(content.declared).toBeNull();
    expect(content.runtimes).toHaveLength(2);
    expect(gaps).toEqual([
      { code: 'repo_knowledge_file_invalid', message: expect.stringContaining('runtimes') },
    ]);
  });
});

describe('gaps for files', () => {
  it('a wanted file that could not be read: named, and nothing derived from it', () => {
    const { content, gaps } = derive({ 'package.json': null, 'index.js': undefined });
    expect(content.runtimes).toEqual([]);
    expect(gaps).toContainEqual({
      code: 'knowledge_file_unreadable',
      message: 'package.json could not be read; nothing was derived from it',
    });
    expect(gaps.map((g) => g.code)).toEqual(['knowledge_file_unreadable', 'runtime_version_unknown']);
  });

  it('a manifest that does not parse is a gap, not a crash', () => {
    const { content, gaps } = derive({ 'pyproject.toml': '[project\nname = ', 'a.py': undefined });
    expect(content.runtimes).toEqual([]);
    expect(gaps.map((g) => g.code)).toEqual(['knowledge_file_invalid', 'runtime_version_unknown']);
    expect(gaps[0]?.message).toContain('pyproject.toml');
  });
});

describe('knowledgeFilesWanted', () => {
  it('configuration files of the repository itself only, root and CI first', () => {
    expect(
      knowledgeFilesWanted([
        'src/index.ts',
        'packages/a/package.json',
        'package.json',
        'node_modules/x/package.json',
        'test/fixtures/app/package.json',
        'examples/demo/package.json',
        '.github/workflows/ci.yml',
        'svc.json',
        'requirements-dev.txt',
        'docs/requirements.txt',
        'go.mod',
        'setup.py',
        'tsconfig.json',
        'biome.json',
      ]),
    ).toEqual([
      'svc.json',
      '.github/workflows/ci.yml',
      'biome.json',
      'go.mod',
      'package.json',
      'requirements-dev.txt',
      'packages/a/package.json',
    ]);
  });

  it('caps at 200, and deriveKnowledge says so', () => {
    const paths = Array.from({ length: 250 }, (_, i) => `mod${String(i).padStart(3, '0')}/go.mod`);
    const wanted = knowledgeFilesWanted(paths);
    expect(wanted).toHaveLength(200);
    const texts = new Map(wanted.map((p) => [p, 'module x\ngo 1.22\n']));
    const { gaps } = deriveKnowledge({ commit: 'x', paths, texts });
    expect(gaps.map((g) => g.code)).toEqual(['knowledge_files_capped']);
  });
});

describe('conventions', () => {
  it('colocated tests by name glob, vendored and generated directories', () => {
    const { content } = derive({
      'package.json': '{"engines":{"node":"20"}}',
      'src/a.ts': undefined,
      'src/a.test.ts': undefined,
      'src/deep/b.test.ts': undefined,
      'vendor/lib/x.js': undefined,
      'dist/index.js': undefined,
      'web/dist/app.js': undefined,
    });
    expect(content.conventions).toEqual({
      test_locations: ['src/**/*.test.ts'],
      source_roots: ['src/'],
      generated_paths: ['dist/', 'web/dist/'],
      vendored_paths: ['vendor/'],
    });
    expect(content.languages).toEqual([{ name: 'typescript', files: 3 }]);
  });
});
