/** Findings for a terminal: grouped by file, most severe first, with where and why. */
import type { findingRecord } from './service';

type Finding = ReturnType<typeof findingRecord>;

export function formatText(findings: Finding[], options: { color: boolean }): string {
  const paint = (code: string, s: string) => (options.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const badge = { P0: paint('1;31', 'P0'), P1: paint('33', 'P1'), P2: paint('36', 'P2') } as const;
  if (findings.length === 0) return 'No findings.\n';
  const byFile = new Map<string, Finding[]>();
  for (const f of findings) byFile.set(f.path, [...(byFile.get(f.path) ?? []), f]);
  const lines: string[] = [];
  for (const [path, list] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(paint('1', path));
    for (const f of list.sort((a, b) => a.severity.localeCompare(b.severity) || a.line - b.line)) {
      const where = f.end_line > f.line ? `${f.line}-${f.end_line}` : `${f.line}`;
      const status = f.status === 'open' ? '' : ` (${f.status})`;
      lines.push(
        `  ${badge[f.severity]} ${where}: ${f.title}${status}  [${f.rule}; ${f.reviewers.join(', ')}]`,
      );
      for (const bodyLine of f.body.split('\n')) lines.push(`       ${bodyLine}`);
    }
    lines.push('');
  }
  const count = (s: string) => findings.filter((f) => f.severity === s && f.status === 'open').length;
  lines.push(`${findings.length} finding(s): ${count('P0')} P0, ${count('P1')} P1, ${count('P2')} P2 open`);
  return `${lines.join('\n')}\n`;
}
