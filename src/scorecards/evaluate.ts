/**
 * Judging a scorecard: facts in (src/scorecards/gather.ts), check results out, then the score
 * and the level. Pure: no clock, no database, no code host. Every result names what it was
 * judged from (`evidence`: paths, numbers and a sentence), and a check whose fact could not be
 * read, or whose sample is too small to mean anything, is `unknown` with the reason, never a
 * guess either way.
 */
import { roleOfPath } from '../core/file-roles';
import { languageForPath } from '../core/languages';
import type { KnowledgeCiWorkflow, KnowledgeTool } from '../core/repo-knowledge';
import { scriptsReachedFrom } from '../knowledge/ci';
import {
  CHECK_IDS,
  CHECKS,
  type CheckId,
  type CheckResult,
  LEVELS,
  levelName,
  REVIEW_CHECK_NAME,
} from './definitions';
import type { CheckOutcome, Evidence, FindingRef, ScorecardFacts, ScorecardSummary } from './types';

/** The window the ledger's rates are measured over. */
export const WINDOW_DAYS = 30;
/**
 * Fewest findings a ratio or median is computed from: with fewer, one finding moves a rate by
 * 25 points or more, which says nothing about the team's habits.
 */
export const MIN_SAMPLE = 5;
/** Share of recent findings that must be fixed: below half, findings are mostly left alone. */
export const FIX_RATE_MIN = 0.5;
/** Median hours to fix: within three days a finding is fixed while its pull request is still open. */
export const MEDIAN_FIX_HOURS_MAX = 72;
/**
 * A rule dismissed this often is noise here: the same line the study pass draws when it turns a
 * rule into a downgrade learning (dismissed in at least half its findings).
 */
export const RULE_DISMISSAL_MAX = 0.5;
/** A language counts as a main language of the repository from this share of its source files. */
export const MAIN_LANGUAGE_SHARE = 0.2;

/** Where GitHub and GitLab read a CODEOWNERS file. */
export const CODEOWNERS_PATHS = ['CODEOWNERS', '.github/CODEOWNERS', 'docs/CODEOWNERS', '.gitlab/CODEOWNERS'];

/** Languages checked by their compiler: a build that compiles has passed a type checker. */
const COMPILED = new Set(['go', 'java', 'kotlin', 'rust', 'csharp', 'c', 'cpp', 'swift', 'scala']);
/** The type checkers the repository knowledge detects, by the language they check. */
const TYPE_CHECKERS: Record<string, string[]> = {
  typescript: ['tsc'],
  javascript: ['tsc', 'flow'],
  python: ['mypy', 'pyright'],
};
/** Not programming languages a type checker applies to. */
const UNTYPED = new Set(['shell', 'sql']);

/** What each package manager writes its lockfile with (the remedy names it). */
const LOCK_COMMAND: Record<string, string> = {
  npm: '`npm install` writes package-lock.json',
  yarn: '`yarn install` writes yarn.lock',
  pnpm: '`pnpm install` writes pnpm-lock.yaml',
  bun: '`bun install` writes bun.lock',
  pip: 'pin the exact versions with `uv pip compile` or `pip-compile` (pip-tools), or move to uv or poetry',
  poetry: '`poetry lock` writes poetry.lock',
  uv: '`uv lock` writes uv.lock',
  pipenv: '`pipenv lock` writes Pipfile.lock',
  pdm: '`pdm lock` writes pdm.lock',
  gradle: '`gradle dependencies --write-locks` writes gradle.lockfile once dependency locking is on',
  cargo: '`cargo generate-lockfile` writes Cargo.lock',
  bundler: '`bundle lock` writes Gemfile.lock',
  composer: '`composer update --lock` writes composer.lock',
};
/** Package managers with no lockfile of their own: their manifest names exact versions. */
const NO_LOCKFILE = new Set(['maven']);

/** GitHub Actions events that run a workflow for a pull request. */
const PULL_REQUEST_EVENTS = new Set(['pull_request', 'pull_request_target']);

/** npm's placeholder for a package without tests. */
const NPM_NO_TEST = /no test specified/;

