/**
 * Counting autofix rounds from a pull request's commits and comments, and what the fix prompt
 * says with the count: which round this is, or that the agent must stop and ask a person.
 */
import { describe, expect, it } from 'vitest';
import { countAutofixRounds, roundOfComment, roundsSentence } from '../../src/core/autofix-rounds';
import { fixPrompt, type PromptFinding } from '../../src/core/fix-prompt';

const finding: PromptFinding = {
  id: 'fnd_1',
  severity: 'P0',
  path: 'src/run.js',
  line: 2,
  endLine: 2,
  title: 'eval of request input',
  body: 'Code injection.',
  rule: 'security/code-injection',
  suggestion: null,
};
const commit = (sha: string, message: string) => ({ sha, message });

describe('autofix rounds', () => {
  it('reads a round comment by its title line, in plain text, a heading or bold', () => {
    expect(roundOfComment('autofix round 1\n- fixed fnd_1\nverified: npm test')).toBe(1);
    expect(roundOfComment('\n## Autofix round 2\n')).toBe(2);
    expect(roundOfComment('**autofix round 2** done')).toBe(2);
    expect(roundOfComment('I will do autofix round 3 later')).toBeNull();
    expect(roundOfComment('## svc review\nautofix round 1')).toBeNull();
  });

  it('counts the more of [autofix] commits and the highest round comment', () => {
    const none = countAutofixRounds([commit('a1', 'Add the runner')], []);
    expect(none).toMatchObject({ done: 0, next: 1, limit: 2, limitReached: false, commits: [] });

    const one = countAutofixRounds(
      [commit('a1', 'Add the runner'), commit('b2', 'Fix eval [autofix]\n\nround 1')],
      [{ body: 'autofix round 1\nverified: npm test' }, { body: '@service review status' }],
    );
    expect(one).toMatchObject({ done: 1, next: 2, limitReached: false, commits: ['b2'], comments: [1] });

    // The comment posted, its commit not pushed yet: the round is spent all the same.
    expect(countAutofixRounds([], [{ body: 'autofix round 1' }])).toMatchObject({ done: 1, next: 2 });

    const two = countAutofixRounds(
      [commit('b2', '[autofix] eval'), commit('c3', '[AUTOFIX] log')],
      [{ body: 'autofix round 1' }, { body: 'autofix round 2' }],
    );
    expect(two).toMatchObject({ done: 2, next: null, limitReached: true, commits: ['b2', 'c3'] });
    expect(roundsSentence(two)).toMatch(/^Autofix limit reached: 2 of 2 rounds done\. .*ask a person/);
    expect(roundsSentence(one)).toBe('Autofix: round 2 of 2 is next (1 done).');
  });

  it("says in the fix prompt which round this is, and tells the agent to stop once they're spent", () => {
    const first = fixPrompt({ headSha: 'abc', findings: [finding], rounds: countAutofixRounds([], []) });
    expect(first).toContain('Autofix round: 1 of 2');
    expect(first).toContain('titled "autofix round 1"');
    expect(first).toContain('After round 2, stop and ask a person.');
    expect(first).toContain('### 1. [P0] src/run.js:2');

    const last = fixPrompt({
      headSha: 'abc',
      findings: [finding],
      rounds: countAutofixRounds([commit('b2', '[autofix] eval')], [{ body: 'autofix round 1' }]),
    });
    expect(last).toContain('Autofix round: 2 of 2');
    expect(last).toContain('titled "autofix round 2"');
    expect(last).toContain('This is the last round');

    const spent = fixPrompt({
      headSha: 'abc',
      findings: [finding],
      rounds: countAutofixRounds([commit('b2', '[autofix] a'), commit('c3', '[autofix] b')], []),
    });
    expect(spent).toContain('Autofix round: limit reached (2 of 2 rounds done)');
    expect(spent).toContain('## Stop');
    expect(spent).toContain('ask a person to decide on the open findings below');
    expect(spent).not.toContain('## What to do');
    expect(spent).toContain('### 1. [P0] src/run.js:2');

    // Rounds the code host could not tell: the contract's steps, with no round claimed.
    const unknown = fixPrompt({ headSha: 'abc', findings: [finding], rounds: null });
    expect(unknown).toContain('titled "autofix round N"');
    expect(unknown).not.toContain('Autofix round:');
  });
});
