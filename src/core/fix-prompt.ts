/**
 * The structured fix prompt carried in the check's `output.text`: what a coding agent needs to
 * follow the autofix contract (triage each finding, fix or `wontfix:` it, one round comment,
 * one commit, at most two rounds).
 */
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
export const MAX_AUTOFIX_ROUNDS = 2;

export function fixPrompt(input: { headSha: string; findings: PromptFinding[] }): string {
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
    '',
    '## What to do',
    '1. For each finding below, decide whether it is right.',
    '   - Right: fix it, and reply on its thread with a short note of the fix.',
    '   - Wrong: reply on its thread `wontfix: <reason>`; it is dismissed and the check recomputes.',
    '2. Post one comment on the pull request titled "autofix round N" listing the fixed and the',
    '   wontfix findings (by id), with a line `verified: <the commands you ran>`.',
    '3. Push all fixes as one commit whose message includes `[autofix]`.',
    `4. At most ${MAX_AUTOFIX_ROUNDS} rounds. If the check's deadline passed, proceed without svc.`,
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