/** The first `max` items, and how many more of `total` (default: all the items) there are. */
const list = (items: readonly string[], max = 5, total = items.length) =>
  total <= max || items.length <= max
    ? `${items.join(', ')}${total > items.length ? ` and ${total - items.length} more` : ''}`
    : `${items.slice(0, max).join(', ')} and ${total - max} more`;
const pct = (n: number, of: number) => Math.round((100 * n) / of);
const toolNames = (tools: KnowledgeTool[]) => list(tools.map((t) => t.name));
/** Where CI runs a tool, with the first task-runner chain that shows how when it goes through one. */
const ranWhere = (t: KnowledgeTool) =>
  t.enforced_via?.[0] ? `${list(t.enforced_in)} (${t.enforced_via[0]})` : list(t.enforced_in);
/** The first chain by which the CI file at `path` reaches one of `runners`, for the evidence. */
const chainFrom = (path: string, runners: KnowledgeTool[]) =>
  runners.flatMap((r) => r.enforced_via ?? []).find((c) => c.startsWith(`${path}: `));

type Judged = { result: CheckResult; evidence: Evidence; remedy?: string };

const unknown = (note: string, extra: Omit<Evidence, 'note'> = {}): Judged => ({
  result: 'unknown',
  evidence: { ...extra, note },
});

/** Why a fact is missing, in words; each check names it in its `unknown` note. */
function missing(facts: ScorecardFacts, fact: keyof ScorecardFacts['missing'], fallback: string): string {
  return facts.missing[fact] ?? fallback;
}

const NO_KNOWLEDGE = 'the repository knowledge was not read';
const NO_TREE = 'the repository tree was not read';
const NO_LEDGER = 'the findings ledger was not read';

function lockfileCommitted(facts: ScorecardFacts): Judged {
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE));
  const managers = k.content.package_managers;
  if (managers.length === 0)
    return unknown(
      'no package manager manifest was found (package.json, pyproject.toml, go.mod, Cargo.toml, …): svc cannot tell whether dependencies are locked',
    );
  const exempt = managers.filter((m) => NO_LOCKFILE.has(m.name));
  const locked = managers.filter((m) => m.lockfile !== null);
  // go.sum is absent both when it is not committed and when the module has no dependencies.
  const goUnsure = managers.filter((m) => m.name === 'go' && m.lockfile === null);
  const lacking = managers.filter((m) => m.lockfile === null && !NO_LOCKFILE.has(m.name) && m.name !== 'go');
  const numbers = { package_managers: managers.length, with_lockfile: locked.length };
  const exemptNote =
    exempt.length > 0 ? `; ${exempt.map((m) => m.manifest ?? m.name).join(', ')}: maven has no lockfile` : '';
  if (lacking.length > 0) {
    const named = lacking.map((m) => `${m.manifest ?? m.source} (${m.name})`);
    return {
      result: 'fail',
      evidence: {
        paths: lacking.map((m) => m.manifest ?? m.source),
        numbers,
        note: `no lockfile is committed beside ${list(named)}`,
      },
      remedy: `Commit a lockfile: ${lacking.map((m) => `${m.manifest ?? m.name}: ${LOCK_COMMAND[m.name] ?? 'commit the lockfile your package manager writes'}`).join('; ')}.`,
    };
  }
  if (goUnsure.length > 0)
    return unknown(
      `go.sum is absent beside ${list(goUnsure.map((m) => m.manifest ?? m.source))}: either it is not committed or the module has no dependencies, and svc does not read go.mod's requirements`,
      { paths: goUnsure.map((m) => m.manifest ?? m.source), numbers },
    );
  return {
    result: 'pass',
    evidence: {
      paths: locked.map((m) => m.lockfile as string),
      numbers,
      note: `${list(locked.map((m) => `${m.lockfile} (${m.name})`))}${exemptNote}`,
    },
  };
}

