/**
 * Quick actions: the next steps a scorecard suggests, one per check that does not pass (and one
 * for the review check when the host cannot tell, since requiring it is still the step). Each
 * says in one sentence what it will do. Where svc can do it itself it carries what it will run:
 * a draft pull request whose files are planned here, in full, so the person clicking sees exactly
 * what will be committed, or making `Service / Review` a required check. Where svc cannot, it says
 * why (`why_no_operation`) and the step is the check's remedy.
 */
import type { KnowledgePackageManager, KnowledgeTool, RepoKnowledge } from '../core/repo-knowledge';
import { pinLikeRepository } from './action-pins';
import { type CheckId, levelOf, REVIEW_CHECK_NAME } from './definitions';
import { testsRunBy } from './evaluate';
import type { CheckOutcome, QuickActionKind, ScorecardFacts, SuggestedAction } from './types';

/** Where the CI workflow quick action writes. */
export const TEST_WORKFLOW_PATH = '.github/workflows/svc-tests.yml';

/** A test command svc can write a workflow for, or why it cannot. */
type Job = { name: string; lines: string[]; commands: string[] };

const q = (s: string) => JSON.stringify(s);
const step = (run: string) => `      - run: ${q(run)}`;
const uses = (action: string, with_: Record<string, string> = {}) => [
  `      - uses: ${action}`,
  ...(Object.keys(with_).length > 0
    ? ['        with:', ...Object.entries(with_).map(([k, v]) => `          ${k}: ${q(v)}`)]
    : []),
];

const atRoot = (m: KnowledgePackageManager) => m.manifest !== null && !m.manifest.includes('/');
const NODE_MANAGERS = new Set(['npm', 'yarn', 'pnpm', 'bun']);
const NPM_NO_TEST = /no test specified/;

/** How a node test runner runs once installed, when package.json has no `test` script. */
const NODE_RUNNERS: Record<string, string> = {
  vitest: 'vitest run',
  jest: 'jest',
  mocha: 'mocha',
  ava: 'ava',
};

function nodeJob(
  k: RepoKnowledge,
  manager: KnowledgePackageManager,
  scripts: Record<string, string>,
): Job | string {
  const pm = manager.name;
  const test = scripts.test;
  let command: string | null = null;
  if (test !== undefined && !NPM_NO_TEST.test(test)) command = pm === 'bun' ? 'bun run test' : `${pm} test`;
  else if (k.tooling.test_runners.some((r) => r.name === 'node:test')) command = 'node --test';
  else {
    const runner = k.tooling.test_runners.find((r) => NODE_RUNNERS[r.name]);
    const args = runner ? NODE_RUNNERS[runner.name] : undefined;
    if (args)
      command =
        { npm: `npx ${args}`, pnpm: `pnpm exec ${args}`, yarn: `yarn ${args}`, bun: `bunx ${args}` }[pm] ??
        null;
  }
  if (!command)
    return 'package.json has no test script and no Node test runner svc knows how to start was found';
  const lines: string[] = [];
  const node = k.runtimes.find((r) => r.name === 'node');
  const versionFile = node && /^\.(nvmrc|node-version)$/.test(node.source) ? node.source : null;
  if (pm === 'bun') lines.push(...uses('oven-sh/setup-bun@v2'));
  else
    lines.push(
      ...uses(
        'actions/setup-node@v4',
        versionFile ? { 'node-version-file': versionFile } : node ? { 'node-version': node.version } : {},
      ),
    );
  const install =
    pm === 'npm'
      ? manager.lockfile
        ? 'npm ci'
        : 'npm install'
      : pm === 'pnpm'
        ? manager.lockfile
          ? 'pnpm install --frozen-lockfile'
          : 'pnpm install'
        : pm === 'yarn'
          ? 'yarn install'
          : 'bun install';
  const commands = [...(pm === 'pnpm' || pm === 'yarn' ? ['corepack enable'] : []), install, command];
  lines.push(...commands.map(step));
  return { name: 'node', lines, commands };
}

