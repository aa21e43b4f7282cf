/**
 * Every run failure class of the spec either has a producer in svc or is declared not applicable,
 * with its reason (src/core/failures.ts). The producers below are where each class is raised; the
 * test reads the source, so a class whose producer goes away, or a not-applicable class that
 * gains one, fails here until this list and RUN_FAILURES_NOT_APPLICABLE say so. Each producer's
 * behaviour is tested where it lives (the test named beside it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  RUN_FAILURE_CODES,
  RUN_FAILURE_REMEDY,
  RUN_FAILURES_NOT_APPLICABLE,
  type RunFailureCode,
} from '../../src/core/failures';

/** Where each produced class is raised (src/...), and the test that makes it happen. */
const PRODUCERS: Partial<Record<RunFailureCode, { files: string[]; test: string }>> = {
  provider_transient: { files: ['reviewers/llm/errors.ts'], test: 'test/reviewers/llm/engine.test.ts' },
  provider_terminal: { files: ['reviewers/llm/errors.ts'], test: 'test/reviewers/llm/engine.test.ts' },
  provider_rate_limited: { files: ['reviewers/llm/errors.ts'], test: 'test/reviewers/llm/engine.test.ts' },
  provider_auth_failed: {
    files: ['reviewers/llm/errors.ts', 'reviewers/llm/providers.ts'],
    test: 'test/reviewers/llm/engine.test.ts',
  },
  model_not_available: {
    files: ['reviewers/llm/errors.ts', 'reviewers/llm/providers.ts'],
    test: 'test/reviewers/llm/engine.test.ts',
  },
  tool_timeout: { files: ['review/run-review.ts'], test: 'test/engine/tool-failures.test.ts' },
  tool_failed: { files: ['review/run-review.ts'], test: 'test/engine/tasks-operations.test.ts' },
  instruction_timeout: { files: ['reviewers/llm/errors.ts'], test: 'test/reviewers/llm/stream.test.ts' },
  missing_expected_tool: { files: ['review/run-review.ts'], test: 'test/engine/tool-failures.test.ts' },
  payload_contract_violation: {
    files: ['reviewers/llm/errors.ts'],
    test: 'test/reviewers/llm/engine.test.ts',
  },
  queue_pickup_timeout: { files: ['engine/sweeper.ts'], test: 'test/engine/engine.test.ts' },
  run_liveness_timeout: { files: ['engine/execution.ts'], test: 'test/engine/engine.test.ts' },
  run_never_started: { files: ['engine/sweeper.ts'], test: 'test/engine/engine.test.ts' },
  run_evicted_by_deploy: { files: ['engine/worker.ts'], test: 'test/engine/engine.test.ts' },
  run_invocation_died: { files: ['engine/sweeper.ts'], test: 'test/engine/engine.test.ts' },
  backend_unavailable: { files: ['engine/worker.ts'], test: 'test/engine/db-connections.test.ts' },
  backend_wall_clock_timeout: { files: ['engine/execution.ts'], test: 'test/engine/engine.test.ts' },
  stream_transport_failed: { files: ['reviewers/llm/errors.ts'], test: 'test/reviewers/llm/stream.test.ts' },
  project_paused: { files: ['engine/brakes.ts'], test: 'test/engine/engine.test.ts' },
  project_run_mode_unreadable: { files: ['engine/brakes.ts'], test: 'test/engine/engine.test.ts' },
  spend_cap_reached: { files: ['engine/brakes.ts'], test: 'test/engine/engine.test.ts' },
  budget_exceeded: { files: ['engine/brakes.ts'], test: 'test/engine/engine.test.ts' },
  skill_instance_not_found: {
    files: ['review/execute-reviewer.ts'],
    test: 'test/engine/tool-failures.test.ts',
  },
  task_auto_paused_repeat_failure: { files: ['engine/frames.ts'], test: 'test/engine/engine.test.ts' },
  unknown: { files: ['engine/worker.ts'], test: 'test/engine/engine.test.ts' },
};

/** The failures module itself, and the diagnostic kind that fails with any class on request. */
const NOT_PRODUCERS = new Set(['core/failures.ts', 'engine/diagnostic.ts']);

function sources(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return sources(join(dir, entry.name), rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

const SRC = join(import.meta.dirname, '../../src');
const text = new Map(sources(SRC).map((rel) => [rel, readFileSync(join(SRC, rel), 'utf8')]));
const quoted = (code: string) => new RegExp(`['"\`]${code}['"\`]`);

describe('run failure classes', () => {
  it('each class is produced or declared not applicable, never both, never neither', () => {
    for (const code of RUN_FAILURE_CODES) {
      const produced = PRODUCERS[code] !== undefined;
      const notApplicable = RUN_FAILURES_NOT_APPLICABLE[code] !== undefined;
      expect(
        produced !== notApplicable,
        `${code}: produced ${produced}, not applicable ${notApplicable}`,
      ).toBe(true);
    }
    expect(
      Object.keys(RUN_FAILURES_NOT_APPLICABLE).every((c) => RUN_FAILURE_CODES.includes(c as RunFailureCode)),
    ).toBe(true);
  });

  it.each(Object.entries(PRODUCERS))('%s is raised where the list says', (code, producer) => {
    for (const file of producer?.files ?? []) {
      expect(text.get(file), `src/${file} is missing`).toBeDefined();
      expect(text.get(file), `src/${file} does not name ${code}`).toMatch(quoted(code));
    }
    expect(RUN_FAILURE_REMEDY[code as RunFailureCode].length).toBeGreaterThan(20);
    const test = readFileSync(join(import.meta.dirname, '../..', producer?.test ?? ''), 'utf8');
    expect(test, `${producer?.test} does not name ${code}`).toMatch(quoted(code));
  });

  it.each(Object.entries(RUN_FAILURES_NOT_APPLICABLE))(
    '%s is raised nowhere, for its stated reason',
    (code, why) => {
      const raisers = [...text].filter(([rel, body]) => !NOT_PRODUCERS.has(rel) && quoted(code).test(body));
      expect(raisers.map(([rel]) => rel)).toEqual([]);
      expect(why?.length).toBeGreaterThan(40);
    },
  );
});
