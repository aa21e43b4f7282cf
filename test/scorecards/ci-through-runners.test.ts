/**
 * The scorecard and its CI quick action read what CI runs through task runners: a click-like
 * repository (tests, lint and type checks through tox and pre-commit) passes the CI checks and is
 * offered no second workflow; a repository that pins actions by commit SHA gets a workflow pinned
 * to the commits it already uses, or is told which references to pin, never a tag.
 */
import { describe, expect, it } from 'vitest';
import { evaluateChecks } from '../../src/scorecards/evaluate';
import { suggestActions } from '../../src/scorecards/quick-actions';
import type { ScorecardFacts } from '../../src/scorecards/types';
import { CLICK_LIKE } from '../knowledge/click-like';
import { factsFor } from './facts';

const CHECKOUT = 'actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683';
const SETUP_PYTHON = 'actions/setup-python@0b93645e9fea7318ecaed2b359559ac225c90a2b';
const CACHE = 'actions/cache@6849a6489940f00c2f30c0fb92c6274307ccb58a';

const outcome = (facts: ScorecardFacts, check: string) => {
  const found = evaluateChecks(facts).find((o) => o.check === check);
  if (!found) throw new Error(`no outcome for ${check}`);
  return found;
};
const ciAction = (facts: ScorecardFacts) =>
  suggestActions(evaluateChecks(facts), facts).find((a) => a.kind === 'add_ci_test_workflow');

/** A Python repository whose only workflow lints, with the given action references. */
const lintOnly = (uses: string[], extra: Record<string, string> = {}) =>
  factsFor({
    'requirements.txt': 'pytest==8.3\n',
    'src/app/core.py': 'x = 1\n',
    'tests/test_core.py': 'def test_x():\n    assert True\n',
    '.github/workflows/lint.yml': `on: [pull_request]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n${uses.map((u) => `      - uses: ${u}\n`).join('')}      - run: pipx run ruff check .\n`,
    ...extra,
  });

describe('a click-like repository', () => {
  const facts = factsFor(CLICK_LIKE);

  it('runs its tests in CI on pull requests, through tox, and says how', () => {
    const ci = outcome(facts, 'ci_runs_tests_on_pull_requests');
    expect(ci.result).toBe('pass');
    expect(ci.evidence.paths).toEqual(['.github/workflows/tests.yaml']);
    expect(ci.evidence.note).toContain('.github/workflows/tests.yaml runs pytest on pull_request');
    expect(ci.evidence.note).toContain('-> tox.ini [testenv]: pytest -v');
  });

  it('enforces its linter, formatter and type checkers through pre-commit and tox', () => {
    for (const check of ['linter_enforced', 'formatter_enforced', 'type_checking']) {
      expect(outcome(facts, check).result, check).toBe('pass');
    }
    expect(outcome(facts, 'type_checking').evidence.note).toContain(
      'mypy runs in .github/workflows/tests.yaml, tox.ini#testenv:typing (.github/workflows/tests.yaml: tox run -e typing -> tox.ini [testenv:typing]: mypy)',
    );
    expect(outcome(facts, 'linter_enforced').evidence.paths).toContain('.pre-commit-config.yaml#hooks.ruff');
  });

  it('is offered no CI workflow', () => {
    expect(ciAction(facts)).toBeUndefined();
  });

  it('is offered no second workflow when its tests run in CI but not on pull requests', () => {
    const pushOnly = factsFor({
      ...CLICK_LIKE,
      '.github/workflows/tests.yaml': (CLICK_LIKE['.github/workflows/tests.yaml'] as string).replace(
        /\n {2}pull_request:\n.*\n/,
        '\n',
      ),
      '.github/workflows/pre-commit.yaml': 'on: [push]\njobs: {}\n',
    });
    const ci = outcome(pushOnly, 'ci_runs_tests_on_pull_requests');
    expect(ci.result).toBe('fail');
    expect(ci.remedy).toContain('pull_request');
    expect(ciAction(pushOnly)).toBeUndefined();
  });
});

describe('the CI workflow quick action follows how the repository pins actions', () => {
  it('pins to the commits the repository already uses', () => {
    const action = ciAction(lintOnly([CHECKOUT, SETUP_PYTHON]));
    expect(action?.execution).toBe('draft_pull_request');
    const content = action?.change?.files[0]?.content ?? '';
    expect(content).toContain(`- uses: ${CHECKOUT} # the commit .github/workflows/lint.yml uses`);
    expect(content).toContain(`- uses: ${SETUP_PYTHON} #`);
    expect(content).not.toMatch(/@v\d/);
    expect(action?.does).toContain('pinned to the commit SHAs');
  });

  it('writes no tag when it knows no commit for an action, and names the references to pin', () => {
    const action = ciAction(lintOnly([CHECKOUT, CACHE]));
    expect(action?.execution).toBeNull();
    expect(action?.change).toBeNull();
    expect(action?.why_no_operation).toContain('actions/setup-python@v5');
    expect(action?.why_no_operation).toContain('2 of its 2 action references');
  });

  it('keeps tags in a repository that refers to actions by tag', () => {
    const action = ciAction(lintOnly(['actions/checkout@v4', 'actions/setup-python@v5']));
    expect(action?.execution).toBe('draft_pull_request');
    expect(action?.change?.files[0]?.content).toContain('- uses: actions/checkout@v4');
  });

  it('quiet: a Makefile target that does not run the tests is not "tests in CI"', () => {
    const facts = lintOnly([CHECKOUT, SETUP_PYTHON], {
      Makefile: 'build:\n\tpython -m build\n\ntest:\n\tpython -m pytest\n',
      '.github/workflows/build.yml': 'on: [pull_request]\njobs:\n  b:\n    steps:\n      - run: make build\n',
    });
    expect(outcome(facts, 'ci_runs_tests_on_pull_requests').result).toBe('fail');
    expect(ciAction(facts)?.execution).toBe('draft_pull_request');
  });
});