function pythonJob(k: RepoKnowledge, manager: KnowledgePackageManager, pytest: KnowledgeTool): Job | string {
  const python = k.runtimes.find((r) => r.name === 'python');
  const setup = uses(
    'actions/setup-python@v5',
    python && /^(\.python-version|pyproject\.toml)/.test(python.source)
      ? { 'python-version-file': python.source.split('#')[0] as string }
      : python && /^\d+(\.\d+)*$/.test(python.version)
        ? { 'python-version': python.version }
        : {},
  );
  let commands: string[];
  const lines: string[] = [];
  if (manager.name === 'uv') {
    lines.push(...uses('astral-sh/setup-uv@v6'));
    commands = ['uv sync', 'uv run pytest'];
  } else if (manager.name === 'poetry') {
    lines.push(...setup);
    commands = ['pipx install poetry', 'poetry install', 'poetry run pytest'];
  } else if (manager.name === 'pip' && manager.manifest === 'requirements.txt') {
    lines.push(...setup);
    // pytest is installed from the requirements file that names it, else on its own.
    const pytestFrom = pytest.source.split('#')[0] as string;
    const fromRequirements = /requirements[^/]*\.txt$/.test(pytestFrom);
    commands = [
      'python -m pip install -r requirements.txt',
      ...(pytestFrom === 'requirements.txt'
        ? []
        : [fromRequirements ? `python -m pip install -r ${pytestFrom}` : 'python -m pip install pytest']),
      'python -m pytest',
    ];
  } else {
    return `svc does not know how this ${manager.name} project installs its test dependencies`;
  }
  lines.push(...commands.map(step));
  return { name: 'python', lines, commands };
}

/** The workflow running the repository's tests on pull requests, or why svc cannot write one. */
export function testWorkflow(
  k: RepoKnowledge,
  scripts: Record<string, string> | null,
  defaultBranch: string,
): { content: string; commands: string[]; pinned: string[] } | { why: string } {
  const managers = k.package_managers.filter(atRoot);
  const runners = k.tooling.test_runners;
  const jobs: Job[] = [];
  const reasons: string[] = [];
  const node = managers.find((m) => NODE_MANAGERS.has(m.name));
  if (node) {
    if (scripts === null) reasons.push('package.json could not be read to find its test script');
    else {
      const job = nodeJob(k, node, scripts);
      if (typeof job === 'string') reasons.push(job);
      else jobs.push(job);
    }
  }
  const pytest = runners.find((r) => r.name === 'pytest');
  const py = managers.find((m) => ['pip', 'poetry', 'uv'].includes(m.name));
  if (pytest && py) {
    const job = pythonJob(k, py, pytest);
    if (typeof job === 'string') reasons.push(job);
    else jobs.push(job);
  }
  if (runners.some((r) => r.name === 'go test') && managers.some((m) => m.name === 'go')) {
    const commands = ['go test ./...'];
    jobs.push({
      name: 'go',
      lines: [...uses('actions/setup-go@v5', { 'go-version-file': 'go.mod' }), ...commands.map(step)],
      commands,
    });
  }
  if (runners.some((r) => r.name === 'cargo test') && managers.some((m) => m.name === 'cargo')) {
    const commands = ['cargo test'];
    jobs.push({ name: 'rust', lines: commands.map(step), commands });
  }
  if (jobs.length === 0) {
    const found =
      runners.length > 0
        ? `test runners found: ${runners.map((r) => r.name).join(', ')}`
        : 'no test runner was found';
    return {
      why: `svc knows no test command for this repository (${[...reasons, found].join('; ')}); add the workflow by hand`,
    };
  }
  const content = [
    '# Runs the tests on every pull request. Added by svc (scorecard check ci_runs_tests_on_pull_requests).',
    'name: svc tests',
    'on:',
    '  pull_request:',
    '  push:',
    `    branches: [${q(defaultBranch)}]`,
    'jobs:',
    ...jobs.flatMap((job) => [
      `  ${job.name}:`,
      '    runs-on: ubuntu-latest',
      '    steps:',
      '      - uses: actions/checkout@v4',
      ...job.lines,
    ]),
    '',
  ].join('\n');
  // The repository's convention for action references wins over the tags written above.
  const pinned = pinLikeRepository(content, k.ci);
  if ('why' in pinned) return pinned;
  return { content: pinned.content, commands: jobs.flatMap((j) => j.commands), pinned: pinned.pinned };
}

/**
 * svc.json from what was derived: the runtimes (name and version) and the conventions, so the
 * repository states as facts what svc had to infer. Null when nothing was derived to declare.
 */
export function svcJsonFromKnowledge(k: RepoKnowledge): Record<string, unknown> | null {
  const runtimes = k.runtimes.map((r) => ({ name: r.name, version: r.version }));
  const conventions = Object.fromEntries(
    Object.entries(k.conventions).filter(([, paths]) => Array.isArray(paths) && paths.length > 0),
  );
  if (runtimes.length === 0 && Object.keys(conventions).length === 0) return null;
  return {
    ...(runtimes.length > 0 ? { runtimes } : {}),
    ...(Object.keys(conventions).length > 0 ? { conventions } : {}),
  };
}