function runtimeDeclared(facts: ScorecardFacts): Judged {
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE));
  const runtimes = k.content.runtimes;
  const undeclared = k.gaps.filter((g) => g.code === 'runtime_version_unknown');
  const numbers = { runtimes_declared: runtimes.length, runtimes_without_version: undeclared.length };
  if (undeclared.length > 0)
    return {
      result: 'fail',
      evidence: { numbers, note: undeclared.map((g) => g.message).join('; ') },
    };
  if (runtimes.length > 0)
    return {
      result: 'pass',
      evidence: {
        paths: [...new Set(runtimes.map((r) => r.source.split('#')[0] as string))],
        numbers,
        note: list(runtimes.map((r) => `${r.name} ${r.version} (${r.source})`)),
      },
    };
  const languages = k.content.languages.map((l) => l.name);
  return unknown(
    languages.length > 0
      ? `the repository's languages (${list(languages)}) use no runtime svc knows to look for`
      : 'no source language was recognised in the repository',
    { numbers },
  );
}

function testsPresent(facts: ScorecardFacts): Judged {
  if (!facts.paths) return unknown(missing(facts, 'tree', NO_TREE));
  const tests: string[] = [];
  let sources = 0;
  for (const path of facts.paths) {
    const language = languageForPath(path);
    if (!language || UNTYPED.has(language)) continue;
    const role = roleOfPath(path);
    if (role === 'test') tests.push(path);
    else if (role === 'production') sources++;
  }
  const numbers = { test_files: tests.length, source_files: sources };
  if (sources === 0) return unknown('no production source file was recognised in the tree', { numbers });
  if (tests.length === 0)
    return {
      result: 'fail',
      evidence: {
        numbers,
        note: `${sources} source files and no test file (by each language's test conventions)`,
      },
    };
  return {
    result: 'pass',
    evidence: {
      paths: tests.slice(0, 10),
      numbers,
      note: `${tests.length} test files beside ${sources} source files`,
    },
  };
}

/** Whether a CI file runs for pull requests. */
function runsOnPullRequests(w: KnowledgeCiWorkflow): boolean {
  // Other providers build every pushed branch and merge request unless told otherwise.
  if (w.provider !== 'github_actions') return true;
  return w.triggers.some((t) => PULL_REQUEST_EVENTS.has(t));
}

/** The test runners (or the `test` script) a CI file runs, directly or through package.json scripts. */
export function testsRunBy(
  w: KnowledgeCiWorkflow,
  runners: KnowledgeTool[],
  rootScripts: Record<string, string>,
): string[] {
  const reached = scriptsReachedFrom(w.runs, rootScripts);
  const script = (at: string) =>
    at.startsWith('package.json#scripts.') && reached.has(at.slice('package.json#scripts.'.length));
  const out = runners
    .filter((r) => r.enforced_in.some((at) => at === w.path || script(at)))
    .map((r) => r.name);
  const test = rootScripts.test;
  if (reached.has('test') && test !== undefined && !NPM_NO_TEST.test(test) && out.length === 0)
    out.push('package.json#scripts.test');
  return out;
}

function ciRunsTestsOnPullRequests(facts: ScorecardFacts): Judged {
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE));
  const workflows = k.content.ci;
  if (workflows.length === 0)
    return {
      result: 'fail',
      evidence: {
        numbers: { ci_files: 0 },
        note: 'no CI configuration was found (.github/workflows/*.yml, .gitlab-ci.yml, .circleci/config.yml, …)',
      },
    };
  const runners = k.content.tooling.test_runners;
  const viaScripts = runners.some((r) => r.enforced_in.some((at) => at.startsWith('package.json#')));
  if (facts.rootScripts === null && viaScripts)
    return unknown(
      `a test runner is run through package.json scripts, and svc could not read them to tell which CI file runs them: ${missing(facts, 'scripts', 'package.json was not read')}`,
    );
  const scripts = facts.rootScripts ?? {};
  const judged = workflows.map((w) => ({
    w,
    tests: testsRunBy(w, runners, scripts),
    onPr: runsOnPullRequests(w),
  }));
  const numbers = {
    ci_files: workflows.length,
    ci_files_on_pull_requests: judged.filter((j) => j.onPr).length,
    ci_files_running_tests: judged.filter((j) => j.tests.length > 0).length,
  };
  const good = judged.filter((j) => j.onPr && j.tests.length > 0);
  if (good.length > 0)
    return {
      result: 'pass',
      evidence: {
        paths: good.map((j) => j.w.path),
        numbers,
        note: good
          .map(
            (j) =>
              `${j.w.path} runs ${list(j.tests)} ${j.w.provider === 'github_actions' ? `on ${j.w.triggers.filter((t) => PULL_REQUEST_EVENTS.has(t)).join(', ')}` : `(${j.w.provider} builds every branch and merge request)`}${((c) => (c ? ` (${c})` : ''))(chainFrom(j.w.path, runners))}`,
          )
          .join('; '),
      },
    };
  const notes = judged.map((j) =>
    j.tests.length > 0
      ? `${j.w.path} runs ${list(j.tests)} but only on ${j.w.triggers.join(', ') || 'no event it names'}`
      : `${j.w.path} runs no test runner svc recognises`,
  );
  if (runners.length === 0) notes.push('no test runner was found in the repository');
  return {
    result: 'fail',
    evidence: { paths: workflows.map((w) => w.path), numbers, note: notes.join('; ') },
    remedy:
      judged.some((j) => j.tests.length > 0) && workflows.some((w) => w.provider === 'github_actions')
        ? 'Add `pull_request` to the `on:` triggers of the workflow that runs the tests.'
        : CHECKS.ci_runs_tests_on_pull_requests.remedy,
  };
}

