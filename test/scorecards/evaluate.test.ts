/**
 * The scorecard's judgement, from facts to check results, score and level: each result names
 * its evidence, a fact that could not be read is `unknown` with the reason, and small samples
 * are not turned into rates.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_IDS, CHECKS, type CheckId, LEVELS } from '../../src/scorecards/definitions';
import { evaluateChecks, MIN_SAMPLE, median, summarize } from '../../src/scorecards/evaluate';
import type { CheckOutcome, FindingRef } from '../../src/scorecards/types';
import { BARE_REPO, emptyLedger, factsFor, GUARDED_REPO, NOW } from './facts';

const byCheck = (outcomes: CheckOutcome[]) => new Map(outcomes.map((o) => [o.check, o]));
const outcome = (outcomes: CheckOutcome[], id: CheckId) => byCheck(outcomes).get(id) as CheckOutcome;
const HOUR = 3_600_000;

/** The score from first principles: weighted pass share of the decided checks. */
function expectedScore(outcomes: CheckOutcome[]): number | null {
  const decided = outcomes.filter((o) => o.result !== 'unknown');
  const total = decided.reduce((n, o) => n + CHECKS[o.check].weight, 0);
  if (total === 0) return null;
  const passed = decided.filter((o) => o.result === 'pass').reduce((n, o) => n + CHECKS[o.check].weight, 0);
  return Math.round((100 * passed) / total);
}

function finding(over: Partial<FindingRef> = {}): FindingRef {
  return {
    id: 'fnd_1',
    path: 'src/a.ts',
    line: 3,
    rule: 'secrets/aws',
    status: 'open',
    pull_request: 4,
    ...over,
  };
}

describe('the catalogue and the ladder', () => {
  it('has at least five cumulative levels, every check in exactly one', () => {
    expect(LEVELS.length).toBeGreaterThanOrEqual(5);
    expect(LEVELS.map((l) => l.level)).toEqual(LEVELS.map((_, i) => i + 1));
    const required = LEVELS.flatMap((l) => l.requires);
    expect([...required].sort()).toEqual([...CHECK_IDS].sort());
    for (const id of CHECK_IDS) expect(CHECKS[id].remedy.length, id).toBeGreaterThan(20);
  });
});

describe('a repository lacking CI and a lockfile', () => {
  const outcomes = evaluateChecks(factsFor(BARE_REPO));
  const summary = summarize(outcomes);

  it('fails the lockfile, runtime, CI and tests checks, naming what it found', () => {
    expect(outcome(outcomes, 'lockfile_committed')).toMatchObject({
      result: 'fail',
      evidence: { paths: ['package.json'], numbers: { package_managers: 1, with_lockfile: 0 } },
    });
    expect(outcome(outcomes, 'lockfile_committed').remedy).toContain('package-lock.json');
    expect(outcome(outcomes, 'runtime_declared')).toMatchObject({
      result: 'fail',
      evidence: { note: expect.stringContaining('states no node version') },
    });
    expect(outcome(outcomes, 'ci_runs_tests_on_pull_requests')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { ci_files: 0 }, note: expect.stringContaining('no CI configuration') },
    });
    expect(outcome(outcomes, 'tests_present')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { test_files: 0, source_files: 2 } },
    });
    expect(outcome(outcomes, 'svc_json_declared').result).toBe('fail');
    expect(outcome(outcomes, 'codeowners').result).toBe('fail');
  });

  it('cannot tell branch protection on the local host, nor judge a ledger without reviews', () => {
    expect(outcome(outcomes, 'review_check_required')).toMatchObject({
      result: 'unknown',
      evidence: { note: 'the local code host has no branch protection' },
    });
    expect(outcome(outcomes, 'secrets_absent')).toMatchObject({
      result: 'unknown',
      evidence: { note: expect.stringContaining('no review has run yet') },
    });
    expect(outcome(outcomes, 'no_open_p0_on_default_branch').result).toBe('unknown');
    expect(outcome(outcomes, 'fix_rate_30d').evidence.note).toMatch(/too few findings in 30 days \(0;/);
  });

  it('scores low at level 0, leaving the unknown checks out of the score, and names what level 1 needs', () => {
    expect(summary.score).toBe(expectedScore(outcomes));
    expect(summary.score).toBeLessThan(30);
    expect(summary.level).toEqual({ level: 0, name: 'None' });
    expect(summary.next_level).toEqual({
      level: 1,
      name: 'Tracked',
      needs: ['lockfile_committed', 'runtime_declared'],
    });
    expect(summary.counts.pass + summary.counts.fail + summary.counts.unknown).toBe(CHECK_IDS.length);
    expect(summary.unknown).toContain('review_check_required');
  });
});