/** Steps only people can take: a short title, and why svc has no operation for them. */
const NEEDS_PEOPLE: Partial<Record<CheckId, { kind: QuickActionKind; title: string; why: string }>> = {
  lockfile_committed: {
    kind: 'commit_lockfile',
    title: 'Commit the lockfile',
    why: "a lockfile is written by the package manager's own resolution, which svc does not run",
  },
  runtime_declared: {
    kind: 'declare_runtime',
    title: 'Declare the runtime version',
    why: 'which runtime version the code needs is the team’s decision; svc only reads it',
  },
  tests_present: {
    kind: 'add_tests',
    title: 'Add tests beside the code',
    why: 'tests are written by people who know what the code must do',
  },
  linter_enforced: {
    kind: 'enforce_linter',
    title: 'Run a linter in CI',
    why: 'choosing and configuring the tool is the team’s decision, and svc does not edit existing CI workflows',
  },
  formatter_enforced: {
    kind: 'enforce_formatter',
    title: 'Check formatting in CI',
    why: 'choosing and configuring the tool is the team’s decision, and svc does not edit existing CI workflows',
  },
  type_checking: {
    kind: 'enforce_type_checking',
    title: 'Type-check the code in CI',
    why: 'choosing and configuring the tool is the team’s decision, and svc does not edit existing CI workflows',
  },
  no_open_p0_on_default_branch: {
    kind: 'fix_open_p0',
    title: 'Fix the P0 findings merged into the default branch',
    why: 'a fix needs a person (or a `fix this` reply on the finding, which proposes one when a rule knows it)',
  },
  secrets_absent: {
    kind: 'rotate_secrets',
    title: 'Rotate the committed credentials',
    why: 'only the credential’s issuer can revoke and rotate it',
  },
  fix_rate_30d: {
    kind: 'fix_findings',
    title: 'Fix more of the findings',
    why: 'findings are fixed in the code by the people who own it',
  },
  median_time_to_fix_30d: {
    kind: 'fix_findings',
    title: 'Fix findings sooner',
    why: 'findings are fixed in the code by the people who own it',
  },
  dismissal_rate_per_rule: {
    kind: 'tune_noisy_rules',
    title: 'Tune the rules people keep dismissing',
    why: 'whether a rule or the code is wrong is the team’s judgement; the study pass already downgrades rules dismissed this often',
  },
};

/**
 * The workflow quick action, or null when CI already runs the tests (directly or through a task
 * runner) and only its triggers are wrong: a second workflow would run them twice.
 */
function ciAction(o: CheckOutcome, facts: ScorecardFacts): SuggestedAction | null {
  const base = {
    kind: 'add_ci_test_workflow' as const,
    check: o.check,
    title: 'Add a CI workflow that runs the tests on pull requests',
  };
  const noOp = (why: string, does: string): SuggestedAction => ({
    ...base,
    does,
    execution: null,
    why_no_operation: why,
    change: null,
  });
  const k = facts.knowledge;
  if (!k) return noOp(facts.missing.knowledge ?? 'the repository knowledge was not read', o.remedy);
  const scripts = facts.rootScripts ?? {};
  if (k.content.ci.some((w) => testsRunBy(w, k.content.tooling.test_runners, scripts).length > 0))
    return null;
  const existing = k.content.ci.filter((w) => w.provider !== 'github_actions');
  if (k.content.ci.length > 0 && existing.length === k.content.ci.length)
    return noOp(
      `this repository's CI is ${[...new Set(existing.map((w) => w.provider))].join(', ')}, and svc writes GitHub Actions workflows only`,
      o.remedy,
    );
  if (facts.paths?.includes(TEST_WORKFLOW_PATH))
    return noOp(
      `${TEST_WORKFLOW_PATH} already exists`,
      `Make ${TEST_WORKFLOW_PATH} run the tests on pull requests.`,
    );
  if (!facts.host.defaultBranch) return noOp('the default branch could not be read', o.remedy);
  const workflow = testWorkflow(k.content, facts.rootScripts, facts.host.defaultBranch);
  if ('why' in workflow) return noOp(workflow.why, o.remedy);
  const runs = workflow.commands.map((c) => `\`${c}\``).join(', ');
  const pins =
    workflow.pinned.length > 0
      ? ` Its actions are pinned to the commit SHAs the repository's workflows already use (${workflow.pinned.join(', ')}).`
      : '';
  return {
    ...base,
    does: `Opens a draft pull request adding ${TEST_WORKFLOW_PATH}, which runs ${runs} on every pull request.${pins}`,
    execution: 'draft_pull_request',
    why_no_operation: null,
    change: {
      files: [{ path: TEST_WORKFLOW_PATH, content: workflow.content }],
      commit_message: 'ci: run the tests on pull requests (svc quick action)',
      pull_request: {
        title: 'Run the tests on pull requests',
        body: [
          `svc's scorecard found that no CI workflow runs the tests on pull requests (check \`${o.check}\`: ${o.evidence.note}).`,
          '',
          `This adds \`${TEST_WORKFLOW_PATH}\`, which runs on \`pull_request\` and on pushes to \`${facts.host.defaultBranch}\`:`,
          '',
          ...workflow.commands.map((c) => `- \`${c}\``),
          '',
          'The commands come from the repository knowledge svc derived (package managers, test runners, scripts); review them before merging.',
        ].join('\n'),
      },
    },
  };
}

