/**
 * Repository knowledge follows CI through task runners (tox, pre-commit, make, just, nox,
 * Taskfile, hatch, pdm) to the tools they run: a click-like repository on disk, where every check
 * runs through tox and pre-commit, and snippets for each runner, with the quiet cases (a target CI
 * does not reach, a runner that only installs) that must not count.
 */
import { describe, expect, it } from 'vitest';
import type { RepoKnowledge } from '../../src/core/repo-knowledge';
import { deriveKnowledge, knowledgeFilesWanted } from '../../src/knowledge/derive';
import { CLICK_LIKE } from './click-like';

/** The tests workflow's tox command: its env is a matrix expression, so it may be any env. */
const MATRIX_TOX = ['tox run -e $', "{{ matrix.tox || format('py{0}', matrix.python) }}"].join('');

function derive(files: Record<string, string>) {
  const paths = Object.keys(files);
  const texts = new Map(knowledgeFilesWanted(paths).map((p) => [p, files[p] ?? null]));
  return deriveKnowledge({ commit: 'abc123', paths, texts });
}

const tool = (k: RepoKnowledge, kind: keyof RepoKnowledge['tooling'], name: string) =>
  k.tooling[kind].find((t) => t.name === name);

const workflow = (steps: string[], on = '[pull_request]') =>
  `on: ${on}\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n${steps.map((s) => `      - run: ${s}\n`).join('')}`;

describe('a click-like repository: everything runs through tox and pre-commit', () => {
  const { content, gaps } = derive(CLICK_LIKE);

  it('reads the runners’ configuration at the root', () => {
    expect(knowledgeFilesWanted(Object.keys(CLICK_LIKE))).toEqual(
      expect.arrayContaining(['tox.ini', '.pre-commit-config.yaml', 'pyproject.toml']),
    );
    expect(gaps).toEqual([]);
  });

  it('pytest runs in CI through tox’s base testenv, with the chain', () => {
    const pytest = tool(content, 'test_runners', 'pytest');
    expect(pytest?.enforced_in).toEqual(['.github/workflows/tests.yaml', 'tox.ini#testenv']);
    expect(pytest?.enforced_via?.[0]).toBe(
      `.github/workflows/tests.yaml: ${MATRIX_TOX} -> tox.ini [testenv]: pytest -v --tb=short --basetemp={envtmpdir}`,
    );
  });

  it('mypy and pyright run through tox -e typing', () => {
    for (const name of ['mypy', 'pyright']) {
      const checker = tool(content, 'type_checkers', name);
      expect(checker?.config, name).toBe(`pyproject.toml#tool.${name}`);
      expect(checker?.enforced_in, name).toEqual(['.github/workflows/tests.yaml', 'tox.ini#testenv:typing']);
    }
    expect(tool(content, 'type_checkers', 'mypy')?.enforced_via).toContain(
      '.github/workflows/tests.yaml: tox run -e typing -> tox.ini [testenv:typing]: mypy',
    );
  });

  it('ruff and ruff format run as pre-commit hooks, from the pre-commit workflow and from tox -e style', () => {
    const ruff = tool(content, 'linters', 'ruff');
    expect(ruff?.enforced_in).toEqual([
      '.github/workflows/pre-commit.yaml',
      '.pre-commit-config.yaml#hooks.ruff',
      '.github/workflows/tests.yaml',
    ]);
    expect(ruff?.enforced_via).toContain(
      '.github/workflows/pre-commit.yaml: pre-commit run --show-diff-on-failure --color=always --all-files -> .pre-commit-config.yaml hook ruff: ruff check',
    );
    expect(ruff?.enforced_via).toContain(
      `.github/workflows/tests.yaml: ${MATRIX_TOX} -> tox.ini [testenv:style]: pre-commit run --all-files -> .pre-commit-config.yaml hook ruff: ruff check`,
    );
    expect(tool(content, 'formatters', 'ruff format')?.enforced_in).toContain(
      '.pre-commit-config.yaml#hooks.ruff-format',
    );
  });

  it('records the actions each workflow uses, as pinned', () => {
    expect(content.ci.find((w) => w.path === '.github/workflows/pre-commit.yaml')?.uses).toEqual([
      'actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683',
      'actions/setup-python@0b93645e9fea7318ecaed2b359559ac225c90a2b',
    ]);
  });
});

