/**
 * Quick actions: what each failing check suggests, whether svc can do it, and the files its draft
 * pull request would commit: a workflow that, once committed, makes the CI check pass, and a
 * svc.json that the knowledge derivation accepts as the repository's declaration.
 */
import { describe, expect, it } from 'vitest';
import { readDeclared } from '../../src/knowledge/declared';
import { evaluateChecks } from '../../src/scorecards/evaluate';
import { suggestActions, TEST_WORKFLOW_PATH, testWorkflow } from '../../src/scorecards/quick-actions';
import type { ScorecardFacts, SuggestedAction } from '../../src/scorecards/types';
import { BARE_REPO, factsFor } from './facts';

const actionsFor = (facts: ScorecardFacts) => suggestActions(evaluateChecks(facts), facts);
const kind = (actions: SuggestedAction[], k: SuggestedAction['kind']) =>
  actions.find((a) => a.kind === k) as SuggestedAction;

describe('quick actions of a bare repository', () => {
  const facts = factsFor(BARE_REPO);
  const actions = actionsFor(facts);

  it('lists the next steps lowest level first, each saying what it will do', () => {
    expect(actions.map((a) => a.check).slice(0, 4)).toEqual([
      'lockfile_committed',
      'runtime_declared',
      'ci_runs_tests_on_pull_requests',
      'tests_present',
    ]);
    for (const a of actions) {
      expect(a.does.length, a.kind).toBeGreaterThan(10);
      expect(a.execution === null, a.kind).toBe(a.why_no_operation !== null);
    }
  });

  it('adds a CI workflow running the detected test command, as a draft pull request', () => {
    const ci = kind(actions, 'add_ci_test_workflow');
    expect(ci.execution).toBe('draft_pull_request');
    expect(ci.does).toBe(
      `Opens a draft pull request adding ${TEST_WORKFLOW_PATH}, which runs \`npm install\`, \`npm test\` on every pull request.`,
    );
    const file = ci.change?.files[0];
    expect(file?.path).toBe(TEST_WORKFLOW_PATH);
    expect(file?.content).toContain('  pull_request:');
    expect(file?.content).toContain('- run: "npm test"');
    expect(ci.change?.pull_request.body).toContain('ci_runs_tests_on_pull_requests');

    // Committed, the workflow makes the check it was suggested for pass.
    const after = evaluateChecks(factsFor({ ...BARE_REPO, [TEST_WORKFLOW_PATH]: file?.content ?? '' }));
    expect(after.find((o) => o.check === 'ci_runs_tests_on_pull_requests')).toMatchObject({
      result: 'pass',
      evidence: { paths: [TEST_WORKFLOW_PATH] },
    });
  });

  it('cannot require the review check on the local host, and says so', () => {
    expect(kind(actions, 'require_review_check')).toMatchObject({
      check: 'review_check_required',
      execution: null,
      why_no_operation: 'the local code host has no branch protection',
    });
    const github = actionsFor(factsFor(BARE_REPO, { host: { kind: 'github', defaultBranch: 'main' } }));
    expect(kind(github, 'require_review_check')).toMatchObject({
      execution: 'require_review_check',
      why_no_operation: null,
      does: expect.stringContaining('Service / Review'),
    });
  });

  it('leaves CODEOWNERS to people', () => {
    expect(kind(actions, 'add_codeowners')).toMatchObject({
      execution: null,
      why_no_operation: expect.stringContaining('names people and teams'),
    });
  });
});

describe('add_svc_json', () => {
  it('declares the derived runtimes and conventions in a file the derivation accepts', () => {
    const files = {
      ...BARE_REPO,
      'package.json':
        BARE_REPO['package.json']?.replace('"name":"shop",', '"name":"shop","engines":{"node":">=20"},') ??
        '',
      'test/cart.test.js': 'test("x", () => {});\n',
    };
    const facts = factsFor(files);
    const action = kind(actionsFor(facts), 'add_svc_json');
    expect(action.execution).toBe('draft_pull_request');
    const content = action.change?.files[0]?.content ?? '';
    const gaps: { code: string; message: string }[] = [];
    const declared = readDeclared(content, gaps);
    expect(gaps).toEqual([]);
    expect(declared?.parsed.runtimes).toEqual([{ name: 'node', version: '>=20' }]);
    expect(declared?.parsed.conventions?.test_locations).toEqual(
      facts.knowledge?.content.conventions.test_locations,
    );
    expect(action.does).toContain('node >=20');

    const withIt = evaluateChecks(factsFor({ ...files, 'svc.json': content }));
    expect(withIt.find((o) => o.check === 'svc_json_declared')?.result).toBe('pass');
  });
});

describe('the test workflow', () => {
  it('says why when svc knows no test command', () => {
    const java = factsFor({
      'pom.xml': '<project><dependencies>junit</dependencies></project>',
      'src/main/java/A.java': 'class A {}\n',
    });
    const ci = kind(actionsFor(java), 'add_ci_test_workflow');
    expect(ci.execution).toBeNull();
    expect(ci.why_no_operation).toContain('test runners found: junit');
  });

  it('writes one job per ecosystem it knows, with its runtime version', () => {
    const facts = factsFor({
      'go.mod': 'module x\n\ngo 1.22\n',
      'main.go': 'package main\n',
      'main_test.go': 'package main\n',
      'requirements.txt': 'pytest==8.0\n',
      '.python-version': '3.12\n',
      'tool/a.py': 'print(1)\n',
    });
    const workflow = testWorkflow(facts.knowledge?.content as never, {}, 'trunk');
    if ('why' in workflow) throw new Error(workflow.why);
    expect(workflow.commands).toEqual([
      'python -m pip install -r requirements.txt',
      'python -m pytest',
      'go test ./...',
    ]);
    expect(workflow.content).toContain('python-version-file: ".python-version"');
    expect(workflow.content).toContain('go-version-file: "go.mod"');
    expect(workflow.content).toContain('branches: ["trunk"]');
  });
});