function svcJsonAction(o: CheckOutcome, facts: ScorecardFacts): SuggestedAction {
  const replacing = facts.paths?.includes('svc.json') ?? false;
  const base = {
    kind: 'add_svc_json' as const,
    check: o.check,
    title: replacing ? 'Replace the invalid svc.json' : 'Add svc.json declaring the repository knowledge',
  };
  const k = facts.knowledge;
  if (!k)
    return {
      ...base,
      does: o.remedy,
      execution: null,
      why_no_operation: facts.missing.knowledge ?? 'the repository knowledge was not read',
      change: null,
    };
  const declared = svcJsonFromKnowledge(k.content);
  if (!declared)
    return {
      ...base,
      does: o.remedy,
      execution: null,
      why_no_operation: 'svc derived no runtime and no convention to declare',
      change: null,
    };
  const content = `${JSON.stringify(declared, null, 2)}\n`;
  const runtimes = k.content.runtimes.map((r) => `${r.name} ${r.version}`);
  return {
    ...base,
    does: `Opens a draft pull request ${replacing ? 'replacing' : 'adding'} svc.json at the repository root with the ${Object.keys(declared).join(' and ')} svc derived${runtimes.length > 0 ? ` (${runtimes.join(', ')})` : ''}.`,
    execution: 'draft_pull_request',
    why_no_operation: null,
    change: {
      files: [{ path: 'svc.json', content }],
      ...(replacing ? { replaces: ['svc.json'] } : {}),
      commit_message: `${replacing ? 'Replace' : 'Add'} svc.json (svc quick action)`,
      pull_request: {
        title: `${replacing ? 'Replace' : 'Add'} svc.json`,
        body: [
          `svc's scorecard found no valid svc.json (check \`${o.check}\`: ${o.evidence.note}).`,
          '',
          `This declares what svc derived from the tree at ${k.commitSha.slice(0, 12)}, so every reviewer is told it as fact: edit it to say what is true.`,
          '',
          '```json',
          content.trimEnd(),
          '```',
        ].join('\n'),
      },
    },
  };
}

function reviewCheckAction(o: CheckOutcome, facts: ScorecardFacts): SuggestedAction {
  const branch = facts.host.defaultBranch;
  const why =
    facts.host.kind === 'github'
      ? branch
        ? null
        : 'the default branch could not be read'
      : facts.host.kind === 'local'
        ? 'the local code host has no branch protection'
        : 'no code host is configured for the project’s installation';
  return {
    kind: 'require_review_check',
    check: o.check,
    title: `Require ${REVIEW_CHECK_NAME} in branch protection`,
    does:
      why === null
        ? `Adds ${REVIEW_CHECK_NAME} to the status checks branch protection requires on ${branch}, keeping the others, so a pull request with an open P0 cannot merge.`
        : o.remedy,
    execution: why === null ? 'require_review_check' : null,
    why_no_operation: why,
    change: null,
  };
}

/** The suggested next steps, lowest level first, heaviest check first within a level. */
export function suggestActions(outcomes: readonly CheckOutcome[], facts: ScorecardFacts): SuggestedAction[] {
  const actions: SuggestedAction[] = [];
  const ordered = [...outcomes].sort(
    (a, b) => levelOf(a.check) - levelOf(b.check) || b.weight - a.weight || a.check.localeCompare(b.check),
  );
  for (const o of ordered) {
    if (o.check === 'review_check_required') {
      if (o.result !== 'pass') actions.push(reviewCheckAction(o, facts));
      continue;
    }
    if (o.result !== 'fail') continue;
    if (o.check === 'ci_runs_tests_on_pull_requests') {
      const action = ciAction(o, facts);
      if (action) actions.push(action);
    } else if (o.check === 'svc_json_declared') actions.push(svcJsonAction(o, facts));
    else if (o.check === 'codeowners')
      actions.push({
        kind: 'add_codeowners',
        check: o.check,
        title: 'Add a CODEOWNERS file',
        does: o.remedy,
        execution: null,
        why_no_operation: 'a CODEOWNERS file names people and teams, and svc cannot choose them',
        change: null,
      });
    else {
      const people = NEEDS_PEOPLE[o.check];
      if (!people) continue;
      actions.push({
        kind: people.kind,
        check: o.check,
        title: people.title,
        does: o.remedy,
        execution: null,
        why_no_operation: people.why,
        change: null,
      });
    }
  }
  return actions;
}