describe('tox', () => {
  const tox = `[tox]\nenvlist = py312, lint\n\n[testenv]\ncommands = pytest {posargs:tests}\n\n[testenv:lint]\ncommands =\n    flake8 src\n    - mypy src\n\n[testenv:docs]\ncommands = sphinx-build docs out\n`;
  const base = { 'tox.ini': tox, 'src/a.py': 'x = 1\n', 'requirements.txt': 'flake8\nmypy\npytest\n' };

  it('a bare `tox` runs the envlist', () => {
    const { content } = derive({ ...base, '.github/workflows/ci.yml': workflow(['tox']) });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'tox.ini#testenv',
    ]);
    expect(tool(content, 'linters', 'flake8')?.enforced_in).toContain('tox.ini#testenv:lint');
    expect(tool(content, 'type_checkers', 'mypy')?.enforced_in).toContain('tox.ini#testenv:lint');
  });

  it('quiet: `tox -e docs` runs neither the tests nor the linters', () => {
    const { content } = derive({ ...base, '.github/workflows/ci.yml': workflow(['tox -e docs']) });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([]);
    expect(tool(content, 'linters', 'flake8')?.enforced_in).toEqual([]);
  });

  it('quiet: `tox --version` and `tox list` run no env', () => {
    const { content } = derive({ ...base, '.github/workflows/ci.yml': workflow(['tox list']) });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([]);
  });

  it('reads [tool.tox] in pyproject.toml (native TOML) and runs an env through uv', () => {
    const pyproject = `[project]\nname = "x"\ndependencies = []\n\n[tool.tox]\nenv_list = ["py3.12", "typing"]\n\n[tool.tox.env_run_base]\ncommands = [["pytest", "-v", { replace = "posargs", extend = true }]]\n\n[tool.tox.env.typing]\ncommands = [["mypy"], ["pyright"]]\n`;
    const { content } = derive({
      'pyproject.toml': pyproject,
      'src/a.py': 'x = 1\n',
      '.github/workflows/ci.yml': workflow(['uv run --locked tox run -e typing']),
    });
    expect(tool(content, 'type_checkers', 'pyright')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'pyproject.toml#tool.tox.env.typing',
    ]);
    expect(tool(content, 'test_runners', 'pytest')).toEqual({
      name: 'pytest',
      config: null,
      source: 'pyproject.toml#tool.tox.env_run_base',
      enforced_in: [],
    });
  });

  it('reads [tox:tox] in setup.cfg', () => {
    const cfg = `[metadata]\nname = x\n\n[tox:tox]\nenvlist = py\n\n[testenv]\ncommands = python -m pytest\n`;
    const { content } = derive({
      'setup.cfg': cfg,
      'src/a.py': 'x = 1\n',
      '.gitlab-ci.yml': 'test:\n  script:\n    - tox\n',
    });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.gitlab-ci.yml',
      'setup.cfg#testenv',
    ]);
  });
});