describe('a guarded repository', () => {
  it('reaches level 3 through its lockfile, engines, tests, CI on pull requests, biome and tsc', () => {
    const outcomes = evaluateChecks(factsFor(GUARDED_REPO));
    for (const id of [
      'lockfile_committed',
      'runtime_declared',
      'tests_present',
      'ci_runs_tests_on_pull_requests',
      'linter_enforced',
      'formatter_enforced',
      'type_checking',
      'codeowners',
    ] as const) {
      expect(outcome(outcomes, id).result, `${id}: ${outcome(outcomes, id).evidence.note}`).toBe('pass');
    }
    expect(outcome(outcomes, 'ci_runs_tests_on_pull_requests').evidence).toMatchObject({
      paths: ['.github/workflows/ci.yml'],
      note: expect.stringContaining('on pull_request'),
    });
    expect(outcome(outcomes, 'lockfile_committed').evidence.paths).toEqual(['package-lock.json']);
    expect(outcome(outcomes, 'linter_enforced').evidence.paths).toEqual(['package.json#scripts.lint']);
    const summary = summarize(outcomes);
    expect(summary.level).toEqual({ level: 3, name: 'Guarded' });
    expect(summary.next_level).toEqual({
      level: 4,
      name: 'Reviewed',
      needs: ['review_check_required', 'no_open_p0_on_default_branch'],
    });
    expect(summary.score).toBe(expectedScore(outcomes));
  });

  it('reaches level 4 when the host requires Service / Review and merged pull requests left no P0', () => {
    const facts = factsFor(GUARDED_REPO, {
      host: { kind: 'github', defaultBranch: 'main' },
      requiredChecks: ['build', 'Service / Review'],
      ledger: emptyLedger({
        reviews: 3,
        firstReviewAt: new Date(NOW.getTime() - 10 * 24 * HOUR),
        mergedPullRequests: 2,
      }),
    });
    const outcomes = evaluateChecks(facts);
    expect(outcome(outcomes, 'review_check_required')).toMatchObject({
      result: 'pass',
      evidence: { numbers: { required_checks: 2 }, note: expect.stringContaining('build, Service / Review') },
    });
    expect(outcome(outcomes, 'no_open_p0_on_default_branch')).toMatchObject({
      result: 'pass',
      evidence: { numbers: { merged_pull_requests: 2, open_p0: 0 } },
    });
    expect(summarize(outcomes).level.level).toBe(4);

    const unprotected = evaluateChecks({ ...facts, requiredChecks: ['build'] });
    expect(outcome(unprotected, 'review_check_required')).toMatchObject({
      result: 'fail',
      evidence: { note: 'branch protection of main requires build, not Service / Review' },
    });
    expect(summarize(unprotected).level.level).toBe(3);
  });

  it('fails CI on pull requests when the workflow that runs the tests triggers only on push', () => {
    const files = {
      ...GUARDED_REPO,
      '.github/workflows/ci.yml':
        GUARDED_REPO['.github/workflows/ci.yml']?.replace('on: [pull_request]', 'on: [push]') ?? '',
    };
    const ci = outcome(evaluateChecks(factsFor(files)), 'ci_runs_tests_on_pull_requests');
    expect(ci.result).toBe('fail');
    expect(ci.evidence.note).toContain('.github/workflows/ci.yml runs vitest but only on push');
    expect(ci.remedy).toContain('pull_request');
  });

  it('says which fact is missing rather than guessing', () => {
    const facts = factsFor(GUARDED_REPO, {
      missing: { knowledge: 'the repository knowledge could not be refreshed at c0ffee: boom' },
    });
    const outcomes = evaluateChecks({
      ...facts,
      knowledge: null,
      paths: null,
      missing: { ...facts.missing, tree: 'the tree of acme/shop could not be read: gone (not_found)' },
    });
    for (const id of ['lockfile_committed', 'ci_runs_tests_on_pull_requests', 'type_checking'] as const)
      expect(outcome(outcomes, id)).toMatchObject({
        result: 'unknown',
        evidence: { note: expect.stringContaining('boom') },
      });
    for (const id of ['tests_present', 'codeowners', 'svc_json_declared'] as const)
      expect(outcome(outcomes, id).evidence.note).toContain('could not be read: gone');
  });
});