function enforcedTool(facts: ScorecardFacts, kind: 'linters' | 'formatters', what: string): Judged {
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE));
  const tools = k.content.tooling[kind];
  const enforced = tools.filter((t) => t.enforced_in.length > 0);
  const numbers = { [kind]: tools.length, enforced: enforced.length };
  if (enforced.length > 0)
    return {
      result: 'pass',
      evidence: {
        paths: [...new Set(enforced.flatMap((t) => t.enforced_in))],
        numbers,
        note: enforced.map((t) => `${t.name} runs in ${ranWhere(t)}`).join('; '),
      },
    };
  if (tools.length > 0)
    return {
      result: 'fail',
      evidence: {
        paths: tools.flatMap((t) => (t.config ? [t.config.split('#')[0] as string] : [])),
        numbers,
        note: `${toolNames(tools)} ${tools.length === 1 ? 'is' : 'are'} configured (${list(tools.map((t) => t.source))}) but no CI file runs ${tools.length === 1 ? 'it' : 'them'}`,
      },
      remedy: `Run ${toolNames(tools)} in a CI step (directly, or through a package.json script CI runs).`,
    };
  return { result: 'fail', evidence: { numbers, note: `no ${what} was found in the repository` } };
}

function typeChecking(facts: ScorecardFacts): Judged {
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE));
  const languages = k.content.languages.filter((l) => !UNTYPED.has(l.name));
  const total = languages.reduce((n, l) => n + l.files, 0);
  const main = languages.filter((l) => total > 0 && l.files / total >= MAIN_LANGUAGE_SHARE);
  if (main.length === 0) return unknown('no source language was recognised in the repository');
  const checkers = k.content.tooling.type_checkers;
  const numbers = Object.fromEntries(main.map((l) => [`${l.name}_files`, l.files]));
  const passed: string[] = [];
  const failed: string[] = [];
  const undecided: string[] = [];
  const paths: string[] = [];
  for (const { name } of main) {
    if (COMPILED.has(name)) {
      passed.push(`${name} is checked by its compiler`);
      continue;
    }
    const known = TYPE_CHECKERS[name];
    if (!known) {
      undecided.push(`svc does not detect type checkers for ${name}`);
      continue;
    }
    const present = checkers.filter((c) => known.includes(c.name));
    const enforced = present.filter((c) => c.enforced_in.length > 0);
    if (enforced.length > 0) {
      passed.push(enforced.map((c) => `${name}: ${c.name} runs in ${ranWhere(c)}`).join('; '));
      paths.push(...enforced.flatMap((c) => c.enforced_in));
    } else if (present.length > 0) {
      failed.push(
        `${name}: ${toolNames(present)} is configured (${list(present.map((c) => c.source))}) but no CI file runs it`,
      );
    } else {
      failed.push(`${name}: no type checker (${known.join(' or ')}) was found`);
    }
  }
  const note = [...failed, ...undecided, ...passed].join('; ');
  const evidence = { ...(paths.length > 0 ? { paths: [...new Set(paths)] } : {}), numbers, note };
  if (failed.length > 0) return { result: 'fail', evidence };
  if (undecided.length > 0) return { result: 'unknown', evidence };
  return { result: 'pass', evidence };
}