describe('make and just', () => {
  const makefile = [
    'PYTEST := python -m pytest',
    '.PHONY: all test lint build',
    'all: lint test',
    '',
    'test:',
    '\t@$(PYTEST) -q tests',
    '',
    'lint:',
    '\truff check .',
    '\t$(MAKE) types',
    '',
    'types:',
    '\tmypy src',
    '',
    'build:',
    '\tpython -m build',
    '',
    'loop: loop2',
    'loop2: loop',
    '',
  ].join('\n');
  const files = { Makefile: makefile, 'src/a.py': 'x = 1\n', 'requirements.txt': 'pytest\nruff\nmypy\n' };

  it('`make` runs the first target and its prerequisites, with variables expanded', () => {
    const { content } = derive({ ...files, '.github/workflows/ci.yml': workflow(['make']) });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'Makefile#test',
    ]);
    expect(tool(content, 'test_runners', 'pytest')?.enforced_via).toEqual([
      '.github/workflows/ci.yml: make -> Makefile all: make test -> Makefile test: python -m pytest -q tests',
    ]);
    // Through `$(MAKE) types` inside `lint`.
    expect(tool(content, 'type_checkers', 'mypy')?.enforced_in).toContain('Makefile#types');
  });

  it('quiet: a target that does not run the tests is not "tests in CI"', () => {
    const { content } = derive({ ...files, '.github/workflows/ci.yml': workflow(['make build']) });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([]);
    expect(tool(content, 'linters', 'ruff')?.enforced_in).toEqual([]);
  });

  it('quiet: a cycle of targets ends, and another directory’s Makefile is not this one', () => {
    const { content } = derive({
      ...files,
      '.github/workflows/ci.yml': workflow(['make loop', 'make -C docs test']),
    });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([]);
  });

  it('committed text shaped against the patterns is read through, targets after it still found', () => {
    const hostile = [
      `a${' '.repeat(1900)}=`,
      `b${' '.repeat(1900)}=:`,
      `x${'-x'.repeat(900)}`,
      `c${' '.repeat(50_000)}:`,
      'test:',
      '\tpytest',
      '',
    ].join('\n');
    const justfile = [`r${'-r'.repeat(900)}`, 'lint:', '    ruff check .', ''].join('\n');
    const { content } = derive({
      Makefile: hostile,
      justfile,
      'src/a.py': 'x = 1\n',
      '.github/workflows/ci.yml': workflow(['make test', 'just lint']),
    });
    expect(tool(content, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'Makefile#test',
    ]);
    expect(tool(content, 'linters', 'ruff')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'justfile#lint',
    ]);
  });

  it('`just` recipes, their dependencies and aliases', () => {
    const justfile = [
      'set shell := ["bash", "-c"]',
      'version := "1"',
      'alias t := test',
      '',
      'default: check',
      '',
      'check: lint',
      '    cargo test --all',
      '',
      'lint:',
      '    cargo clippy -- -D warnings',
      '',
      'test *args:',
      '    cargo test {{args}}',
      '',
    ].join('\n');
    const base = { justfile, 'Cargo.toml': '[package]\nname = "x"\n', 'src/main.rs': 'fn main() {}\n' };
    const bare = derive({ ...base, '.github/workflows/ci.yml': workflow(['just']) }).content;
    expect(tool(bare, 'linters', 'clippy')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'justfile#lint',
    ]);
    expect(tool(bare, 'test_runners', 'cargo test')?.enforced_in).toContain('justfile#check');
    const alias = derive({ ...base, '.github/workflows/ci.yml': workflow(['just t']) }).content;
    expect(tool(alias, 'test_runners', 'cargo test')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'justfile#test',
    ]);
    expect(tool(alias, 'linters', 'clippy')?.enforced_in).toEqual([]);
  });
});