describe('type checking', () => {
  it('passes compiled languages through their compiler', () => {
    const outcomes = evaluateChecks(
      factsFor({
        'go.mod': 'module x\n\ngo 1.22\n',
        'main.go': 'package main\n',
        'main_test.go': 'package main\n',
      }),
    );
    expect(outcome(outcomes, 'type_checking')).toMatchObject({
      result: 'pass',
      evidence: { note: 'go is checked by its compiler', numbers: { go_files: 2 } },
    });
    // No go.sum: svc cannot tell a missing lockfile from a module without dependencies.
    expect(outcome(outcomes, 'lockfile_committed').result).toBe('unknown');
  });

  it('fails TypeScript whose tsc is configured but not run by CI', () => {
    const files = {
      ...GUARDED_REPO,
      'package.json': GUARDED_REPO['package.json']?.replace(',"typecheck":"tsc --noEmit"', '') ?? '',
    };
    const typed = outcome(evaluateChecks(factsFor(files)), 'type_checking');
    expect(typed.result).toBe('fail');
    expect(typed.evidence.note).toContain(
      'typescript: tsc is configured (tsconfig.json) but no CI file runs it',
    );
  });
});

describe('the ledger checks', () => {
  const since = new Date(NOW.getTime() - 30 * 24 * HOUR);
  const reviewed = { reviews: 12, firstReviewAt: new Date('2026-05-01T00:00:00Z') };

  it('secrets: pass says what was not scanned; a found credential fails even when fixed; dismissed ones do not count', () => {
    const clean = outcome(
      evaluateChecks(factsFor(BARE_REPO, { ledger: emptyLedger(reviewed) })),
      'secrets_absent',
    );
    expect(clean.result).toBe('pass');
    expect(clean.evidence.note).toContain("history before svc's first review (2026-05-01) was not scanned");
    expect(clean.evidence.numbers).toEqual({ reviews: 12, secret_findings: 0, dismissed_secret_findings: 0 });

    const leaked = outcome(
      evaluateChecks(
        factsFor(BARE_REPO, {
          ledger: emptyLedger({
            ...reviewed,
            secretFindings: [finding({ status: 'fixed' })],
            secretTotal: 1,
            secretDismissed: 1,
          }),
        }),
      ),
      'secrets_absent',
    );
    expect(leaked).toMatchObject({
      result: 'fail',
      evidence: { paths: ['src/a.ts:3'], numbers: { secret_findings: 1, dismissed_secret_findings: 1 } },
    });
    expect(leaked.evidence.note).toContain('secrets/aws at src/a.ts:3 on #4, fixed');
  });

  it('open P0 on merged pull requests fails, naming them', () => {
    const p0 = finding({
      id: 'fnd_p0',
      rule: 'security/sql-injection',
      path: 'src/db.ts',
      line: 9,
      pull_request: 7,
    });
    const result = outcome(
      evaluateChecks(
        factsFor(BARE_REPO, {
          ledger: emptyLedger({ mergedPullRequests: 5, openP0OnMerged: [p0], openP0Total: 1 }),
        }),
      ),
      'no_open_p0_on_default_branch',
    );
    expect(result).toMatchObject({
      result: 'fail',
      evidence: { paths: ['src/db.ts:9'], numbers: { open_p0: 1 } },
    });
    expect(result.evidence.note).toContain('fnd_p0 security/sql-injection at src/db.ts:9 on #7');

    // Only some are listed; the count and the note say how many there are in all.
    const listed = Array.from({ length: 20 }, (_, i) => finding({ id: `fnd_${i}`, line: i + 1 }));
    const many = outcome(
      evaluateChecks(
        factsFor(BARE_REPO, {
          ledger: emptyLedger({ mergedPullRequests: 5, openP0OnMerged: listed, openP0Total: 31 }),
        }),
      ),
      'no_open_p0_on_default_branch',
    );
    expect(many.evidence.numbers?.open_p0).toBe(31);
    expect(many.evidence.note).toMatch(
      /^31 P0 finding\(s\).*fnd_4 secrets\/aws at src\/a\.ts:5 on #4 and 26 more$/,
    );
  });

  it('rates need at least MIN_SAMPLE findings; above it they pass or fail on the named thresholds', () => {
    const few = evaluateChecks(
      factsFor(BARE_REPO, {
        ledger: emptyLedger({
          since,
          created: { total: 3, open: 1, fixed: 2, dismissed: 0 },
          fixHours: [1, 2],
        }),
      }),
    );
    expect(outcome(few, 'fix_rate_30d')).toMatchObject({
      result: 'unknown',
      evidence: {
        note: `too few findings in 30 days (3; at least ${MIN_SAMPLE} are needed for a rate to mean anything)`,
      },
    });
    expect(outcome(few, 'median_time_to_fix_30d').evidence.note).toMatch(
      /too few fixed findings in 30 days \(2;/,
    );

    const fixHours = [2, 5, 80, 100, 200, 300];
    const many = evaluateChecks(
      factsFor(BARE_REPO, {
        ledger: emptyLedger({
          since,
          created: { total: 10, open: 3, fixed: 3, dismissed: 4 },
          fixHours,
          rules: [
            { rule: 'security/weak-hash', findings: 6, dismissed: 4 },
            { rule: 'correctness/debug-statement', findings: 5, dismissed: 0 },
            { rule: 'secrets/aws', findings: 1, dismissed: 1 },
          ],
        }),
      }),
    );
    expect(outcome(many, 'fix_rate_30d')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { findings: 10, fixed: 3, dismissed: 4, open: 3, fix_rate_pct: 30 } },
    });
    expect(outcome(many, 'median_time_to_fix_30d')).toMatchObject({
      result: 'fail',
      evidence: { numbers: { fixed: 6, median_hours: median(fixHours) } },
    });
    const noisy = outcome(many, 'dismissal_rate_per_rule');
    expect(noisy).toMatchObject({
      result: 'fail',
      evidence: { numbers: { rules_measured: 2, noisy_rules: 1, 'dismissed_pct:security/weak-hash': 67 } },
    });
    expect(noisy.evidence.note).toContain('security/weak-hash: 4 of 6 dismissed (67%)');
    expect(noisy.remedy).toContain('security/weak-hash');

    const quick = evaluateChecks(
      factsFor(BARE_REPO, {
        ledger: emptyLedger({
          since,
          created: { total: 6, open: 1, fixed: 5, dismissed: 0 },
          fixHours: [1, 2, 3, 4, 80],
        }),
      }),
    );
    expect(outcome(quick, 'fix_rate_30d').result).toBe('pass');
    expect(outcome(quick, 'median_time_to_fix_30d')).toMatchObject({
      result: 'pass',
      evidence: { numbers: { median_hours: 3 } },
    });
  });
});

describe('svc.json', () => {
  it('passes a valid declaration and fails an invalid one with the reason', () => {
    const valid = outcome(
      evaluateChecks(factsFor({ ...BARE_REPO, 'svc.json': '{"runtimes":[{"name":"node","version":"22"}]}' })),
      'svc_json_declared',
    );
    expect(valid).toMatchObject({
      result: 'pass',
      evidence: { paths: ['svc.json'], note: 'svc.json declares runtimes' },
    });
    const invalid = outcome(
      evaluateChecks(factsFor({ ...BARE_REPO, 'svc.json': '{"runtimes": 3' })),
      'svc_json_declared',
    );
    expect(invalid.result).toBe('fail');
    expect(invalid.evidence.note).toContain('not valid JSON');
  });
});