function codeowners(facts: ScorecardFacts): Judged {
  if (!facts.paths) return unknown(missing(facts, 'tree', NO_TREE));
  const paths = new Set(facts.paths);
  const found = CODEOWNERS_PATHS.filter((p) => paths.has(p));
  if (found.length > 0)
    return { result: 'pass', evidence: { paths: found, note: `${found.join(', ')} is committed` } };
  return {
    result: 'fail',
    evidence: { note: `no CODEOWNERS file at ${CODEOWNERS_PATHS.join(', ')}` },
  };
}

function reviewCheckRequired(facts: ScorecardFacts): Judged {
  const branch = facts.host.defaultBranch ?? 'the default branch';
  const required = facts.requiredChecks;
  if (required === null)
    return unknown(
      missing(
        facts,
        'required_checks',
        facts.host.kind === 'local'
          ? 'the local code host has no branch protection'
          : `the code host did not say which checks protect ${branch}`,
      ),
    );
  const numbers = { required_checks: required.length };
  if (required.includes(REVIEW_CHECK_NAME))
    return {
      result: 'pass',
      evidence: { numbers, note: `branch protection of ${branch} requires ${list(required)}` },
    };
  return {
    result: 'fail',
    evidence: {
      numbers,
      note:
        required.length > 0
          ? `branch protection of ${branch} requires ${list(required)}, not ${REVIEW_CHECK_NAME}`
          : `branch protection of ${branch} requires no status check`,
    },
  };
}

const where = (f: FindingRef) => `${f.path}:${f.line}`;
const onPr = (f: FindingRef) => (f.pull_request !== null ? ` on #${f.pull_request}` : '');

function noOpenP0(facts: ScorecardFacts): Judged {
  const ledger = facts.ledger;
  if (!ledger) return unknown(missing(facts, 'ledger', NO_LEDGER));
  const branch = facts.host.defaultBranch ?? 'the default branch';
  const numbers = { merged_pull_requests: ledger.mergedPullRequests, open_p0: ledger.openP0Total };
  if (ledger.openP0Total > 0)
    return {
      result: 'fail',
      evidence: {
        paths: [...new Set(ledger.openP0OnMerged.map(where))],
        numbers,
        note: `${ledger.openP0Total} P0 finding(s) were open when their pull request merged into ${branch}: ${list(
          ledger.openP0OnMerged.map((f) => `${f.id} ${f.rule} at ${where(f)}${onPr(f)}`),
          5,
          ledger.openP0Total,
        )}`,
      },
    };
  if (ledger.mergedPullRequests === 0)
    return unknown(`no pull request svc watched has merged yet, so svc has not seen what reached ${branch}`, {
      numbers,
    });
  return {
    result: 'pass',
    evidence: {
      numbers,
      note: `none of the ${ledger.mergedPullRequests} merged pull request(s) left a P0 open (commit-range reviews are not counted: svc cannot tell which branch a range belongs to)`,
    },
  };
}

function secretsAbsent(facts: ScorecardFacts): Judged {
  const ledger = facts.ledger;
  if (!ledger) return unknown(missing(facts, 'ledger', NO_LEDGER));
  if (ledger.reviews === 0 || !ledger.firstReviewAt)
    return unknown('no review has run yet: svc has scanned no change of this repository', {
      numbers: { reviews: 0 },
    });
  const counted = ledger.secretFindings;
  const dismissed = ledger.secretDismissed;
  const numbers = {
    reviews: ledger.reviews,
    secret_findings: ledger.secretTotal,
    dismissed_secret_findings: dismissed,
  };
  const since = ledger.firstReviewAt.toISOString().slice(0, 10);
  const scope = `history before svc's first review (${since}) was not scanned`;
  if (ledger.secretTotal > 0) {
    const named = list(
      counted.map((f) => `${f.rule} at ${where(f)}${onPr(f)}, ${f.status}`),
      5,
      ledger.secretTotal,
    );
    return {
      result: 'fail',
      evidence: {
        paths: [...new Set(counted.map(where))],
        numbers,
        note: `${ledger.secretTotal} credential(s) were found in reviewed changes (${named}); a fixed one stays in the history. ${scope}`,
      },
    };
  }
  return {
    result: 'pass',
    evidence: {
      numbers,
      note: `no credential was found in ${ledger.reviews} review(s) since ${since}${dismissed > 0 ? ` (${dismissed} dismissed as not a secret)` : ''}; ${scope}`,
    },
  };
}

