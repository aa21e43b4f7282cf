/**
 * The structured fix prompt carried in the check's `output.text`: what a coding agent needs to
 * follow the autofix contract (triage each finding, fix or `wontfix:` it, one round comment,
 * one commit, at most two rounds). It says which round this is, and when the rounds are spent it
 * tells the agent to stop and ask a person (./autofix-rounds.ts counts them).
 */
import { type AutofixRounds, MAX_AUTOFIX_ROUNDS } from './autofix-rounds';
import type { Severity } from './review';

export interface PromptFinding {
  id: string;
  severity: Severity;
  path: string;
  line: number;
  endLine: number;
  title: string;
  body: string;
  rule: string;
  suggestion: string | null;
}

/** GitHub rejects check output text over 65,535 characters; stay clear of it. */
export const MAX_FIX_PROMPT_CHARS = 60_000;

/** The steps of one round; `round` is the number its comment is titled with. */
function roundSteps(round: string, limit: number): string[] {
  return [
    '## What to do',
    '1. For each finding below, decide whether it is right.',
    '   - Right: fix it, and reply on its thread with a short note of the fix.',
    '   - Wrong: reply on its thread `wontfix: <reason>`; it is dismissed and the check recomputes.',
    `2. Post one comment on the pull request titled "autofix round ${round}" listing the fixed and the`,
    '   wontfix findings (by id), with a line `verified: <the commands you ran>`.',
    '3. Push all fixes as one commit whose message includes `[autofix]`.',
    `4. At most ${limit} rounds. If the check's deadline passed, proceed without svc.`,
  ];
}

/** Which round this is, or the stop when none is left; with no count, the steps as the contract says them. */
function roundSection(rounds: AutofixRounds | null | undefined): string[] {
  if (!rounds) return ['', ...roundSteps('N', MAX_AUTOFIX_ROUNDS)];
  if (rounds.limitReached)
    return [
      `Autofix round: limit reached (${rounds.done} of ${rounds.limit} rounds done)`,
      '',
      '## Stop',
      'The autofix limit is reached. Do not push another `[autofix]` commit or post another round comment.',
      'Stop here and ask a person to decide on the open findings below.',
    ];
  return [
    `Autofix round: ${rounds.next} of ${rounds.limit}`,
    '',
    ...roundSteps(String(rounds.next), rounds.limit),
    rounds.next === rounds.limit
      ? '   This is the last round: if findings remain open after it, stop and ask a person.'
      : `   After round ${rounds.limit}, stop and ask a person.`,
  ];
}

export function fixPrompt(input: {
  headSha: string;
  findings: PromptFinding[];
  /** The rounds counted on the pull request; null when they could not be read. */
  rounds?: AutofixRounds | null;
}): string {
  const open = [...input.findings].sort(
    (a, b) => a.severity.localeCompare(b.severity) || a.path.localeCompare(b.path) || a.line - b.line,
  );
  if (open.length === 0) return `No open findings at ${input.headSha}. Nothing to fix.`;
  const count = (s: Severity) => open.filter((f) => f.severity === s).length;
  const head = [
    '# svc fix prompt',
    '',
    `Commit: ${input.headSha}`,
    `Open findings: ${open.length} (P0 ${count('P0')}, P1 ${count('P1')}, P2 ${count('P2')})`,
    ...roundSection(input.rounds),
    '',
    '## Findings',
  ];
  const sections: string[] = [];
  let length = head.join('\n').length;
  let omitted = 0;
  for (const [i, f] of open.entries()) {
    const where = f.endLine > f.line ? `${f.path}:${f.line}-${f.endLine}` : `${f.path}:${f.line}`;
    const section = [
      '',
      `### ${i + 1}. [${f.severity}] ${where} — ${f.title}`,
      `finding: ${f.id} · rule: ${f.rule}`,
      '',
      f.body.trim(),
      ...(f.suggestion ? ['', 'Suggested replacement:', '```', f.suggestion, '```'] : []),
    ].join('\n');
    // Keep room for the joining newline and the closing note about omitted findings.
    if (length + section.length + 1 > MAX_FIX_PROMPT_CHARS - 200) {
      omitted = open.length - i;
      break;
    }
    sections.push(section);
    length += section.length + 1;
  }
  if (omitted > 0)
    sections.push(
      '',
      `(${omitted} more finding(s) omitted for length; GET /api/v1/findings?status=open lists all.)`,
    );
  return [...head, ...sections].join('\n');
}