describe('nox, Taskfile, hatch and pdm', () => {
  it('nox sessions: `nox -s` runs the named ones, `session.run` calls read as text', () => {
    const noxfile = [
      'import nox',
      '',
      'nox.options.sessions = ["tests"]',
      '',
      '@nox.session(python=["3.11", "3.12"])',
      'def tests(session: nox.Session) -> None:',
      '    session.install("-e", ".[test]")',
      '    session.run("pytest", "--cov", *session.posargs)',
      '',
      '@nox.session(name="lint")',
      'def run_linters(session):',
      '    session.run(',
      '        "ruff",',
      '        "check",',
      '        ".",',
      '    )',
      '',
    ].join('\n');
    const base = { 'noxfile.py': noxfile, 'src/a.py': 'x = 1\n', 'requirements.txt': 'ruff\npytest\n' };
    const one = derive({ ...base, '.github/workflows/ci.yml': workflow(['nox -s tests-3.12']) }).content;
    expect(tool(one, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'noxfile.py#tests',
    ]);
    expect(tool(one, 'linters', 'ruff')?.enforced_in).toEqual([]);
    const lint = derive({
      ...base,
      '.github/workflows/ci.yml': workflow(['pipx run nox --session lint']),
    }).content;
    expect(tool(lint, 'linters', 'ruff')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'noxfile.py#lint',
    ]);
    // A bare `nox` runs nox.options.sessions.
    const bare = derive({ ...base, '.github/workflows/ci.yml': workflow(['nox']) }).content;
    expect(tool(bare, 'test_runners', 'pytest')?.enforced_in).toContain('noxfile.py#tests');
    expect(tool(bare, 'linters', 'ruff')?.enforced_in).toEqual([]);
  });

  it('Taskfile tasks, their deps and `task:` commands', () => {
    const taskfile = `version: '3'\ntasks:\n  default:\n    deps: [lint]\n    cmds:\n      - task: test\n  lint:\n    cmds:\n      - golangci-lint run ./...\n  test:\n    cmds:\n      - cmd: go test ./...\n  release:\n    cmds: [goreleaser release]\n`;
    const base = { 'Taskfile.yml': taskfile, 'go.mod': 'module x\ngo 1.22\n', 'main.go': 'package main\n' };
    const all = derive({ ...base, '.github/workflows/ci.yml': workflow(['task']) }).content;
    expect(tool(all, 'linters', 'golangci-lint')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'Taskfile.yml#tasks.lint',
    ]);
    expect(tool(all, 'test_runners', 'go test')?.enforced_in).toContain('Taskfile.yml#tasks.test');
    const release = derive({ ...base, '.github/workflows/ci.yml': workflow(['task release']) }).content;
    expect(tool(release, 'test_runners', 'go test')?.enforced_in).toEqual([]);
  });

  it('hatch env scripts and `hatch test`; pdm scripts and composites', () => {
    const pyproject = `[project]\nname = "x"\ndependencies = []\n\n[tool.hatch.envs.types.scripts]\ncheck = "mypy --install-types src"\n\n[tool.pdm.scripts]\nlint = "flake8 src"\nall = { composite = ["lint", "test"] }\ntest = { cmd = ["pytest", "-x"] }\n`;
    const base = { 'pyproject.toml': pyproject, 'src/a.py': 'x = 1\n' };
    const hatch = derive({
      ...base,
      '.github/workflows/ci.yml': workflow(['hatch run types:check', 'hatch test']),
    }).content;
    expect(tool(hatch, 'type_checkers', 'mypy')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'pyproject.toml#tool.hatch.envs.types.scripts.check',
    ]);
    expect(tool(hatch, 'test_runners', 'pytest')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      'pyproject.toml',
    ]);
    const pdm = derive({ ...base, '.github/workflows/ci.yml': workflow(['pdm run all']) }).content;
    expect(tool(pdm, 'linters', 'flake8')?.enforced_in).toContain('pyproject.toml#tool.pdm.scripts.lint');
    expect(tool(pdm, 'test_runners', 'pytest')?.enforced_in).toContain(
      'pyproject.toml#tool.pdm.scripts.test',
    );
  });
});

describe('pre-commit', () => {
  const config = `repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v1.11.0\n    hooks:\n      - id: mypy\n  - repo: local\n    hooks:\n      - id: tests\n        name: unit tests\n        entry: pytest -q\n        language: system\n        stages: [manual]\n`;
  const base = { '.pre-commit-config.yaml': config, 'src/a.py': 'x = 1\n' };

  it('`pre-commit run` runs every hook but the manual ones; a named hook runs alone', () => {
    const all = derive({ ...base, '.github/workflows/ci.yml': workflow(['pre-commit run -a']) }).content;
    expect(tool(all, 'type_checkers', 'mypy')?.enforced_in).toEqual([
      '.github/workflows/ci.yml',
      '.pre-commit-config.yaml#hooks.mypy',
    ]);
    expect(tool(all, 'test_runners', 'pytest')?.enforced_in).toEqual([]);
    const manual = derive({
      ...base,
      '.github/workflows/ci.yml': workflow(['pre-commit run tests --hook-stage manual --all-files']),
    }).content;
    expect(tool(manual, 'test_runners', 'pytest')?.enforced_in).toContain(
      '.pre-commit-config.yaml#hooks.tests',
    );
    expect(tool(manual, 'type_checkers', 'mypy')?.enforced_in).toEqual([]);
  });

  it('the pre-commit/action runs the hooks', () => {
    const wf = `on: [pull_request]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: pre-commit/action@v3.0.1\n`;
    const { content } = derive({ ...base, '.github/workflows/lint.yml': wf });
    expect(tool(content, 'type_checkers', 'mypy')?.enforced_in).toEqual([
      '.github/workflows/lint.yml',
      '.pre-commit-config.yaml#hooks.mypy',
    ]);
  });

  it('quiet: `pre-commit install` runs no hook', () => {
    const { content } = derive({ ...base, '.github/workflows/ci.yml': workflow(['pre-commit install']) });
    expect(tool(content, 'type_checkers', 'mypy')?.enforced_in).toEqual([]);
  });
});