const tooFew = (what: string, n: number) =>
  `too few ${what} in ${WINDOW_DAYS} days (${n}; at least ${MIN_SAMPLE} are needed for a rate to mean anything)`;

function fixRate(facts: ScorecardFacts): Judged {
  const ledger = facts.ledger;
  if (!ledger) return unknown(missing(facts, 'ledger', NO_LEDGER));
  const c = ledger.created;
  const numbers = { findings: c.total, fixed: c.fixed, dismissed: c.dismissed, open: c.open };
  if (c.total < MIN_SAMPLE) return unknown(tooFew('findings', c.total), { numbers });
  const rate = c.fixed / c.total;
  const note = `${c.fixed} of ${c.total} findings created since ${ledger.since.toISOString().slice(0, 10)} were fixed (${pct(c.fixed, c.total)}%; ${c.dismissed} dismissed, ${c.open} open); at least ${FIX_RATE_MIN * 100}% is expected`;
  return {
    result: rate >= FIX_RATE_MIN ? 'pass' : 'fail',
    evidence: { numbers: { ...numbers, fix_rate_pct: pct(c.fixed, c.total) }, note },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function medianTimeToFix(facts: ScorecardFacts): Judged {
  const ledger = facts.ledger;
  if (!ledger) return unknown(missing(facts, 'ledger', NO_LEDGER));
  const n = ledger.fixHours.length;
  if (n < MIN_SAMPLE) return unknown(tooFew('fixed findings', n), { numbers: { fixed: n } });
  const hours = Math.round(median(ledger.fixHours) * 10) / 10;
  return {
    result: hours <= MEDIAN_FIX_HOURS_MAX ? 'pass' : 'fail',
    evidence: {
      numbers: { fixed: n, median_hours: hours },
      note: `the ${n} findings fixed since ${ledger.since.toISOString().slice(0, 10)} took a median of ${hours} hours from report to fix; at most ${MEDIAN_FIX_HOURS_MAX} is expected`,
    },
  };
}

function dismissalRatePerRule(facts: ScorecardFacts): Judged {
  const ledger = facts.ledger;
  if (!ledger) return unknown(missing(facts, 'ledger', NO_LEDGER));
  const eligible = ledger.rules.filter((r) => r.findings >= MIN_SAMPLE);
  if (eligible.length === 0) {
    const most = [...ledger.rules].sort((a, b) => b.findings - a.findings)[0];
    return unknown(
      `no rule had at least ${MIN_SAMPLE} findings in ${WINDOW_DAYS} days${most ? ` (most: ${most.rule} with ${most.findings})` : ' (no finding at all)'}`,
      { numbers: { rules: ledger.rules.length } },
    );
  }
  const noisy = eligible.filter((r) => r.dismissed / r.findings >= RULE_DISMISSAL_MAX);
  const numbers: Record<string, number> = { rules_measured: eligible.length, noisy_rules: noisy.length };
  for (const r of noisy) numbers[`dismissed_pct:${r.rule}`] = pct(r.dismissed, r.findings);
  const describe = (r: { rule: string; findings: number; dismissed: number }) =>
    `${r.rule}: ${r.dismissed} of ${r.findings} dismissed (${pct(r.dismissed, r.findings)}%)`;
  if (noisy.length > 0)
    return {
      result: 'fail',
      evidence: {
        numbers,
        note: `dismissed in at least ${RULE_DISMISSAL_MAX * 100}% of their findings since ${ledger.since.toISOString().slice(0, 10)}: ${list(noisy.map(describe))}`,
      },
      remedy: `Tune ${list(noisy.map((r) => r.rule))}: in .svc.yml \`rules: { ${noisy[0]?.rule}: off }\` (or \`{ severity: P2 }\`), or record a learning scoped to it.`,
    };
  return {
    result: 'pass',
    evidence: {
      numbers,
      note: `each of the ${eligible.length} rule(s) with at least ${MIN_SAMPLE} findings was dismissed in under ${RULE_DISMISSAL_MAX * 100}% of them: ${list(eligible.map(describe))}`,
    },
  };
}

function svcJsonDeclared(facts: ScorecardFacts): Judged {
  if (!facts.paths) return unknown(missing(facts, 'tree', NO_TREE));
  if (!facts.paths.includes('svc.json'))
    return { result: 'fail', evidence: { note: 'no svc.json at the repository root' } };
  const k = facts.knowledge;
  if (!k) return unknown(missing(facts, 'knowledge', NO_KNOWLEDGE), { paths: ['svc.json'] });
  const invalid = k.gaps.find((g) => g.code === 'repo_knowledge_file_invalid');
  if (invalid || !k.content.declared)
    return {
      result: 'fail',
      evidence: { paths: ['svc.json'], note: invalid?.message ?? 'svc.json was not applied' },
      remedy:
        'Fix svc.json so it parses and matches the knowledge fields (runtimes, package_managers, tooling, conventions).',
    };
  const keys = Object.keys(k.content.declared);
  return {
    result: 'pass',
    evidence: {
      paths: ['svc.json'],
      note: `svc.json declares ${keys.length > 0 ? list(keys) : 'nothing yet'}`,
    },
  };
}

const JUDGES: Record<CheckId, (facts: ScorecardFacts) => Judged> = {
  lockfile_committed: lockfileCommitted,
  runtime_declared: runtimeDeclared,
  tests_present: testsPresent,
  ci_runs_tests_on_pull_requests: ciRunsTestsOnPullRequests,
  linter_enforced: (f) => enforcedTool(f, 'linters', 'linter'),
  formatter_enforced: (f) => enforcedTool(f, 'formatters', 'formatter'),
  type_checking: typeChecking,
  codeowners,
  review_check_required: reviewCheckRequired,
  no_open_p0_on_default_branch: noOpenP0,
  secrets_absent: secretsAbsent,
  fix_rate_30d: fixRate,
  median_time_to_fix_30d: medianTimeToFix,
  dismissal_rate_per_rule: dismissalRatePerRule,
  svc_json_declared: svcJsonDeclared,
};

/** Every check of the catalogue, judged from the facts, in catalogue order. */
export function evaluateChecks(facts: ScorecardFacts): CheckOutcome[] {
  return CHECK_IDS.map((id) => {
    const definition = CHECKS[id];
    const judged = JUDGES[id](facts);
    return {
      check: id,
      title: definition.title,
      category: definition.category,
      weight: definition.weight,
      result: judged.result,
      evidence: judged.evidence,
      remedy: judged.remedy ?? definition.remedy,
    };
  });
}

/**
 * The score (the weighted share of decided checks that pass; unknown ones are left out of it and
 * counted), the level reached (the highest whose checks, and every lower level's, pass) and what
 * the next level still needs (its checks that fail or are unknown).
 */
export function summarize(outcomes: readonly CheckOutcome[]): ScorecardSummary {
  const byId = new Map(outcomes.map((o) => [o.check, o]));
  const counts = { pass: 0, fail: 0, unknown: 0 };
  let decided = 0;
  let passed = 0;
  for (const o of outcomes) {
    counts[o.result]++;
    if (o.result === 'unknown') continue;
    decided += o.weight;
    if (o.result === 'pass') passed += o.weight;
  }
  let level = 0;
  for (const l of LEVELS) {
    if (!l.requires.every((id) => byId.get(id)?.result === 'pass')) break;
    level = l.level;
  }
  const next = LEVELS.find((l) => l.level === level + 1);
  return {
    score: decided === 0 ? null : Math.round((100 * passed) / decided),
    level: { level, name: levelName(level) },
    next_level: next
      ? {
          level: next.level,
          name: next.name,
          needs: next.requires.filter((id) => byId.get(id)?.result !== 'pass'),
        }
      : null,
    counts,
    unknown: outcomes.filter((o) => o.result === 'unknown').map((o) => o.check),
  };
}
